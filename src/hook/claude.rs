//! Claude Code and Codex: `PreToolUse` and `PermissionRequest` hooks. Codex reads Claude's
//! layout and most of its outputs, but its `PreToolUse` takes no plain allow and no "ask":
//! `permissionDecision: "allow"` without `updatedInput` is refused as unsupported (the hook is
//! marked failed and the call runs as if there were no hook), so an allow, like a hand-back,
//! prints nothing and the call goes on; an edited command is the one allow it takes. Its
//! `PermissionRequest` takes no `updatedInput` at all.

use serde_json::{Map, Value, json};

use super::call::{Harness, ToolCall, event, named_call, text};
use super::reply::{Reply, Verdict};

const PRE_TOOL_USE: &str = "PreToolUse";
const PERMISSION_REQUEST: &str = "PermissionRequest";

/// Reads the hook's stdin JSON.
pub fn parse(harness: Harness, v: &Value) -> Result<ToolCall, String> {
    let event = event(v, &[PRE_TOOL_USE, PERMISSION_REQUEST])?;
    Ok(ToolCall {
        tool_use_id: text(v, "tool_use_id"),
        ..named_call(harness, event, v, "tool_input")?
    })
}

/// The answer in the event's own shape.
pub fn reply(call: &ToolCall, verdict: &Verdict) -> Reply {
    if call.event == PERMISSION_REQUEST {
        let decision = match verdict {
            // Codex refuses an `updatedInput` here; allowing the original would run what the
            // person did not allow.
            Verdict::Allow {
                updated_input: Some(input),
                ..
            } if call.harness == Harness::Codex => json!({"behavior": "deny", "message": format!(
                "The person allowed only an edited command: {}",
                input["command"].as_str().unwrap_or_default()
            )}),
            Verdict::Allow { updated_input, .. } => {
                let mut d = Map::new();
                d.insert("behavior".into(), json!("allow"));
                if let Some(input) = updated_input {
                    d.insert("updatedInput".into(), input.clone());
                }
                Value::Object(d)
            }
            Verdict::Deny { reason } => json!({"behavior": "deny", "message": reason}),
            // No answer leaves the dialog to the person at the terminal.
            Verdict::Ask { .. } => return Reply::nothing(),
        };
        return Reply::json(json!({
            "hookSpecificOutput": {"hookEventName": PERMISSION_REQUEST, "decision": decision}
        }));
    }
    if call.harness == Harness::Codex
        && matches!(
            verdict,
            Verdict::Ask { .. }
                | Verdict::Allow {
                    updated_input: None,
                    ..
                }
        )
    {
        return Reply::nothing();
    }
    let mut out = Map::new();
    out.insert("hookEventName".into(), json!(PRE_TOOL_USE));
    out.insert("permissionDecision".into(), json!(verdict.word()));
    out.insert("permissionDecisionReason".into(), json!(verdict.reason()));
    if let Verdict::Allow {
        updated_input: Some(input),
        ..
    } = verdict
    {
        out.insert("updatedInput".into(), input.clone());
    }
    Reply::json(json!({ "hookSpecificOutput": out }))
}

/// Input that cannot be read: exit 2 blocks the call in either event.
pub fn unreadable() -> Reply {
    Reply::block()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(event: &str) -> Value {
        json!({
            "session_id": "abc123", "transcript_path": "/t.jsonl", "cwd": "/repo",
            "permission_mode": "default", "hook_event_name": event, "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build/"}, "tool_use_id": "toolu_01"
        })
    }

    #[test]
    fn pre_tool_use_answers_with_a_permission_decision() {
        let call = parse(Harness::Claude, &input("PreToolUse")).unwrap();
        assert_eq!(call.command(), Some("rm -rf build/"));
        assert_eq!(call.session_id.as_deref(), Some("abc123"));
        let r = reply(&call, &Verdict::deny("not tonight"));
        assert_eq!(
            r.stdout.unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "not tonight"}})
        );
        let r = reply(&call, &Verdict::ask("back to you"));
        assert_eq!(
            r.stdout.unwrap()["hookSpecificOutput"]["permissionDecision"],
            "ask"
        );
    }

    #[test]
    fn permission_request_answers_with_a_behavior_or_nothing() {
        let call = parse(Harness::Claude, &input("PermissionRequest")).unwrap();
        let edited = json!({"command": "rm -rf build/cache"});
        let r = reply(&call, &Verdict::allow_edited("ok", edited.clone()));
        assert_eq!(
            r.stdout.unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow", "updatedInput": edited}}})
        );
        assert_eq!(reply(&call, &Verdict::ask("x")), Reply::nothing());
    }

    #[test]
    fn codex_allows_and_hands_back_by_printing_nothing() {
        let call = parse(Harness::Codex, &input("PreToolUse")).unwrap();
        assert_eq!(reply(&call, &Verdict::ask("x")), Reply::nothing());
        assert_eq!(reply(&call, &Verdict::allow("ok")), Reply::nothing());
        let edited = json!({"command": "rm -rf build/cache"});
        let r = reply(&call, &Verdict::allow_edited("ok", edited.clone()));
        let out = r.stdout.unwrap();
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(out["hookSpecificOutput"]["updatedInput"], edited);
    }

    #[test]
    fn codex_permission_request_never_allows_the_unedited_command() {
        let call = parse(Harness::Codex, &input("PermissionRequest")).unwrap();
        let r = reply(
            &call,
            &Verdict::allow_edited("ok", json!({"command": "ls"})),
        );
        let out = r.stdout.unwrap();
        assert_eq!(out["hookSpecificOutput"]["decision"]["behavior"], "deny");
        assert!(out.to_string().contains("edited command: ls"), "{out}");
    }

    #[test]
    fn other_events_and_missing_fields_are_named() {
        let e = parse(Harness::Claude, &json!({"hook_event_name": "Stop"})).unwrap_err();
        assert!(e.contains("Stop"), "{e}");
        let e = parse(Harness::Claude, &json!({"hook_event_name": "PreToolUse"})).unwrap_err();
        assert!(e.contains("tool_name"), "{e}");
    }
}
