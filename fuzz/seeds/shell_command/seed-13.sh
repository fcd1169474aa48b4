cat <<EOF
$(git push)
EOF