//! One tool call as every harness describes it, brought to one shape: what the policy
//! matches and what the person is shown.

use serde_json::Value;

use crate::domain::approval;
pub use crate::domain::approval::Action;
use crate::render::approval::ToolCallRef;

/// The harnesses `sayso hook` speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Harness {
    Claude,
    Codex,
    Gemini,
    Copilot,
    Cursor,
    Pi,
}

impl Harness {
    /// Whether the harness runs a tool with the input the hook hands back (`updatedInput`),
    /// so the person may edit the command before allowing.
    pub fn accepts_updated_input(self) -> bool {
        matches!(self, Harness::Claude | Harness::Codex | Harness::Pi)
    }

    /// The word used on the command line, in policy rules and in the decision's metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
            Harness::Copilot => "copilot",
            Harness::Cursor => "cursor",
            Harness::Pi => "pi",
        }
    }
}

/// A tool call about to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub harness: Harness,
    /// The harness's event (`PreToolUse`, `PermissionRequest`, `BeforeTool`, …).
    pub event: String,
    pub tool_name: String,
    /// The tool's arguments, always an object (a harness that sends them as a JSON string
    /// has them parsed).
    pub tool_input: Value,
    pub cwd: Option<String>,
    /// The project the call is filed under: its root's absolute path (`super::project`).
    pub project: Option<String>,
    pub session_id: Option<String>,
    /// The harness's id of this one call, when it has one.
    pub tool_use_id: Option<String>,
}

impl ToolCall {
    /// The call as the approval's phrasing and create request take it.
    pub fn as_ref(&self) -> ToolCallRef<'_> {
        ToolCallRef {
            harness: self.harness.as_str(),
            tool_name: &self.tool_name,
            tool_input: &self.tool_input,
            cwd: self.cwd.as_deref(),
            project: self.project.as_deref(),
            session_id: self.session_id.as_deref(),
            tool_use_id: self.tool_use_id.as_deref(),
            // Codex's `PermissionRequest` takes no `updatedInput`.
            editable: self.harness.accepts_updated_input()
                && !(self.harness == Harness::Codex && self.event == "PermissionRequest"),
        }
    }

    /// The shell command, for a shell tool.
    pub fn command(&self) -> Option<&str> {
        match self.action() {
            Action::Shell { command } => Some(command),
            _ => None,
        }
    }

    /// The file the call touches, if it names one.
    pub fn path(&self) -> Option<&str> {
        approval::path_of(&self.tool_input)
    }

    /// What the call does.
    pub fn action(&self) -> Action<'_> {
        approval::action_of(&self.tool_name, &self.tool_input)
    }
}

/// The hook's event (`hook_event_name`), which must be one of `expected`.
pub fn event(v: &Value, expected: &[&str]) -> Result<String, String> {
    let event = text(v, "hook_event_name").ok_or("hook_event_name is missing")?;
    if !expected.contains(&event.as_str()) {
        return Err(format!(
            "hook_event_name {event:?} is not {}",
            expected.join(" or ")
        ));
    }
    Ok(event)
}

/// A call as the harnesses that name its fields alike send it: `tool_name`, `cwd`,
/// `session_id`, and the input under `input_key`; the call's own id, which each names
/// its way, is left to the harness.
pub fn named_call(
    harness: Harness,
    event: String,
    v: &Value,
    input_key: &str,
) -> Result<ToolCall, String> {
    Ok(ToolCall {
        harness,
        event,
        tool_name: text(v, "tool_name").ok_or("tool_name is missing")?,
        tool_input: input_object(v, input_key)?,
        cwd: text(v, "cwd"),
        project: None,
        session_id: text(v, "session_id"),
        tool_use_id: None,
    })
}

/// A string field of a JSON object, when present and a string.
pub fn text(v: &Value, key: &str) -> Option<String> {
    v[key].as_str().map(str::to_string)
}

/// The tool input given as an object, or as a JSON string holding one (Copilot's `toolArgs`,
/// Cursor's MCP `tool_input`).
pub fn input_object(v: &Value, key: &str) -> Result<Value, String> {
    match &v[key] {
        Value::Object(_) => Ok(v[key].clone()),
        Value::Null => Ok(Value::Object(Default::default())),
        Value::String(s) if s.trim().is_empty() => Ok(Value::Object(Default::default())),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(o @ Value::Object(_)) => Ok(o),
            Ok(other) => Ok(serde_json::json!({ "value": other })),
            Err(e) => Err(format!("{key} is a string but not JSON: {e}")),
        },
        other => Ok(serde_json::json!({ "value": other })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(tool: &str, input: Value) -> ToolCall {
        ToolCall {
            harness: Harness::Claude,
            event: "PreToolUse".into(),
            tool_name: tool.into(),
            tool_input: input,
            cwd: None,
            project: None,
            session_id: None,
            tool_use_id: None,
        }
    }

    #[test]
    fn each_harness_tool_is_read_as_what_it_does() {
        let c = call("Bash", json!({"command": "rm -rf build/"}));
        assert_eq!(c.command(), Some("rm -rf build/"));
        let c = call("run_shell_command", json!({"command": "ls"}));
        assert_eq!(c.action(), Action::Shell { command: "ls" });
        let c = call(
            "replace",
            json!({"file_path": "/a.rs", "old_string": "a", "new_string": "b"}),
        );
        assert_eq!(
            c.action(),
            Action::Edit {
                path: Some("/a.rs"),
                old: "a",
                new: "b"
            }
        );
        let c = call("create", json!({"path": "/n.txt", "file_text": "hi"}));
        assert_eq!(
            c.action(),
            Action::Write {
                path: "/n.txt",
                content: "hi"
            }
        );
        let c = call(
            "WebFetch",
            json!({"url": "https://example.com/x", "prompt": "p"}),
        );
        assert_eq!(
            c.action(),
            Action::Fetch {
                url: "https://example.com/x"
            }
        );
        // A `command` field of a tool that is not a shell is not a shell command.
        let c = call("mcp__x__deploy", json!({"command": "rm -rf /"}));
        assert_eq!(c.command(), None);
    }

    #[test]
    fn tool_input_may_come_as_a_json_string() {
        let v = json!({"toolArgs": "{\"command\":\"ls\"}", "bad": "{", "none": null});
        assert_eq!(
            input_object(&v, "toolArgs").unwrap(),
            json!({"command": "ls"})
        );
        assert!(input_object(&v, "bad").unwrap_err().contains("bad"));
        assert_eq!(input_object(&v, "none").unwrap(), json!({}));
    }
}
