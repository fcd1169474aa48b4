//! What runs, and every other field of a tool's input, in a Matrix message, read from the
//! event the homeserver holds (Synapse, as matrix-nio syncs it): the one-tap Allow (a 👍)
//! only when all of it is shown, and the longest message an approval can make, and its edit,
//! still within Matrix's 65536 bytes an event.

use serde_json::json;

use super::BOT;
use super::fixture::{Fixture, answer_on_feed, first_ask};
use crate::fields;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_field_of_the_input_is_in_the_event_and_allow_is_one_tap_only_when_all_fit() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    // Every field on its line, under the URL: Allow in one tap.
    f.create(fields::puppeteer()).await;
    let (room, ask, content) = first_ask(&mut ana, "example.com").await;
    let html = content["formatted_body"].as_str().unwrap();
    assert!(
        html.contains(
            "<pre><code>https://example.com\nlaunchOptions.executablePath: /bin/sh</code></pre>"
        ),
        "{html}"
    );
    let body = content["body"].as_str().unwrap();
    assert!(
        body.contains("with mcp__puppeteer__puppeteer_navigate (MCP server puppeteer)"),
        "{body}"
    );
    assert!(body.contains("React 👍 Allow · 👎 Deny"), "{body}");
    assert_eq!(ana.reactions(&room, &ask, BOT, 2).await, ["👍", "👎"]);

    // A body over several lines is shown only as marked code points: Allow on the page.
    f.create(fields::delete()).await;
    let (ask, content) = ana.message(&room, BOT, "DELETE").await;
    let html = content["formatted_body"].as_str().unwrap();
    assert!(
        html.contains(
            "method: DELETE\nbody: {⟨U+000A⟩  &quot;all&quot;: true⟨U+000A⟩}</code></pre>"
        ),
        "{html}"
    );
    let body = content["body"].as_str().unwrap();
    assert!(body.contains("Allow on the page"), "{body}");
    assert!(
        body.contains("React 👎 Deny,") && !body.contains("👍"),
        "{body}"
    );
    assert_eq!(ana.reactions(&room, &ask, BOT, 1).await, ["👎"]);
}

/// Synapse refuses an event over 65536 bytes: the longest ask arrives, cut with notes and
/// without a 👍, and so does its edit once settled, which carries the message twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_longest_approval_and_its_edit_are_delivered_cut_with_a_note_without_allow() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f.create(fields::worst()).await;
    f.ask_sent(&id).await;
    let (room, ask, content) = first_ask(&mut ana, "field0: ").await;
    let body = content["body"].as_str().unwrap();
    assert!(body.contains("more characters]"), "{body}");
    assert!(body.contains("more fields: the page shows them"), "{body}");
    assert!(body.contains("Allow on the page"), "{body}");
    assert!(
        body.contains("React 👎 Deny,") && !body.contains("👍 Allow"),
        "{body}"
    );
    assert_eq!(ana.reactions(&room, &ask, BOT, 1).await, ["👎"]);

    answer_on_feed(&f, &id, "ana", json!("Deny")).await;
    let (sender, new) = ana.edit(&room, &ask, "Denied by ana").await;
    assert_eq!(sender, BOT);
    assert!(
        new["body"].as_str().unwrap().contains("field0: "),
        "the edit keeps what runs: {new}"
    );
}
