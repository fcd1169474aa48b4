//! What runs, and every other field of a tool's input, in a Telegram message: the one-tap
//! Allow only when all of it is shown (the stand-in of telegram_standin.rs).

use serde_json::{Value, json};

use crate::common::db;
use crate::telegram::{ANA, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_field_of_the_input_is_in_the_message_and_allow_is_one_tap_only_when_all_fit() {
    let db = db::fresh_sqlite_url();
    let (srv, api) = start(&db.url, None).await;
    let ana = ANA.to_string();
    let approval = |tool: &str, input: Value| {
        json!({
            "question": "Claude Code wants to fetch a web page", "kind": "choose",
            "options": ["Allow", "Deny"], "approvers": ["ana"], "required": 1,
            "context_md": "Only the homepage, nothing else.",
            "approval": {"harness": "claude", "tool_name": tool, "tool_input": input},
        })
    };
    // Every field on its line, under the URL: Allow in one tap.
    srv.create(approval(
        "mcp__puppeteer__puppeteer_navigate",
        json!({"url": "https://example.com", "launchOptions": {"executablePath": "/bin/sh"}}),
    ))
    .await;
    let ask = api
        .wait_for(&ana, "the puppeteer ask", |s| {
            s.text.contains("example.com")
        })
        .await;
    assert!(
        ask.text.contains(
            "with mcp__puppeteer__puppeteer_navigate (MCP server puppeteer)\n\
             <pre>https://example.com\nlaunchOptions.executablePath: /bin/sh</pre>"
        ),
        "{}",
        ask.text
    );
    let buttons = ask.markup.as_ref().unwrap()["inline_keyboard"].to_string();
    assert!(
        buttons.contains("Allow") && buttons.contains("Deny"),
        "{buttons}"
    );

    // A body over several lines is shown only as marked code points: Allow on the page.
    srv.create(approval(
        "mcp__http__request",
        json!({"url": "https://api.example.com/v1/users", "method": "DELETE",
               "body": "{\n  \"all\": true\n}"}),
    ))
    .await;
    let ask = api
        .wait_for(&ana, "the DELETE ask", |s| s.text.contains("DELETE"))
        .await;
    assert!(
        ask.text
            .contains("method: DELETE\nbody: {⟨U+000A⟩  \"all\": true⟨U+000A⟩}"),
        "{}",
        ask.text
    );
    let buttons = ask.markup.as_ref().unwrap()["inline_keyboard"].to_string();
    assert!(
        !buttons.contains("Allow") && buttons.contains("Deny"),
        "{buttons}"
    );
    assert!(ask.text.contains("Allow on the page"), "{}", ask.text);
    assert_eq!(api.violations(), Vec::<String>::new());
    srv.stop().await;
}
