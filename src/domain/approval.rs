//! A tool approval: a `choose` decision that asks whether a coding agent may run one tool
//! call (`sayso hook`, the `approve` MCP tool). The `approval` object of the create request
//! says what the call is, so the approval page can lay it out; the answers are always the
//! labels below, which are also the outcome.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::issues::Issues;
use super::read::{self, quote_short};

/// The answers of an approval, in the order the page shows them.
pub const ALLOW: &str = "Allow";
pub const DENY: &str = "Deny";
pub const ALLOW_SESSION: &str = "Allow for this session";

pub(crate) const MAX_NAME_CHARS: usize = 200;
/// The most characters of the policy rule an approval names.
pub const MAX_RULE_CHARS: usize = 1000;
pub(crate) const MAX_PATH_CHARS: usize = 4000;
/// The tool input, serialised; the page shows it (a written file's content, a diff).
pub const MAX_TOOL_INPUT_BYTES: usize = 256 * 1024;

/// What the agent wants to do, as the create request's `approval` object described it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalSpec {
    /// `claude`, `codex`, `gemini`, `copilot`, `cursor`, or another agent's name.
    pub harness: String,
    pub tool_name: String,
    /// The tool's arguments, always an object.
    pub tool_input: Map<String, Value>,
    pub cwd: Option<String>,
    pub session_id: Option<String>,
    /// When the agent stops waiting; an answer after it is recorded and shown as late.
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub answer_by: Option<OffsetDateTime>,
    /// The agent runs an edited command handed back (Claude Code's and Codex's
    /// `updatedInput`): the page lets the person change the command before allowing.
    #[serde(default)]
    pub editable: bool,
    /// What an Allow needs besides the tap: `passkey` (a policy rule's `step_up`) counts an
    /// Allow only with an assertion of one of the answering person's own passkeys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_up: Option<StepUp>,
    /// The policy rule that put the question (`rule 2 of …/policy.json (…)`), shown to the
    /// person; absent when no rule matched. An "Allow for this session" counts only for the
    /// calls the same rule decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The asker looks up the person's allowances (`GET /v1/allowances`) before it asks and
    /// lets a call through on one, as `sayso hook` does. Only then does the page offer "Allow
    /// for a while": an allowance nothing honours would be a promise the page cannot keep.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub honours_allowances: bool,
}

/// A second factor an approval's Allow needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepUp {
    /// A passkey (WebAuthn) of the inbox, with the person verified on the device.
    Passkey,
}

impl StepUp {
    pub const NAMES: &[&str] = &["passkey"];

    pub fn parse(s: &str) -> Option<StepUp> {
        match s {
            "passkey" => Some(StepUp::Passkey),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StepUp::Passkey => "passkey",
        }
    }
}

/// Whether an outcome is one of the allowing answers.
pub fn allows(outcome: Option<&Value>) -> bool {
    matches!(outcome.and_then(Value::as_str), Some(ALLOW | ALLOW_SESSION))
}

const FIELDS: &[&str] = &[
    "harness",
    "tool_name",
    "tool_input",
    "cwd",
    "session_id",
    "answer_by",
    "editable",
    "step_up",
    "rule",
    "honours_allowances",
];

/// Reads the `approval` object of a create request.
pub fn parse_approval(
    v: &Value,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<ApprovalSpec> {
    let Some(obj) = v.as_object() else {
        issues.push(
            "approval",
            format!("must be an object (got {})", read::type_name(v)),
        );
        return None;
    };
    read::warn_unknown(obj, FIELDS, "approval", warnings);
    let name = |key: &str, issues: &mut Issues| {
        let path = format!("approval.{key}");
        match read::get(obj, key) {
            Some(v) => read::text(v, &path, issues, 1, MAX_NAME_CHARS),
            None => {
                issues.push(path, "is required");
                None
            }
        }
    };
    let harness = name("harness", issues);
    let tool_name = name("tool_name", issues);
    let tool_input = read_tool_input(obj, "approval.tool_input", issues);
    let cwd = read::optional_text(
        read::get(obj, "cwd"),
        "approval.cwd",
        issues,
        MAX_PATH_CHARS,
    );
    let session_id = read::optional_text(
        read::get(obj, "session_id"),
        "approval.session_id",
        issues,
        MAX_NAME_CHARS,
    );
    let answer_by = read::get(obj, "answer_by")
        .and_then(|v| read::string(v, "approval.answer_by", issues))
        .and_then(|s| match OffsetDateTime::parse(s, &Rfc3339) {
            Ok(t) => Some(t),
            Err(_) => {
                issues.push(
                    "approval.answer_by",
                    format!("must be an RFC 3339 time (got {})", quote_short(s)),
                );
                None
            }
        });
    let editable = read::get(obj, "editable")
        .and_then(|v| read::boolean(v, "approval.editable", issues))
        .unwrap_or(false);
    let honours_allowances = read::get(obj, "honours_allowances")
        .and_then(|v| read::boolean(v, "approval.honours_allowances", issues))
        .unwrap_or(false);
    let step_up = read::get(obj, "step_up")
        .and_then(|v| read::string(v, "approval.step_up", issues))
        .and_then(|s| {
            let parsed = StepUp::parse(s);
            if parsed.is_none() {
                issues.push(
                    "approval.step_up",
                    format!(
                        "must be one of {} (got {})",
                        StepUp::NAMES.join(", "),
                        quote_short(s)
                    ),
                );
            }
            parsed
        });
    let rule = read::optional_text(
        read::get(obj, "rule"),
        "approval.rule",
        issues,
        MAX_RULE_CHARS,
    );
    Some(ApprovalSpec {
        editable,
        step_up,
        rule,
        honours_allowances,
        harness: harness?,
        tool_name: tool_name?,
        tool_input: tool_input?,
        cwd,
        session_id,
        answer_by,
    })
}

/// How long the notification of a session's approval waits for more of the same session:
/// an agent that asks several things at once rings the phone once.
pub const GATHER: time::Duration = time::Duration::seconds(3);

/// The most characters of an edited command.
pub const MAX_COMMAND_CHARS: usize = 10_000;

/// The command the person edited before allowing, when it changes the call; `None` for any
/// other answer, or a command left as it was. A command for an approval that cannot be
/// edited is an issue at `command`.
pub fn edited_command(
    approval: &ApprovalSpec,
    outcome: Option<&Value>,
    command: Option<&str>,
    issues: &mut Issues,
) -> Option<String> {
    let allowed = allows(outcome);
    let command = command.map(str::trim).filter(|c| !c.is_empty())?;
    let input = Value::Object(approval.tool_input.clone());
    let original = match action_of(&approval.tool_name, &input) {
        Action::Shell { command } => command.trim(),
        _ => "",
    };
    if !allowed || command == original {
        return None;
    }
    if !approval.editable || original.is_empty() {
        issues.push("command", "this approval's command cannot be edited");
        return None;
    }
    read::check_len(command, "command", issues, 1, MAX_COMMAND_CHARS).then(|| command.to_string())
}

/// What a tool call does, as far as the person and a policy care.
#[derive(Debug, Clone, PartialEq)]
pub enum Action<'a> {
    /// A shell command.
    Shell { command: &'a str },
    /// A file written whole.
    Write { path: &'a str, content: &'a str },
    /// A file changed in place: the text replaced.
    Edit {
        path: Option<&'a str>,
        old: &'a str,
        new: &'a str,
    },
    /// A patch in the `apply_patch` format.
    Patch { patch: &'a str },
    /// A URL fetched.
    Fetch { url: &'a str },
    /// Anything else: the tool's name and input are all there is.
    Other,
}

/// Tools (of any harness) whose `command` is a shell command line.
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "Shell",
    "run_shell_command",
    "bash",
    "shell",
    "powershell",
    "local_shell",
    "exec_command",
];

fn str_field<'a>(input: &'a Value, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| input[*n].as_str())
}

/// The file a tool input names, if any.
pub fn path_of(input: &Value) -> Option<&str> {
    str_field(
        input,
        &["file_path", "path", "absolute_path", "notebook_path"],
    )
}

/// What a call of `tool_name` with `input` does, read from the field names the harnesses use.
pub fn action_of<'a>(tool_name: &str, input: &'a Value) -> Action<'a> {
    if SHELL_TOOLS.contains(&tool_name)
        && let Some(command) = str_field(input, &["command", "cmd"])
    {
        return Action::Shell { command };
    }
    if tool_name == "apply_patch"
        && let Some(patch) = str_field(input, &["input", "patch", "command"])
    {
        return Action::Patch { patch };
    }
    if let Some(url) = str_field(input, &["url"]) {
        return Action::Fetch { url };
    }
    let path = path_of(input);
    if let (Some(old), Some(new)) = (
        str_field(input, &["old_string", "old_str"]),
        str_field(input, &["new_string", "new_str"]),
    ) {
        return Action::Edit { path, old, new };
    }
    // pi's `edit` takes a list of replacements; one is shown as a diff. Several stay the
    // input as JSON, so the page never shows a part of the change as the whole of it.
    if let Some([edit]) = input
        .get("edits")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        && let (Some(old), Some(new)) = (
            str_field(edit, &["oldText", "old_text"]),
            str_field(edit, &["newText", "new_text"]),
        )
    {
        return Action::Edit { path, old, new };
    }
    if let (Some(path), Some(content)) = (
        path,
        str_field(input, &["content", "file_text", "contents"]),
    ) {
        return Action::Write { path, content };
    }
    Action::Other
}

/// A unified diff of one replacement: every old line removed, every new line added.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let mut d = format!(
        "--- a/{path}\n+++ b/{path}\n@@ -1,{} +1,{} @@\n",
        old_lines.len(),
        new_lines.len()
    );
    for l in &old_lines {
        d.push_str(&format!("-{l}\n"));
    }
    for l in &new_lines {
        d.push_str(&format!("+{l}\n"));
    }
    d
}

/// A byte count as people read it.
pub fn size_in_words(bytes: usize) -> String {
    match bytes {
        b if b < 1024 => format!("{b} bytes"),
        b if b < 1024 * 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// A call's `tool_input`: an object of at most `MAX_TOOL_INPUT_BYTES` as JSON, `{}` when left
/// out; `None` with the issue at `path` otherwise. Approvals and an allowance's uses read it
/// alike.
pub(crate) fn read_tool_input(
    obj: &Map<String, Value>,
    path: &str,
    issues: &mut Issues,
) -> Option<Map<String, Value>> {
    match read::get(obj, "tool_input") {
        None => Some(Map::new()),
        Some(Value::Object(m)) => {
            let size = serde_json::to_string(m).map(|s| s.len()).unwrap_or(0);
            if size > MAX_TOOL_INPUT_BYTES {
                let why =
                    format!("must be at most {MAX_TOOL_INPUT_BYTES} bytes as JSON (got {size})");
                issues.push(path, why);
                None
            } else {
                Some(m.clone())
            }
        }
        Some(other) => {
            issues.push(
                path,
                format!("must be an object (got {})", read::type_name(other)),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pis_edit_is_a_diff_when_it_holds_one_replacement() {
        let one = json!({"path": "/a.rs", "edits": [{"oldText": "a", "newText": "b"}]});
        assert_eq!(
            action_of("edit", &one),
            Action::Edit {
                path: Some("/a.rs"),
                old: "a",
                new: "b"
            }
        );
        let two = json!({"path": "/a.rs", "edits": [
            {"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]});
        assert_eq!(action_of("edit", &two), Action::Other);
    }

    #[test]
    fn an_approval_is_read_with_every_problem_named() {
        let mut issues = Issues::new();
        let mut warnings = vec![];
        let a = parse_approval(
            &json!({"harness": "claude", "tool_name": "Bash",
                "tool_input": {"command": "ls"}, "session_id": "s",
                "answer_by": "2026-11-25T09:00:00Z", "colour": "red"}),
            &mut issues,
            &mut warnings,
        )
        .unwrap();
        assert!(issues.is_empty());
        assert_eq!(a.tool_input["command"], "ls");
        assert_eq!(warnings.len(), 1, "{warnings:?}");

        let mut issues = Issues::new();
        let a = parse_approval(
            &json!({"tool_name": "", "tool_input": [1], "answer_by": "soon"}),
            &mut issues,
            &mut warnings,
        );
        assert!(a.is_none());
        let paths: Vec<String> = issues.into_vec().into_iter().map(|i| i.path).collect();
        assert_eq!(
            paths,
            [
                "approval.harness",
                "approval.tool_name",
                "approval.tool_input",
                "approval.answer_by"
            ]
        );
    }

    #[test]
    fn a_step_up_is_read_and_an_unknown_one_named() {
        let mut issues = Issues::new();
        let mut warnings = vec![];
        let base = json!({"harness": "claude", "tool_name": "Bash", "step_up": "passkey"});
        let a = parse_approval(&base, &mut issues, &mut warnings).unwrap();
        assert_eq!(a.step_up, Some(StepUp::Passkey));
        let a = parse_approval(
            &json!({"harness": "c", "tool_name": "B"}),
            &mut issues,
            &mut warnings,
        );
        assert_eq!(a.unwrap().step_up, None);
        assert!(issues.is_empty());
        parse_approval(
            &json!({"harness": "c", "tool_name": "B", "step_up": "sms"}),
            &mut issues,
            &mut warnings,
        );
        let all = issues.into_vec();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].path, "approval.step_up");
        assert!(
            all[0].message.contains("passkey") && all[0].message.contains("sms"),
            "{}",
            all[0].message
        );
    }
}
