//! gemini-cli: the `BeforeTool` hook.

use serde_json::{Value, json};

use super::call::{Harness, ToolCall, event, named_call};
use super::reply::{Reply, Verdict, without_links};

const BEFORE_TOOL: &str = "BeforeTool";

/// Reads the hook's stdin JSON.
pub fn parse(v: &Value) -> Result<ToolCall, String> {
    named_call(Harness::Gemini, event(v, &[BEFORE_TOOL])?, v, "tool_input")
}

/// `{"decision": …}`; an empty object lets gemini-cli go on its normal way (under `--yolo`,
/// that runs the tool). gemini-cli hands a deny's reason to the model as the tool's result
/// ("Tool execution blocked: …"), so the reason never carries the open question's page: its
/// link answers the question, and a model with a shell could answer itself.
pub fn reply(verdict: &Verdict) -> Reply {
    Reply::json(match verdict {
        Verdict::Allow { .. } => json!({"decision": "allow"}),
        Verdict::Deny { reason } => json!({"decision": "deny", "reason": without_links(reason)}),
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

    #[test]
    fn no_reason_carries_the_answer_link() {
        let r = reply(&Verdict::deny(
            "sayso: no answer in 2 s; still open at http://127.0.0.1:9/d/Secret; denied",
        ));
        assert_eq!(
            r.stdout.unwrap()["reason"],
            "sayso: no answer in 2 s; still open at sayso; denied"
        );
        let r = reply(&Verdict::deny("expired (https://x/d/S); denied"));
        assert_eq!(r.stdout.unwrap()["reason"], "expired (sayso); denied");
    }
}
