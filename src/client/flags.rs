//! The client's flags in the words the user typed them: an `--option` read into a label and
//! a description, a create body checked before it is sent, and the API's field names in a
//! refusal put back as the flags that carry them. A mistake in the command line is a
//! [`UsageError`], which exits `EXIT_USAGE` (64), not the 3 of an error met on the way.

use std::time::Duration;

use serde_json::{Value, json};

use crate::domain::new_decision::{MAX_TTL_SECONDS, MIN_TTL_SECONDS, parse_new_decision};

/// `--option 'LABEL: DESCRIPTION'` as the API's option: a plain label, or `{label,
/// description}`. The first ": " separates them; `\:` writes a colon into the label, so a
/// label holding ": " is written `Plan A\: fast: the quick one`.
pub fn option_value(raw: &str) -> Value {
    let mut label = String::new();
    let mut description = None;
    let mut chars = raw.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if chars.peek().map(|&(_, n)| n) == Some(':') => {
                label.push(':');
                chars.next();
            }
            ':' if chars.peek().map(|&(_, n)| n) == Some(' ') => {
                description = Some(raw[i + 2..].trim());
                break;
            }
            c => label.push(c),
        }
    }
    match description {
        Some(d) if !d.is_empty() => json!({"label": label.trim(), "description": d}),
        _ => json!(label.trim()),
    }
}

/// The flag (or argument) that carries an API field: `ttl_seconds` is `--ttl`,
/// `options[1].label` the second `--option`. `item` names the positional argument (`the
/// question`, `the to-do's text`).
pub fn flag_of(path: &str, item: &str) -> String {
    let head_end = path.find(['.', '[']).unwrap_or(path.len());
    let (head, rest) = path.split_at(head_end);
    let flag = match head {
        "question" => return item.to_string(),
        "options" => {
            // `[1].label` → "--option #2"; a problem of the list itself is "--option".
            let n = rest
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .and_then(|(n, _)| n.parse::<usize>().ok());
            return match n {
                Some(n) => format!("--option #{}", n + 1),
                None => "--option".into(),
            };
        }
        "ttl_seconds" | "ttl_minutes" => "--ttl",
        "context_md" => "--context",
        "schema" | "questions" => "--schema-file",
        "default_outcome" => "--default",
        "escalate_after_s" => "--escalate-after",
        "kind" | "recommended" | "multi" | "yes_label" | "no_label" | "placeholder"
        | "callback_url" | "project" | "notify" | "approvers" | "required" | "escalate_to"
        | "urgent" => return format!("--{}", head.replace('_', "-")),
        _ => return path.to_string(),
    };
    flag.to_string()
}

/// Every problem of a create body, each named by its flag, found without asking the server;
/// empty when it may be sent. `kind` is the `--kind` given (`todo` for `sayso todo`).
pub fn problems(body: &Value, ttl: Option<Duration>, item: &str) -> Vec<String> {
    let mut found = Vec::new();
    let kind = body["kind"].as_str().unwrap_or_default();
    let has = |field: &str| body.get(field).is_some();
    if kind == "choose" && !has("options") {
        found
            .push("--kind choose needs --option LABEL, once for each choice (2 to 20)".to_string());
    }
    if kind != "choose" && has("options") {
        found.push(format!(
            "--option is for --kind choose; this is --kind {kind}"
        ));
    }
    if kind == "form" && !has("schema") && !has("questions") {
        found.push("--kind form needs --schema-file FILE (its fields)".to_string());
    }
    if let Some(ttl) = ttl {
        let secs = ttl.as_secs();
        if secs < MIN_TTL_SECONDS as u64 || secs > MAX_TTL_SECONDS as u64 {
            found.push(format!(
                "--ttl: must be from {MIN_TTL_SECONDS}s to {}d (got {})",
                MAX_TTL_SECONDS / 86_400,
                shown_duration(secs)
            ));
        }
    }
    let said: Vec<String> = found.clone();
    if let Err(issues) = parse_new_decision(body) {
        for issue in issues {
            let flag = flag_of(&issue.path, item);
            // A problem already said above in the flags' own words is not said twice.
            if said.iter().any(|s| s.contains(&flag) && !flag.is_empty()) {
                continue;
            }
            found.push(if issue.path.is_empty() {
                issue.message
            } else {
                format!("{flag}: {}", issue.message)
            });
        }
    }
    found
}

/// A mistake in the command line (a flag, its value, a missing key or server address): the
/// command cannot run as typed, and running it again as typed cannot help.
#[derive(Debug)]
pub struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The command line's mistake `message`, as an error that exits 64.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(message.into()))
}

/// Whether `e` (or what it wraps) is a mistake in the command line.
pub fn is_usage(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| cause.is::<UsageError>())
}

/// The problems as one error: a single one alone, several one a line.
pub fn refusal(problems: Vec<String>) -> anyhow::Error {
    match problems.as_slice() {
        [one] => usage(one.clone()),
        _ => usage(format!(
            "{} problems with the flags:\n  {}",
            problems.len(),
            problems.join("\n  ")
        )),
    }
}

/// `90s`, `5m`, `2h30m`: seconds as they were probably typed.
fn shown_duration(secs: u64) -> String {
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    let mut out = String::new();
    for (n, unit) in [(d, 'd'), (h, 'h'), (m, 'm'), (s, 's')] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    if out.is_empty() { "0s".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_may_carry_a_description() {
        assert_eq!(option_value("Blue"), json!("Blue"));
        assert_eq!(
            option_value("Blue: calm, the default"),
            json!({"label": "Blue", "description": "calm, the default"})
        );
        assert_eq!(
            option_value("Plan A\\: fast: the quick one"),
            json!({"label": "Plan A: fast", "description": "the quick one"})
        );
        // A colon without a space after it is part of the label.
        assert_eq!(option_value("eu-west:1"), json!("eu-west:1"));
        assert_eq!(
            option_value("https://example.com"),
            json!("https://example.com")
        );
        assert_eq!(option_value("A: "), json!("A"));
        assert_eq!(
            option_value("A: see: the notes"),
            json!({"label": "A", "description": "see: the notes"})
        );
    }

    #[test]
    fn api_fields_are_named_by_their_flags() {
        assert_eq!(flag_of("ttl_seconds", "the question"), "--ttl");
        assert_eq!(flag_of("options", "the question"), "--option");
        assert_eq!(flag_of("options[1].label", "the question"), "--option #2");
        assert_eq!(
            flag_of("escalate_after_s", "the question"),
            "--escalate-after"
        );
        assert_eq!(flag_of("yes_label", "the question"), "--yes-label");
        assert_eq!(flag_of("question", "the to-do's text"), "the to-do's text");
        assert_eq!(flag_of("schema.properties", "q"), "--schema-file");
        assert_eq!(flag_of("approvers[0]", "q"), "--approvers");
    }

    #[test]
    fn problems_are_found_before_sending() {
        let body = json!({"question": "Which?", "kind": "choose"});
        let p = problems(&body, None, "the question");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("--kind choose needs --option LABEL"),
            "{p:?}"
        );
        let body = json!({"question": "Q", "kind": "bool", "ttl_seconds": 5});
        let p = problems(&body, Some(Duration::from_secs(5)), "the question");
        assert_eq!(p, ["--ttl: must be from 10s to 30d (got 5s)"]);
        let body = json!({"question": "Which?", "kind": "choose", "options": ["A", "A"]});
        let p = problems(&body, None, "the question");
        assert!(p[0].starts_with("--option #2: duplicate label"), "{p:?}");
        let body = json!({"question": "Q?", "kind": "bool"});
        assert!(problems(&body, None, "the question").is_empty());
    }
}
