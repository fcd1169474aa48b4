//! How a coding agent's tool call is put to the person, the same from `sayso hook` and
//! from the MCP `approve` tool: the question, the Markdown context (which notifications and
//! mails show), and the create request of the approval.

use serde_json::{Map, Value, json};

use crate::domain::approval::{
    ALLOW, ALLOW_SESSION, Action, DENY, action_of, size_in_words as size, unified_diff,
};

/// Longest command or path quoted in the question.
const QUESTION_QUOTE_CHARS: usize = 300;
/// Most of a written file or a diff shown in the context.
const CONTEXT_BODY_CHARS: usize = 8_000;

/// One tool call to approve.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallRef<'a> {
    /// `claude`, `codex`, `gemini`, `copilot`, `cursor`, …
    pub harness: &'a str,
    pub tool_name: &'a str,
    /// The tool's arguments, an object.
    pub tool_input: &'a Value,
    pub cwd: Option<&'a str>,
    /// The project it is filed under (the hook's: the project root's absolute path).
    pub project: Option<&'a str>,
    pub session_id: Option<&'a str>,
    pub tool_use_id: Option<&'a str>,
    /// The agent runs a changed input handed back, so the person may edit the command.
    pub editable: bool,
}

/// The agent's own name, as the person knows it.
pub fn agent_name(harness: &str) -> &str {
    match harness {
        "claude" => "Claude Code",
        "codex" => "Codex",
        "gemini" => "Gemini CLI",
        "copilot" => "Copilot CLI",
        "cursor" => "Cursor",
        "pi" => "pi",
        other => other,
    }
}

/// The question: what the agent wants, in one line.
pub fn question(call: &ToolCallRef) -> String {
    let who = agent_name(call.harness);
    match action_of(call.tool_name, call.tool_input) {
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
        Action::Other => format!("{who} wants to use {}", short(call.tool_name)),
    }
}

/// The Markdown under the question: the command, the diff, the file, the URL, and where.
pub fn context_md(call: &ToolCallRef) -> String {
    let mut md = format!("**Tool:** `{}`\n\n", call.tool_name.replace('`', "'"));
    match action_of(call.tool_name, call.tool_input) {
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
            &serde_json::to_string_pretty(call.tool_input).unwrap_or_default(),
        )),
    }
    if let Some(cwd) = call.cwd {
        md.push_str(&format!("**In:** `{}`\n\n", cwd.replace('`', "'")));
    }
    if let Some(session) = call.session_id {
        md.push_str(&format!("**Session:** `{}`\n\n", session.replace('`', "'")));
    }
    md
}

/// The create request of an approval: a `choose` of the approval answers ("for this
/// session" only with a session), its `approval` object, filed under the call's project
/// (which scopes its allowances), with `metadata.hook` naming the call so a later call of
/// the same session can find an earlier "Allow for this session".
pub fn create_body(call: &ToolCallRef, answer_by: &str, ttl_seconds: u64) -> Value {
    let mut options = vec![ALLOW, DENY];
    if call.session_id.is_some() {
        options.push(ALLOW_SESSION);
    }
    let mut approval = Map::new();
    approval.insert("harness".into(), json!(call.harness));
    approval.insert("tool_name".into(), json!(call.tool_name));
    approval.insert("tool_input".into(), call.tool_input.clone());
    if let Some(cwd) = call.cwd {
        approval.insert("cwd".into(), json!(cwd));
    }
    if let Some(s) = call.session_id {
        approval.insert("session_id".into(), json!(s));
    }
    approval.insert("answer_by".into(), json!(answer_by));
    let is_shell = matches!(
        action_of(call.tool_name, call.tool_input),
        Action::Shell { .. }
    );
    approval.insert("editable".into(), json!(call.editable && is_shell));
    let mut body = json!({
        "question": question(call),
        "kind": "choose",
        "options": options,
        "allow_other": false,
        "context_md": context_md(call),
        "ttl_seconds": ttl_seconds,
        "metadata": {"hook": {
            "harness": call.harness,
            "session_id": call.session_id,
            "tool_name": call.tool_name,
            "tool_use_id": call.tool_use_id,
        }},
        "approval": approval,
    });
    if let Some(project) = call.project {
        body["project"] = json!(project);
    }
    body
}

/// The last part of a working directory, which the MCP `approve` tool files a call under
/// (it runs where the call's folders may not be).
pub fn project_of(cwd: &str) -> Option<String> {
    let name = std::path::Path::new(cwd).file_name()?.to_str()?;
    Some(name.chars().take(100).collect())
}

/// A fenced code block long enough that no run of backticks inside can close it.
pub(crate) fn fenced(lang: &str, body: &str) -> String {
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

    fn call<'a>(tool: &'a str, input: &'a Value) -> ToolCallRef<'a> {
        ToolCallRef {
            harness: "claude",
            tool_name: tool,
            tool_input: input,
            cwd: Some("/home/me/repo"),
            project: Some("/home/me/repo"),
            session_id: Some("abc"),
            tool_use_id: None,
            editable: true,
        }
    }

    #[test]
    fn the_question_says_what_will_happen() {
        let i = json!({"command": "rm -rf build/"});
        assert_eq!(
            question(&call("Bash", &i)),
            "Claude Code wants to run: rm -rf build/"
        );
        let i = json!({"file_path": "/r/a.txt", "content": "x".repeat(2048)});
        assert_eq!(
            question(&call("Write", &i)),
            "Claude Code wants to write /r/a.txt (2.0 KiB)"
        );
        let i = json!({"url": "https://api.example.com/v1?q=1"});
        assert_eq!(
            question(&call("WebFetch", &i)),
            "Claude Code wants to fetch from api.example.com"
        );
    }

    #[test]
    fn an_edit_is_shown_as_a_diff_and_backticks_cannot_break_out() {
        let i =
            json!({"file_path": "/r/a.rs", "old_string": "let a = 1;", "new_string": "let a = 2;"});
        let md = context_md(&call("Edit", &i));
        assert!(md.contains("```diff\n--- a//r/a.rs"), "{md}");
        assert!(md.contains("-let a = 1;\n+let a = 2;"), "{md}");
        let i = json!({"command": "echo ```\nrm x"});
        assert!(context_md(&call("Bash", &i)).contains("````sh\n"));
    }

    #[test]
    fn the_create_body_offers_the_session_answer_only_with_a_session() {
        let i = json!({"command": "ls"});
        let mut c = call("Bash", &i);
        let body = create_body(&c, "2026-11-25T09:00:00Z", 4500);
        assert_eq!(body["options"], json!([ALLOW, DENY, ALLOW_SESSION]));
        assert_eq!(body["project"], "/home/me/repo");
        assert_eq!(body["approval"]["session_id"], "abc");
        assert_eq!(body["approval"]["editable"], true);
        c.session_id = None;
        let body = create_body(&c, "2026-11-25T09:00:00Z", 4500);
        assert_eq!(body["options"], json!([ALLOW, DENY]));
    }
}
