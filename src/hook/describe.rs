//! How a tool call is put to the person: the question, the Markdown context (which the
//! notifications and the plain page show), and the `approval` object the approval page reads.

use serde_json::{Map, Value, json};

use super::call::{Action, ToolCall};

pub use crate::domain::approval::{ALLOW, ALLOW_SESSION, DENY};
use crate::domain::approval::{size_in_words as size, unified_diff};

/// Longest command or path quoted in the question.
const QUESTION_QUOTE_CHARS: usize = 300;
/// Most of a written file or a diff shown in the context.
const CONTEXT_BODY_CHARS: usize = 8_000;

/// The question: what the agent wants, in one line.
pub fn question(call: &ToolCall) -> String {
    let who = call.harness.title();
    match call.action() {
        Action::Shell { command } => format!("{who} wants to run: {}", short(command)),
        Action::Write { path, content } => format!(
            "{who} wants to write {} ({})",
            short(path),
            size(content.len())
        ),
        Action::Edit { path, .. } => match path {
            Some(p) => format!("{who} wants to edit {}", short(p)),
            None => format!("{who} wants to edit a file"),
        },
        Action::Patch { .. } => format!("{who} wants to apply a patch"),
        Action::Fetch { url } => {
            let host = url::Url::parse(url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
                .unwrap_or_else(|| short(url));
            format!("{who} wants to fetch from {host}")
        }
        Action::Other => format!("{who} wants to use {}", short(&call.tool_name)),
    }
}

/// The Markdown under the question: the command, the diff, the file, the URL, and where.
pub fn context_md(call: &ToolCall) -> String {
    let mut md = format!("**Tool:** `{}`\n\n", call.tool_name.replace('`', "'"));
    match call.action() {
        Action::Shell { command } => md.push_str(&fenced("sh", command)),
        Action::Write { path, content } => {
            md.push_str(&format!(
                "**File:** `{}` ({})\n\n",
                path.replace('`', "'"),
                size(content.len())
            ));
            md.push_str(&fenced("", content));
        }
        Action::Edit { path, old, new } => md.push_str(&fenced(
            "diff",
            &unified_diff(path.unwrap_or("file"), old, new),
        )),
        Action::Patch { patch } => md.push_str(&fenced("diff", patch)),
        Action::Fetch { url } => md.push_str(&format!("**URL:** <{url}>\n\n")),
        Action::Other => md.push_str(&fenced(
            "json",
            &serde_json::to_string_pretty(&call.tool_input).unwrap_or_default(),
        )),
    }
    if let Some(cwd) = &call.cwd {
        md.push_str(&format!("**In:** `{}`\n\n", cwd.replace('`', "'")));
    }
    if let Some(session) = &call.session_id {
        md.push_str(&format!("**Session:** `{}`\n\n", session.replace('`', "'")));
    }
    md
}

/// The create request's `approval` object: what the approval page lays out.
pub fn approval(call: &ToolCall, answer_by: &str) -> Value {
    let mut a = Map::new();
    a.insert("harness".into(), json!(call.harness.as_str()));
    a.insert("tool_name".into(), json!(call.tool_name));
    a.insert("tool_input".into(), call.tool_input.clone());
    if let Some(cwd) = &call.cwd {
        a.insert("cwd".into(), json!(cwd));
    }
    if let Some(s) = &call.session_id {
        a.insert("session_id".into(), json!(s));
    }
    a.insert("answer_by".into(), json!(answer_by));
    Value::Object(a)
}

/// A fenced code block long enough that no run of backticks inside can close it.
fn fenced(lang: &str, body: &str) -> String {
    let body = cut(body, CONTEXT_BODY_CHARS);
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!(
        "{fence}{lang}\n{}\n{fence}\n\n",
        body.trim_end_matches('\n')
    )
}

fn short(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    cut(&one_line, QUESTION_QUOTE_CHARS)
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::call::Harness;

    fn call(tool: &str, input: Value) -> ToolCall {
        ToolCall {
            harness: Harness::Claude,
            event: "PreToolUse".into(),
            tool_name: tool.into(),
            tool_input: input,
            cwd: Some("/home/me/repo".into()),
            session_id: Some("abc".into()),
            tool_use_id: None,
        }
    }

    #[test]
    fn the_question_says_what_will_happen() {
        let c = call("Bash", json!({"command": "rm -rf build/"}));
        assert_eq!(question(&c), "Claude Code wants to run: rm -rf build/");
        let c = call(
            "Write",
            json!({"file_path": "/r/a.txt", "content": "x".repeat(2048)}),
        );
        assert_eq!(
            question(&c),
            "Claude Code wants to write /r/a.txt (2.0 KiB)"
        );
        let c = call("WebFetch", json!({"url": "https://api.example.com/v1?q=1"}));
        assert_eq!(
            question(&c),
            "Claude Code wants to fetch from api.example.com"
        );
    }

    #[test]
    fn an_edit_is_shown_as_a_diff_and_backticks_cannot_break_out() {
        let c = call(
            "Edit",
            json!({"file_path": "/r/a.rs", "old_string": "let a = 1;", "new_string": "let a = 2;"}),
        );
        let md = context_md(&c);
        assert!(md.contains("```diff\n--- a//r/a.rs"), "{md}");
        assert!(md.contains("-let a = 1;\n+let a = 2;"), "{md}");
        let c = call("Bash", json!({"command": "echo ```\nrm x"}));
        assert!(context_md(&c).contains("````sh\n"));
    }
}
