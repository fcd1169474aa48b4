//! The gate judges the act, not its spelling: for risky commands under step-up, people and
//! deny rules, generated re-spellings (spaces, quotes, paths, escapes, assignments,
//! wrappers, shells, lists, pipes, substitutions, comments, options that move a subcommand,
//! options in another order) are decided as the plain spelling is, or more strictly, and
//! never so that an allowance could stand for them.

use proptest::prelude::*;

use super::tests::bash;
use super::*;

const POLICY: &str = r#"{"rules": [
    {"tool": "Bash", "command": "git push*", "decision": "ask", "step_up": "passkey"},
    {"tool": "Bash", "command": "terraform apply*", "decision": "ask", "step_up": "passkey"},
    {"tool": "Bash", "command": "kubectl delete*", "decision": "ask", "approvers": ["ana", "ben"], "required": 2},
    {"tool": "Bash", "command": "npm publish*", "decision": "ask", "approvers": ["ana"]},
    {"tool": "Bash", "command": "rm -rf*", "decision": "deny"},
    {"tool": "Bash", "command": "docker system prune*", "decision": "deny"},
    {"tool": "Bash", "command": "ls*", "decision": "allow"}
]}"#;

/// Risky commands, as words: each falls under a step-up, people or deny rule above.
const CORPUS: &[&[&str]] = &[
    &["git", "push", "--force", "origin", "main"],
    &["terraform", "apply", "-auto-approve"],
    &["kubectl", "delete", "namespace", "prod"],
    &["npm", "publish", "--access", "public"],
    &["rm", "-rf", "~/important"],
    &["docker", "system", "prune", "-af"],
];

/// One way to write the same command otherwise.
#[derive(Debug, Clone)]
enum Respell {
    /// More blanks between words.
    Spaces(u8),
    /// A word quoted or escaped another way.
    Quote(usize, u8),
    /// The program by a path, or escaped.
    Program(u8),
    /// An assignment before the command.
    Assign,
    /// A wrapper that runs it.
    Wrapper(u8),
    /// An option that moves a known program's subcommand.
    Global,
    /// Short options split or moved to the end.
    Reorder(u8),
    /// A trailing comment.
    Comment,
    /// Inside a list, a pipeline, a group, a subshell, a loop or a conditional.
    Compound(u8),
    /// Handed to a shell as a string.
    Shell(u8),
    /// Run inside a substitution.
    Substitute(u8),
}

fn respell() -> impl Strategy<Value = Respell> {
    prop_oneof![
        (1u8..4).prop_map(Respell::Spaces),
        (0usize..6, 0u8..6).prop_map(|(w, k)| Respell::Quote(w, k)),
        (0u8..4).prop_map(Respell::Program),
        Just(Respell::Assign),
        (0u8..10).prop_map(Respell::Wrapper),
        Just(Respell::Global),
        (0u8..2).prop_map(Respell::Reorder),
        Just(Respell::Comment),
        (0u8..8).prop_map(Respell::Compound),
        (0u8..3).prop_map(Respell::Shell),
        (0u8..3).prop_map(Respell::Substitute),
    ]
}

/// The command written with `changes`: word-level changes first, then those that wrap the
/// whole text.
fn written(words: &[&str], changes: &[Respell]) -> String {
    let mut words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    let mut prefix: Vec<String> = Vec::new();
    let mut gap = " ".to_string();
    for c in changes {
        match c {
            Respell::Spaces(n) => gap = " ".repeat(*n as usize + 1),
            Respell::Quote(at, kind) => {
                let at = at % words.len();
                let w = words[at].clone();
                if w.starts_with('~') || w.contains(['\'', '"', '\\', ' ']) {
                    // A quoted tilde is not the home folder, and quoting a quoted word again
                    // writes another word.
                    continue;
                }
                words[at] = match kind {
                    0 => format!("'{w}'"),
                    1 => format!("\"{w}\""),
                    2 => format!("\\{w}"),
                    3 if w.len() > 1 => format!("{}''{}", &w[..1], &w[1..]),
                    4 if w.len() > 1 => format!("{}\"\"{}", &w[..1], &w[1..]),
                    _ => format!(
                        "$'{}'",
                        w.bytes().map(|b| format!("\\x{b:02x}")).collect::<String>()
                    ),
                };
            }
            Respell::Program(kind) => {
                let p = words[0].trim_matches(['\'', '"', '\\']).to_string();
                words[0] = match kind {
                    0 => format!("/usr/bin/{p}"),
                    1 => format!("/usr/local/bin/{p}"),
                    2 => format!("\\{p}"),
                    _ => format!("/bin/../usr/bin/{p}"),
                };
            }
            Respell::Assign => prefix.push("GIT_TRACE=0".into()),
            Respell::Wrapper(kind) => prefix.push(
                [
                    "env",
                    "env -i PATH=/usr/bin",
                    "command",
                    "nice -n 5",
                    "timeout 60",
                    "time",
                    "nohup",
                    "sudo -u root",
                    "stdbuf -o0",
                    "xargs",
                ][*kind as usize % 10]
                    .into(),
            ),
            Respell::Global => {
                let global = match words[0].trim_matches(['\'', '"', '\\']) {
                    "git" => "-C .",
                    "kubectl" => "--context prod",
                    "terraform" => "-chdir=.",
                    "docker" => "--context default",
                    "npm" => "--prefix .",
                    _ => continue,
                };
                words.insert(1, global.into());
            }
            Respell::Reorder(kind) => {
                let Some(at) = words.iter().position(|w| {
                    w.len() > 2
                        && w.starts_with('-')
                        && w[1..].chars().all(|c| c.is_ascii_alphabetic())
                }) else {
                    continue;
                };
                let w = words.remove(at);
                let flags: Vec<String> = w[1..].chars().rev().map(|c| format!("-{c}")).collect();
                if *kind == 0 {
                    words.splice(at..at, flags);
                } else {
                    words.push(format!("-{}", w[1..].chars().rev().collect::<String>()));
                }
            }
            _ => {}
        }
    }
    let mut text = prefix
        .into_iter()
        .chain(words)
        .collect::<Vec<_>>()
        .join(&gap);
    for c in changes {
        text = match c {
            Respell::Comment => format!("{text} # {}", "nothing to see"),
            Respell::Compound(kind) => match kind {
                0 => format!("true && {text}"),
                1 => format!("{text}; true"),
                // With spaces: two subshells written `((…))` are bash's arithmetic command,
                // which runs nothing.
                2 => format!("( {text} )"),
                3 => format!("{{ {text}; }}"),
                4 => format!("echo y | {text}"),
                5 => format!("if true; then {text}; fi"),
                6 => format!("for i in 1; do {text}; done"),
                _ => format!("ls || {text}"),
            },
            Respell::Shell(kind) => {
                let quoted = if text.contains('\'') {
                    let mut q = String::from('"');
                    for ch in text.chars() {
                        if matches!(ch, '"' | '$' | '`' | '\\') {
                            q.push('\\');
                        }
                        q.push(ch);
                    }
                    q.push('"');
                    q
                } else {
                    format!("'{text}'")
                };
                match kind {
                    0 => format!("bash -c {quoted}"),
                    1 => format!("sh -c {quoted}"),
                    _ => format!("bash -lc {quoted}"),
                }
            }
            Respell::Substitute(kind) => match kind {
                // A space after `$(`: `$((` opens arithmetic.
                0 => format!("echo $( {text} )"),
                1 => format!("x=$( {text} )"),
                _ => format!("cat <<EOF\n$( {text} )\nEOF"),
            },
            _ => text,
        };
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_respelled_command_is_decided_as_strictly(
        which in 0usize..CORPUS.len(),
        changes in prop::collection::vec(respell(), 1..4),
    ) {
        let policy = Policy::parse(POLICY).unwrap();
        let plain = CORPUS[which].join(" ");
        let respelled = written(CORPUS[which], &changes);
        let base = policy.decide(&bash(&plain));
        prop_assert!(base.strictness() >= 2, "{plain} is under a strict rule");
        let r = policy.decide(&bash(&respelled));
        prop_assert!(
            r.strictness() >= base.strictness(),
            "{respelled:?} was decided {:?} ({}), the plain {plain:?} {:?}",
            r.decision, r.why, base.decision
        );
        prop_assert!(
            r.decision == Rule::Deny || !r.session_answer_allowed(),
            "an allowance could stand for {respelled:?}: {}", r.why
        );
    }
}

#[test]
fn each_command_has_many_spellings() {
    // The generator is not idle: every command gets at least 20 distinct spellings.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = prop::collection::vec(respell(), 1..4);
    for words in CORPUS {
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let changes = strategy.new_tree(&mut runner).unwrap().current();
            seen.insert(written(words, &changes));
        }
        seen.remove(&words.join(" "));
        assert!(seen.len() >= 20, "{words:?}: {}", seen.len());
    }
}

#[test]
fn the_spellings_security_md_lists_meet_their_rules() {
    let policy = Policy::parse(
        r#"{"rules": [
            {"command": "git push*", "decision": "ask", "step_up": "passkey"},
            {"command": "terraform apply*", "decision": "ask", "step_up": "passkey"},
            {"command": "kubectl delete*", "decision": "ask", "step_up": "passkey"},
            {"command": "docker system prune*", "decision": "ask", "step_up": "passkey"},
            {"command": "npm publish*", "decision": "ask", "step_up": "passkey"},
            {"command": "cargo publish*", "decision": "ask", "step_up": "passkey"},
            {"command": "rm -rf*", "decision": "deny"}
        ]}"#,
    )
    .unwrap();
    let step_up = [
        "git  push --force origin main",
        "terraform  apply -auto-approve",
        "/usr/bin/git push --force",
        "\\git push --force",
        "'git' push --force",
        "g\"i\"t push --force",
        "$'\\x67it' push --force",
        "GIT_TRACE=0 git push --force",
        "env A=1 git push",
        "sudo -u root git push",
        "command git push",
        "exec git push",
        "nice -n 5 git push",
        "timeout 60 git push",
        "time git push",
        "nohup git push",
        "stdbuf -o0 git push",
        "xargs git push",
        "watch git push",
        "flock /tmp/l git push",
        "git -C . push --force",
        "git --git-dir=.git --no-pager push",
        "kubectl --context prod delete ns x",
        "terraform -chdir=infra apply",
        "docker -H x system prune",
        "npm --prefix . publish",
        "cargo +nightly publish",
        "git push origin +main",
        "git push -f",
        "ls && git push",
        "ls; git push",
        "ls || git push",
        "echo y | git push",
        "(git push)",
        "{ git push; }",
        "if true; then git push; fi",
        "for i in 1; do git push; done",
        "f() { git push; }",
        "echo $(git push)",
        "echo `git push`",
        "x=$(git push)",
        "diff <(git push) y",
        "cat <<EOF\n$(git push)\nEOF",
        "bash -c 'git push'",
        "sh -lc \"git push\"",
        "git push --force origin main # a comment",
        "git $(echo push) --force",
    ];
    for c in step_up {
        let r = policy.decide(&bash(c));
        assert!(r.strictness() >= 2, "{c:?}: {:?} {}", r.decision, r.why);
        assert!(!r.session_answer_allowed(), "{c:?}");
    }
    let deny = [
        "rm  -rf ~/important",
        "rm -fr x",
        "rm -r -f x",
        "rm --recursive --force x",
        "rm x -rf",
        "find . -exec rm -rf {} +",
        "rm $FLAGS x",
        "eval \"$CMD\"",
        "$CMD push",
        "$(which git) push",
        "gi? push",
        "echo 'git push' | sh",
        "bash <<EOF\ngit push\nEOF",
        "bash -c \"$X\"",
        "alias g=git; g push",
        "git -c alias.p=push p",
        "git --frobnicate push",
        "echo ${X:-$(git push)}",
        "echo 'unclosed",
    ];
    for c in deny {
        let r = policy.decide(&bash(c));
        assert_eq!(r.decision, Rule::Deny, "{c:?}: {}", r.why);
    }
}
