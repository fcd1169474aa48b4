//! Cursor: the `beforeShellExecution` and `beforeMCPExecution` hooks.

use serde_json::{Value, json};

use super::call::{Harness, ToolCall, input_object, text};
use super::reply::{Reply, Verdict};

/// The tool name a shell command gets in policy rules and on the page.
pub const SHELL_TOOL: &str = "Shell";

/// Reads the hook's stdin JSON.
pub fn parse(v: &Value) -> Result<ToolCall, String> {
    let event = text(v, "hook_event_name").ok_or("hook_event_name is missing")?;
    let (tool_name, tool_input) = match event.as_str() {
        "beforeShellExecution" => {
            let command = text(v, "command").ok_or("command is missing")?;
            (SHELL_TOOL.to_string(), json!({ "command": command }))
        }
        "beforeMCPExecution" => (
            text(v, "tool_name").ok_or("tool_name is missing")?,
            input_object(v, "tool_input")?,
        ),
        other => {
            return Err(format!(
                "hook_event_name {other:?} is not beforeShellExecution or beforeMCPExecution"
            ));
        }
    };
    let cwd = text(v, "cwd").or_else(|| v["workspace_roots"][0].as_str().map(str::to_string));
    Ok(ToolCall {
        harness: Harness::Cursor,
        event,
        tool_name,
        tool_input,
        cwd,
        project: None,
        session_id: text(v, "conversation_id"),
        tool_use_id: text(v, "generation_id"),
    })
}

/// `{"permission": …}`; a denial tells both the person and the agent why.
pub fn reply(verdict: &Verdict) -> Reply {
    Reply::json(match verdict {
        Verdict::Allow { .. } => json!({"permission": "allow"}),
        Verdict::Deny { reason } => {
            json!({"permission": "deny", "user_message": reason, "agent_message": reason})
        }
        Verdict::Ask { .. } => json!({"permission": "ask"}),
    })
}

/// Input that cannot be read: the deny answer, which needs nothing from the input.
pub fn unreadable(reason: &str) -> Reply {
    reply(&Verdict::deny(reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_and_mcp_events_are_read() {
        let v = json!({"conversation_id": "c1", "generation_id": "g1",
            "hook_event_name": "beforeShellExecution", "command": "rm -rf dist",
            "cwd": "/repo", "workspace_roots": ["/repo"]});
        let call = parse(&v).unwrap();
        assert_eq!(call.command(), Some("rm -rf dist"));
        assert_eq!(call.session_id.as_deref(), Some("c1"));
        let v = json!({"conversation_id": "c1", "generation_id": "g1",
            "hook_event_name": "beforeMCPExecution", "tool_name": "db_query",
            "tool_input": "{\"query\": \"DROP TABLE x\"}", "workspace_roots": ["/repo"]});
        let call = parse(&v).unwrap();
        assert_eq!(call.tool_input, json!({"query": "DROP TABLE x"}));
        assert_eq!(call.cwd.as_deref(), Some("/repo"));
        assert_eq!(
            reply(&Verdict::deny("no")).stdout.unwrap(),
            json!({"permission": "deny", "user_message": "no", "agent_message": "no"})
        );
    }
}
