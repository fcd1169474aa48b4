//! Copilot CLI: the `preToolUse` hook. Copilot CLI 1.0.102 sends `toolArgs` as an object
//! (`{"sessionId", "timestamp", "cwd", "toolName", "toolArgs": {…}}`); its documents show a
//! JSON string, which is read too.

use serde_json::{Value, json};

use super::call::{Harness, ToolCall, input_object, text};
use super::reply::{Reply, Verdict};

/// Reads the hook's stdin JSON.
pub fn parse(v: &Value) -> Result<ToolCall, String> {
    Ok(ToolCall {
        harness: Harness::Copilot,
        event: "preToolUse".into(),
        tool_name: text(v, "toolName").ok_or("toolName is missing")?,
        tool_input: input_object(v, "toolArgs")?,
        cwd: text(v, "cwd"),
        project: None,
        session_id: text(v, "sessionId"),
        tool_use_id: None,
    })
}

/// `{"permissionDecision": …}`.
pub fn reply(verdict: &Verdict) -> Reply {
    Reply::json(match verdict {
        Verdict::Allow { .. } => json!({"permissionDecision": "allow"}),
        Verdict::Deny { reason } => {
            json!({"permissionDecision": "deny", "permissionDecisionReason": reason})
        }
        Verdict::Ask { .. } => json!({"permissionDecision": "ask"}),
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
    fn the_input_copilot_really_sends_has_tool_args_as_an_object() {
        // As Copilot CLI 1.0.102 sent it to the hook, byte for byte.
        let v: Value = serde_json::from_str(
            r#"{"sessionId":"b55a46c3-9e9b-4d2b-86e1-5c0faebd4e67","timestamp":1795634498569,"cwd":"/tmp/h/cproj","toolName":"bash","toolArgs":{"command":"touch ran6.txt","description":"make a file"}}"#,
        )
        .unwrap();
        let call = parse(&v).unwrap();
        assert_eq!(call.tool_name, "bash");
        assert_eq!(call.command(), Some("touch ran6.txt"));
        assert_eq!(
            call.session_id.as_deref(),
            Some("b55a46c3-9e9b-4d2b-86e1-5c0faebd4e67")
        );
        assert_eq!(call.cwd.as_deref(), Some("/tmp/h/cproj"));
    }

    #[test]
    fn tool_args_are_parsed_from_their_string() {
        let v = json!({"timestamp": 1_764_057_600_000u64, "cwd": "/repo", "toolName": "bash",
            "toolArgs": "{\"command\":\"git push --force\",\"description\":\"push\"}"});
        let call = parse(&v).unwrap();
        assert_eq!(call.command(), Some("git push --force"));
        assert_eq!(
            reply(&Verdict::deny("no")).stdout.unwrap(),
            json!({"permissionDecision": "deny", "permissionDecisionReason": "no"})
        );
    }
}
