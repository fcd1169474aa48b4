//! What runs, and every other field of a tool's input, in a Slack message, read from the
//! blocks the stand-in received (slack_standin.rs, checked again with slack_sdk's Block Kit
//! models): the one-tap Allow only when all of it is shown, and the longest message an
//! approval can make still within Block Kit's limits.

use serde_json::Value;

use super::rig::{Slack, shown_text};
use crate::fields;
use crate::slack_standin::Posted;
use sayso::chat::slack::blocks::{MAX_BLOCKS, MAX_SECTION_TEXT};

/// The labels of a message's buttons, in order.
fn labels(message: &Posted) -> Vec<String> {
    message
        .blocks
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap())
        .map(|e| e["text"]["text"].as_str().unwrap().to_string())
        .collect()
}

/// What runs, as the message sets it apart: the text of its preformatted rich text.
fn what_runs(message: &Posted) -> String {
    let rich: Vec<&Value> = message
        .blocks
        .iter()
        .filter(|b| b["type"] == "rich_text")
        .collect();
    assert_eq!(rich.len(), 1, "{:#?}", message.blocks);
    rich[0]["elements"][0]["elements"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_every_field_of_the_input_is_in_the_message_and_allow_only_when_all_fit() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    // Every field on its line, under the URL: Allow in one press.
    slack.create(fields::puppeteer()).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    assert_eq!(
        what_runs(&message),
        "https://example.com\nlaunchOptions.executablePath: /bin/sh"
    );
    let shown = shown_text(&message);
    assert!(
        shown.contains("with mcp__puppeteer__puppeteer_navigate (MCP server puppeteer)"),
        "{shown}"
    );
    assert_eq!(labels(&message), ["Allow", "Deny", "Open the page"]);

    // A body over several lines is shown only as marked code points: Allow on the page.
    slack.create(fields::delete()).await;
    let message = slack.standin.message_to("U0ANA", 1).await;
    assert_eq!(
        what_runs(&message),
        "https://api.example.com/v1/users\nmethod: DELETE\n\
         body: {⟨U+000A⟩  \"all\": true⟨U+000A⟩}"
    );
    assert!(
        shown_text(&message).contains("Allow on the page"),
        "{}",
        shown_text(&message)
    );
    assert_eq!(labels(&message), ["Deny", "Open the page"]);
    slack.assert_well_formed();
}

/// The longest ask keeps to Block Kit (the stand-in and slack_sdk refuse what Slack would),
/// cut with notes and without Allow, and so does the message once settled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_the_longest_approval_is_delivered_cut_with_a_note_and_without_allow() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack.create(fields::worst()).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let runs = what_runs(&message);
    assert!(runs.contains("more characters]"), "{runs}");
    assert!(runs.contains("field0: "), "{runs}");
    assert!(runs.ends_with("more fields: the page shows them"), "{runs}");
    assert!(
        shown_text(&message).contains("Allow on the page"),
        "{}",
        shown_text(&message)
    );
    assert_eq!(labels(&message), ["Deny", "Open the page"]);
    assert_within_block_kit(&message);

    slack.press(&message, "Deny", "U0ANA").await;
    slack
        .standin
        .wait_for("the Deny modal", |s| {
            s.calls_to("views.open").into_iter().next()
        })
        .await;
    assert_eq!(slack.submit("U0ANA", None).await.0, 200);
    assert_eq!(slack.wait_status(&id, "answered").await["outcome"], "Deny");
    let settled = slack
        .standin
        .wait_for("the message settled", |s| {
            s.messages()
                .into_iter()
                .find(|m| m.ts == message.ts && m.updates > 0)
        })
        .await;
    assert!(shown_text(&settled).contains("Denied by ana"));
    assert_within_block_kit(&settled);
    slack.assert_well_formed();
}

/// Block Kit's counts, asked of every text whatever its block: 50 blocks, 3000 characters.
fn assert_within_block_kit(message: &Posted) {
    fn texts(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(t)) = o.get("text") {
                    out.push(t.clone());
                }
                o.values().for_each(|x| texts(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| texts(x, out)),
            _ => {}
        }
    }
    assert!(
        message.blocks.len() <= MAX_BLOCKS,
        "{}",
        message.blocks.len()
    );
    let mut all = Vec::new();
    texts(&Value::Array(message.blocks.clone()), &mut all);
    for t in all {
        assert!(
            t.chars().count() <= MAX_SECTION_TEXT,
            "{}",
            t.chars().count()
        );
    }
}
