bash <<'EOF'
git push -f
EOF