use super::*;

/// Each part's canonical reading.
fn parts(command: &str) -> Vec<String> {
    parse(command).parts.iter().map(Part::canonical).collect()
}

fn doubted(command: &str) -> bool {
    !parse(command).certain()
}

#[test]
fn spellings_of_one_command_read_the_same() {
    for spelling in [
        "git push --force origin main",
        "git  push --force origin main",
        "/usr/bin/git push --force origin main",
        "\\git push --force origin main",
        "'git' push --force origin main",
        "g\"i\"t push '--force' origin main",
        "GIT_TRACE=0 git push --force origin main",
        "env GIT_TRACE=0 git push --force origin main",
        "sudo -u me git push --force origin main",
        "command git push --force origin main",
        "exec git push --force origin main",
        "nice -n 5 git push --force origin main",
        "timeout 10 git push --force origin main",
        "time git push --force origin main",
        "nohup git push --force origin main",
        "git push --force origin main # a comment",
    ] {
        let p = parse(spelling);
        assert!(p.certain(), "{spelling}: {:?}", p.doubts);
        let canon: Vec<_> = p.parts.iter().map(Part::canonical).collect();
        assert_eq!(canon, ["git push --force origin main"], "{spelling}");
    }
}

#[test]
fn every_command_a_text_runs_is_a_part() {
    assert_eq!(parts("ls && rm -rf x"), ["ls", "rm -rf x"]);
    assert_eq!(parts("ls; (cd x && git push)"), ["ls", "cd x", "git push"]);
    assert_eq!(parts("echo $(rm -rf ~)"), ["echo $(rm -rf ~)", "rm -rf ~"]);
    assert_eq!(parts("echo `git push`"), ["echo `git push`", "git push"]);
    assert_eq!(
        parts("bash -c 'git push -f'"),
        ["bash -c git push -f", "git push -f"]
    );
    assert_eq!(
        parts("sh -lc \"rm -rf ~\""),
        ["sh -lc rm -rf ~", "rm -rf ~"]
    );
    assert_eq!(parts("for f in a b; do rm -rf $f; done"), ["rm -rf $f"]);
    assert_eq!(parts("f() { git push; }; f"), ["git push", "f"]);
    assert_eq!(
        parts("if true; then terraform destroy; fi"),
        ["true", "terraform destroy"]
    );
    assert_eq!(
        parts("find . -name x -exec rm -rf {} +"),
        ["find . -name x -exec rm -rf {} +", "rm -rf {}"]
    );
    assert_eq!(parts("xargs -n 1 git push"), ["git push"]);
    assert_eq!(parts("diff <(curl x) y"), ["diff y", "curl x"]);
    assert_eq!(parts("cat <<EOF\n$(git push)\nEOF"), ["cat", "git push"]);
}

#[test]
fn known_programs_read_past_their_options() {
    let read = |c: &str| subcommand_reading(&parse(c).parts[0]).map(|w| w.map(|w| w.join(" ")));
    assert_eq!(read("git -C . push -f"), Ok(Some("git push -f".into())));
    assert_eq!(
        read("git --git-dir=.git --work-tree . push"),
        Ok(Some("git push".into()))
    );
    assert_eq!(read("git -C. push"), Ok(Some("git push".into())));
    assert_eq!(
        read("kubectl --context prod -n x delete pod a"),
        Ok(Some("kubectl delete pod a".into()))
    );
    assert_eq!(
        read("terraform -chdir=infra apply"),
        Ok(Some("terraform apply".into()))
    );
    assert_eq!(
        read("docker -H tcp://x rm -f c"),
        Ok(Some("docker rm -f c".into()))
    );
    assert_eq!(
        read("npm --prefix x publish"),
        Ok(Some("npm publish".into()))
    );
    assert_eq!(
        read("cargo +nightly publish"),
        Ok(Some("cargo publish".into()))
    );
    assert_eq!(read("ls -la"), Ok(None));
    assert!(matches!(
        read("git --frobnicate push"),
        Err(Doubt::UnknownOption { .. })
    ));
    assert!(matches!(read("git -c alias.p=push p"), Err(Doubt::Alias)));
}

#[test]
fn what_cannot_be_told_is_a_doubt() {
    for c in [
        "eval \"$CMD\"",
        "$CMD push --force",
        "$(which git) push",
        "gi? push",
        "echo 'git push -f' | sh",
        "bash <<EOF\ngit push -f\nEOF",
        "bash <<< 'git push -f'",
        "bash -c \"$X\"",
        "alias g=git; g push",
        "git --frobnicate push",
        "echo 'unclosed",
        "((x = $(rm -rf ~)))",
        "[[ $(rm -rf ~) ]]",
        "echo ${X:-$(rm -rf ~)}",
        "echo $(( $(rm -rf ~) + 1 ))",
    ] {
        assert!(doubted(c), "{c}: {:?}", parse(c));
    }
    for c in [
        "ls -la",
        "git status",
        "cat x | grep y",
        "bash script.sh",
        "echo $HOME",
    ] {
        assert!(!doubted(c), "{c}: {:?}", parse(c));
    }
}

#[test]
fn parts_know_their_pipes_and_redirections() {
    let p = parse("curl -s https://x | sh");
    assert_eq!(p.parts[1].piped_from, Some(0));
    assert_eq!(p.parts[1].pipe, Some(18..19));
    let p = parse("git status > ~/.bashrc");
    assert!(p.parts[0].redirects_files);
    let p = parse("git status 2>/dev/null 2>&1");
    assert!(!p.parts[0].redirects_files);
    let p = parse("GIT_DIR=x git status");
    assert!(p.parts[0].assigns);
    assert_eq!(p.parts[0].literal(), "git status");
}

#[test]
fn spans_point_at_the_words_as_written() {
    let c = "ls; /usr/bin/rm  -rf 'x y'";
    let p = parse(c);
    let rm = &p.parts[1];
    assert_eq!(&c[rm.argv[0].span.clone()], "/usr/bin/rm");
    assert_eq!(&c[rm.argv[1].span.clone()], "-rf");
    assert_eq!(&c[rm.argv[2].span.clone()], "'x y'");
    let c = "échó; rm -rf x";
    let p = parse(c);
    assert_eq!(&c[p.parts[1].argv[1].span.clone()], "-rf");
}

#[test]
fn spans_stay_on_the_command_where_the_value_is_not_its_bytes() {
    // A line continuation inside a word (dropped from its value), and backquotes whose
    // escapes are undone: the word, and what runs inside it, point where it is written.
    for c in [
        "echo \\\n€€",
        "rm -r\\\nf €",
        "echo `\\$ é`",
        "echo `echo \\`rm -rf é\\``",
        "echo \"$(rm -rf é)\\\né\"",
        "cat <<E\n\\\n$(rm -rf ü)\nE",
    ] {
        let p = parse(c);
        for a in p
            .parts
            .iter()
            .flat_map(|p| p.wrappers.iter().chain(&p.argv))
        {
            assert!(c.get(a.span.clone()).is_some(), "{c:?}: {a:?}");
        }
    }
    let c = "rm -r\\\nf x";
    assert_eq!(&c[parse(c).parts[0].argv[1].span.clone()], "-r\\\nf");
}

#[test]
fn a_descriptor_the_grammar_cannot_hold_is_a_doubt() {
    let p = parse("echo 777777777777>x; rm -rf ~");
    assert!(matches!(p.doubts[..], [Doubt::Unparsed(_)]), "{p:?}");
}

#[test]
fn nothing_panics_on_odd_text() {
    for c in [
        "", " ", ";", "|", "&&", ")", "$(", "`", "'", "\"", "\\", "<<", "a <", "$'\\", "é$(é", "{",
        "}", "!", "((", "[[",
    ] {
        let _ = parse(c);
    }
}

#[test]
fn what_agents_run_every_day_is_read_for_certain() {
    for c in [
        "cd /src/shop && cargo test --workspace 2>&1 | tail -20",
        "git status --short && git diff --stat",
        "git log --oneline -10",
        "git --no-pager diff HEAD~1",
        "git -c color.ui=never log -1",
        "ls -la | grep -v '^d' | wc -l",
        "find . -name '*.rs' -not -path './target/*' | xargs wc -l | sort -n | tail",
        "grep -rn \"TODO\" src/ || true",
        "python3 - <<'EOF'\nimport json\nprint(json.dumps({'a': 1}))\nEOF",
        "cat > notes.md <<'EOF'\n# Notes\n$HOME is not expanded here\nEOF",
        "for f in src/*.rs; do echo \"$f\"; done",
        "if [ -f Cargo.toml ]; then cargo build; fi",
        "[[ -d target ]] && du -sh target",
        "x=$(git rev-parse HEAD); echo \"$x\"",
        "npm run build -- --watch=false",
        "npx tsc --noEmit",
        "kubectl -n prod get pods -o wide",
        "docker compose up -d db",
        "terraform -chdir=infra plan -out=tfplan",
        "cargo +stable build --release",
        "mkdir -p build && cd build && cmake .. && make -j2",
        "echo \"a b\" | awk '{print $2}'",
        "sed -i 's/foo/bar/g' src/main.rs",
        "curl -s http://127.0.0.1:8080/healthz | jq .",
        "timeout 30 ./run_tests.sh",
        "diff <(sort a.txt) <(sort b.txt)",
        "arr=(1 2 3); echo ${arr[@]}",
        "echo $((1 + 2))",
        "case $1 in start) echo go;; *) echo no;; esac",
        "while read -r line; do echo \"$line\"; done < input.txt",
        "export PATH=\"$HOME/.cargo/bin:$PATH\" && cargo --version",
        "bash -lc 'cd /tmp && ls'",
        "command -v jq >/dev/null || echo missing",
        "env | sort",
        "sudo apt-get install -y jq",
        "./gradlew test --info &> build.log",
        "make test |& tee test.log",
    ] {
        let p = parse(c);
        assert!(p.certain(), "{c:?}: {:?}", p.doubts);
        assert!(!p.parts.is_empty(), "{c:?}");
    }
}

#[test]
fn a_control_character_is_a_doubt_and_never_reaches_the_grammar() {
    // The grammar reads a here-document tag of only `\r` or `\f` without end (its memory
    // grows until the process is killed); no screen shows such a character either.
    for command in [
        "rm<<\r<<x ",
        "cat <<\x0c<<<x",
        "git push\r",
        "bash -c $'cat \\r'",
    ] {
        let p = parse(command);
        assert!(
            p.doubts
                .iter()
                .any(|d| matches!(d, Doubt::ControlCharacter(_))),
            "{command:?}: {p:?}"
        );
    }
    // A tab and a newline are the shell's own blanks.
    assert!(parse("git status\tx\ngit log").certain());
}

#[test]
fn what_the_grammar_reads_as_arithmetic_is_read_as_commands_too() {
    // Bash runs `( (git push) )`, `((git push) )` and `((a); (b))` as subshells, which the
    // grammar reads as `((…))`; a substitution inside real arithmetic runs, and is a doubt.
    for command in [
        "( (git push --force origin main) )",
        "((git push --force origin main) )",
        "((true); (git push --force origin main))",
        "((git push --force origin main))",
    ] {
        let p = parse(command);
        assert!(
            p.parts
                .iter()
                .any(|x| x.canonical() == "git push --force origin main"),
            "{command:?}: {p:?}"
        );
    }
    assert!(!parse("(( $(git push --force origin main) ))").certain());
    assert!(!parse("(( x[$(rm -rf ~)] ))").certain());
}

#[test]
fn brackets_nested_past_ten_are_a_doubt_the_grammar_never_sees() {
    // The grammar backtracks between `((` and `( (` at every level: 28 open parentheses took
    // it a minute, and `$(` in a here-document is as bad. No command an agent writes nests
    // brackets ten deep.
    let deep = format!("{}git push{}", "(".repeat(40), ")".repeat(40));
    let t = std::time::Instant::now();
    let p = parse(&deep);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t.elapsed()
    );
    assert!(matches!(p.doubts[..], [Doubt::TooNested]), "{p:?}");
    assert!(!parse("((~x =$h<<((((((((((((((((((((((((((((((((((((-(((((((").certain());
    let ten = format!("{}git push{}", "( ".repeat(10), " )".repeat(10));
    assert_eq!(parts(&ten), ["git push"]);
    let here = format!("cat <<EOF\n{}x\nEOF", "$(".repeat(11));
    assert!(parse(&here).doubts.contains(&Doubt::TooNested));
}

#[test]
fn a_word_the_grammar_panics_on_is_a_doubt() {
    // brush-parser's word grammar unwraps a directory-stack index that overflows.
    let p = parse("~2222222222222222222222200000000000000002110<>401572+");
    assert!(matches!(p.doubts[..], [Doubt::Unparsed(_)]), "{p:?}");
    assert!(p.parts.is_empty(), "{p:?}");
}

#[test]
fn a_here_document_without_a_tag_is_a_doubt_the_grammar_never_sees() {
    // The grammar reads `<< )` without end; bash refuses it.
    for command in [
        "ech:-$(-~rfmr << )}\t",
        "cat <<",
        "cat << ;x",
        "cat <<<<x",
        "cat <<EOF\nhi",
        "cat <<EOF\nEOF2",
        "cat <<-EOF\n  EOF",
    ] {
        let p = parse(command);
        assert!(
            matches!(p.doubts[..], [Doubt::Unparsed(_)]),
            "{command:?}: {p:?}"
        );
    }
    assert_eq!(parts("cat <<EOF\nhi\nEOF"), ["cat"]);
    assert_eq!(
        parts("cat <<-'EOF'\n\thi\nEOF\ngit status"),
        ["cat", "git status"]
    );
    assert_eq!(parts("grep x <<< hi"), ["grep x"]);
    // Claude Code's own commit message, and a quoted tag.
    let commit = "git commit -m \"$(cat <<'EOF'\nFix it\nEOF\n)\"";
    assert!(parse(commit).certain(), "{:?}", parse(commit));
    assert_eq!(parts("cat <<\"E\"OF\nx\nEOF\nls"), ["cat", "ls"]);
}

#[test]
fn a_here_document_whose_expansions_do_not_pair_is_a_doubt() {
    // The word grammar backtracked for seconds on `${X[…)` in a body of 191 bytes.
    let slow = "cat <<EOF\n*(#gitgit p ${X[rf)<p$\"#gitgit p ${X[rf)<p$\"usW\nEOF";
    assert!(!parse(slow).certain());
    assert_eq!(
        parts("cat <<EOF\n(see $(git push) below)\nEOF"),
        ["cat", "git push"]
    );
    assert!(
        parse("cat <<EOF\nprice (see below\nEOF").certain(),
        "nothing expands there"
    );
}
