ca t<<EOF
)$( Ô<EOF
$(%(±cxl~+
$((<EEªO pushâ€¨${a,b<EOF
$((<EÅUO pushâ€¨${a#‡*(EOF
$mt <<EOF
$((<EEªO pushâ€¨${a,b<EOF
$((<EÅUO pushâ€¨${a#‡bVVVVVVVVV ô-)
ap.sh,EOF\}
EOF