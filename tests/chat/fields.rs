//! The tool inputs the chats' field tests send (telegram_fields.rs, slack/fields.rs,
//! matrix/fields.rs): one whose every field fits a message, one with a field that cannot be
//! shown on its line, and the worst case for a message's length.

use serde_json::{Value, json};

/// A tool approval of `tool` with `input`, asked of ana, with a context of the asker's.
pub fn approval(tool: &str, input: Value) -> Value {
    json!({
        "question": "Claude Code wants to fetch a web page", "kind": "choose",
        "options": ["Allow", "Deny"], "approvers": ["ana"], "required": 1,
        "context_md": "Only the homepage, nothing else.",
        "approval": {"harness": "claude", "tool_name": tool, "tool_input": input},
    })
}

/// Puppeteer told to launch `/bin/sh` as its browser: every field fits on its line.
pub fn puppeteer() -> Value {
    approval(
        "mcp__puppeteer__puppeteer_navigate",
        json!({"url": "https://example.com", "launchOptions": {"executablePath": "/bin/sh"}}),
    )
}

/// An HTTP DELETE whose body runs over several lines: shown only as marked code points.
pub fn delete() -> Value {
    approval(
        "mcp__http__request",
        json!({"url": "https://api.example.com/v1/users", "method": "DELETE",
               "body": "{\n  \"all\": true\n}"}),
    )
}

/// The longest message an approval can make: every part the message shows at its longest
/// (names, the URL, the agent's description, the asker's context, more fields than fit),
/// written in the characters that grow most once escaped or encoded: `"` (`\"` in JSON,
/// `&quot;` in HTML) and a four-byte emoji (two UTF-16 units on Telegram), each part as long
/// as sayso takes it.
pub fn worst() -> Value {
    let heavy = |n: usize| "\"👍".repeat(n);
    let mut input = serde_json::Map::new();
    input.insert(
        "url".into(),
        json!(format!("https://example.com/{}", heavy(2000))),
    );
    // Just short enough to be shown whole as the agent's description.
    input.insert("description".into(), json!(heavy(150)));
    // Short fields first (each line's break counts too), then long ones past the room.
    for c in 'a'..='z' {
        input.insert(c.to_string(), json!("\""));
    }
    for i in 0..100 {
        input.insert(format!("field{i}"), json!(heavy(200)));
    }
    json!({
        "question": heavy(1000), "kind": "choose", "options": ["Allow", "Deny"],
        "approvers": ["ana"], "required": 1, "project": heavy(50),
        "context_md": format!("**{}**\n\n{}", heavy(1000), heavy(2000)),
        "approval": {"harness": heavy(100),
                     "tool_name": format!("mcp__{}__{}", "s".repeat(60), heavy(66)),
                     "tool_input": input},
    })
}
