ccat <<EOF
F
$((<ÿÿEF
$(("$[] <<EOF
[[$((<EOF
$[a$UOF
$(>|t p1&hOF
$[aÿEF
$(("$[] <<EOF
[[$((<EOF
$[a$UOF
$(>|t p1&hOF
$[a}$#h}$#h
EOF