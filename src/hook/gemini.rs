//! gemini-cli: the `BeforeTool` hook.

use serde_json::{Value, json};

use super::call::{Harness, ToolCall, input_object, text};
use super::reply::{Reply, Verdict};

const BEFORE_TOOL: &str = "BeforeTool";

/// Reads the hook's stdin JSON.
pub fn parse(v: &Value) -> Result<ToolCall, String> {
    let event = text(v, "hook_event_name").ok_or("hook_event_name is missing")?;
    if event != BEFORE_TOOL {
        return Err(format!("hook_event_name {event:?} is not {BEFORE_TOOL}"));
    }
    Ok(ToolCall {
        harness: Harness::Gemini,
        event,
        tool_name: text(v, "tool_name").ok_or("tool_name is missing")?,
        tool_input: input_object(v, "tool_input")?,
        cwd: text(v, "cwd"),
        session_id: text(v, "session_id"),
        tool_use_id: None,
    })
}

/// `{"decision": …}`; an empty object lets gemini-cli go on its normal way.
pub fn reply(verdict: &Verdict) -> Reply {
    Reply::json(match verdict {
        Verdict::Allow { .. } => json!({"decision": "allow"}),
        Verdict::Deny { reason } => json!({"decision": "deny", "reason": reason}),
        Verdict::Ask { .. } => json!({}),
    })
}

/// Input that cannot be read: exit 2 blocks the tool, stderr is the reason.
pub fn unreadable() -> Reply {
    Reply::block()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_tool_is_read_and_answered() {
        let v = json!({"session_id": "s1", "transcript_path": "/t", "cwd": "/repo",
            "hook_event_name": "BeforeTool", "timestamp": "2026-11-25T08:00:00Z",
            "tool_name": "run_shell_command", "tool_input": {"command": "npm publish"}});
        let call = parse(&v).unwrap();
        assert_eq!(call.command(), Some("npm publish"));
        assert_eq!(
            reply(&Verdict::deny("no")).stdout.unwrap(),
            json!({"decision": "deny", "reason": "no"})
        );
        assert_eq!(reply(&Verdict::ask("x")).stdout.unwrap(), json!({}));
    }
}
