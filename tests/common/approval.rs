//! Tool approvals as the Claude Code hook asks them, for tests that create one through the
//! API themselves.

use serde_json::{Value, json};

/// A Claude Code approval of the Bash command `command`: Allow or Deny, nothing else.
pub fn claude_bash(command: &str) -> Value {
    json!({
        "question": format!("Claude Code wants to run: {command}"),
        "kind": "choose",
        "options": ["Allow", "Deny"],
        "allow_other": false,
        "approval": {
            "harness": "claude",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        },
    })
}

/// [`claude_bash`] of `command`, which a policy rule guards with the person's passkey.
pub fn passkey_guarded(command: &str) -> Value {
    let mut body = claude_bash(command);
    body["approval"]["step_up"] = json!("passkey");
    body
}
