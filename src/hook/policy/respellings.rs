//! The gate judges the act, not its spelling: for risky commands under step-up, people and
//! deny rules, generated re-spellings (spaces, quotes, paths, escapes, assignments,
//! wrappers, shells, lists, pipes, substitutions, comments, options that move a subcommand,
//! options in another order) are decided as the plain spelling is, or more strictly, and
//! never so that an allowance could stand for them.

use proptest::prelude::*;
use serde_json::json;

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
                2 => format!("({text})"),
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

fn bash(command: &str) -> ToolCall {
    ToolCall {
        harness: Harness::Claude,
        event: "PreToolUse".into(),
        tool_name: "Bash".into(),
        tool_input: json!({ "command": command }),
        cwd: None,
        project: None,
        session_id: None,
        tool_use_id: None,
    }
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
