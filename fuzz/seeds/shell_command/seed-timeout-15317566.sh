cat <<EOF
*(#gitgit p ${X[rf)<p$"#gitgit p ${X[rf)<p$"usWcat <<J
$(gEOF
*(#gitgit 0 ${X[rf ~)ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿct <†<ÿ
EOFõÿÿÿ!ct <†<ÿ
EOF