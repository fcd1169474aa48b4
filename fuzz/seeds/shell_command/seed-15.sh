cat <<-EOF > out.txt
	line $HOME
	EOF