//! Declining and to-do actions from the feed.

use fantoccini::Locator;
use serde_json::json;

use sayso::domain::PersonChannel;

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::approval::claude_bash;
use crate::common::server::{s, send};
use crate::support::{awaited, close, feed_url, setup};

#[tokio::test]
async fn decline_and_todos_from_the_feed() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let feed = feed_url(&srv).await;

    // Decline with a remark.
    let h = srv
        .create(json!({"question": "Name the new service", "kind": "text"}))
        .await;
    b.goto(s(&h, "web_url")).await;
    b.type_into("#remark", "not my call, ask Grace").await;
    b.click_and_wait("#decline").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(d["status"], "declined", "{d}");
    assert_eq!(d["remark"], "not my call, ask Grace");
    assert_eq!(result_status(&b).await, "declined");
    assert!(b.text().await.contains("not my call, ask Grace"));
    b.screenshot("declined").await;

    // The feed: one pending decision, two to-dos, the declined one in the history.
    let pending = srv
        .create(
            json!({"question": "Merge the billing branch?", "kind": "bool", "project": "billing"}),
        )
        .await;
    let rotate = srv
        .create(json!({"question": "Rotate the staging API key", "kind": "todo", "project": "ops"}))
        .await;
    let renew = srv
        .create(json!({"question": "Renew the domain", "kind": "todo"}))
        .await;
    b.goto(&feed).await;
    let title = b.client.title().await.unwrap();
    assert!(title.starts_with("(3) "), "feed title {title:?}");
    let pending_text = b.text_of("#pending").await;
    assert!(pending_text.contains("Merge the billing branch?"));
    assert!(
        !pending_text.contains("Renew the domain"),
        "to-dos are not in #pending"
    );
    assert_eq!(b.count("#todos li.todo").await, 2);
    assert_eq!(
        b.count("#todos li.todo form input[type=hidden][name=return][value=feed]")
            .await,
        2
    );
    assert!(b.text_of("#history").await.contains("Name the new service"));
    assert_fit_for_a_phone(&b, "feed").await;
    b.screenshot("feed").await;

    // Done, in one tap, and back on the feed.
    b.tap_and_wait(Locator::XPath(
        "//li[contains(@class,'todo')][contains(., 'Rotate the staging API key')]\
         //button[@name='action'][@value='done']",
    ))
    .await;
    let d = awaited(&srv, &rotate).await;
    assert_eq!(
        (&d["status"], &d["outcome"]),
        (&json!("answered"), &json!("done")),
        "{d}"
    );
    // Back on the feed at the bound device's address, never the feed link.
    assert_eq!(b.path().await, "/inbox", "the tap comes back to the feed");
    let title = b.client.title().await.unwrap();
    assert!(title.starts_with("(2) "), "feed title after Done {title:?}");
    assert_eq!(b.count("#todos li.todo").await, 1);
    assert!(
        b.text_of("#history")
            .await
            .contains("Rotate the staging API key")
    );
    b.screenshot("feed-after-done").await;

    // Skip the other one.
    b.click_and_wait("#todos li.todo button[name=action][value=skip]")
        .await;
    let d = awaited(&srv, &renew).await;
    assert_eq!(
        (&d["status"], &d["outcome"]),
        (&json!("answered"), &json!("skipped")),
        "{d}"
    );
    assert_eq!(b.path().await, "/inbox");

    // The pending decision's link leads to its page.
    b.click_and_wait("#pending a").await;
    assert_eq!(
        b.path().await,
        url::Url::parse(s(&pending, "web_url")).unwrap().path()
    );
    assert!(b.has("form#answer").await);

    // A to-do's own page answers with its buttons too.
    let h = srv
        .create(json!({"question": "Water the plants", "kind": "todo"}))
        .await;
    b.goto(s(&h, "web_url")).await;
    assert!(b.has("button[type=submit][name=action][value=skip]").await);
    assert_fit_for_a_phone(&b, "todo").await;
    b.screenshot("todo").await;
    b.click_and_wait("button[type=submit][name=action][value=done]")
        .await;
    let d = awaited(&srv, &h).await;
    assert_eq!(
        (&d["status"], &d["outcome"]),
        (&json!("answered"), &json!("done")),
        "{d}"
    );
    assert_eq!(result_status(&b).await, "answered");

    close(b, srv).await;
}

/// Recent says what was decided, by whom and through which channel, capitalised as written:
/// never "Answered" for a No, a Deny or a skipped to-do.
#[tokio::test]
async fn recent_says_what_was_decided_by_whom_and_how() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let feed = feed_url(&srv).await;

    // A tool call, denied from the Telegram message's page.
    let mut body = claude_bash("rm -rf build");
    body["approval"]["cwd"] = json!("/home/me/shop");
    let call = srv.create(body).await;
    let via_telegram = srv
        .person_url_via(s(&call, "web_url"), PersonChannel::Telegram)
        .await;
    b.goto(&via_telegram).await;
    b.click_and_wait("#deny").await;
    assert_eq!(awaited(&srv, &call).await["outcome"], "Deny");

    // A No, an option, a skipped to-do, and a question whose agent stopped waiting.
    let no = srv
        .create(json!({"question": "Merge the billing branch?", "kind": "bool"}))
        .await;
    assert_eq!(
        srv.answer(s(&no, "web_url"), json!({"value": "no"}))
            .await
            .0,
        200
    );
    let pick = srv
        .create(json!({"question": "Which region?", "kind": "choose",
                       "options": ["eu-west", "us-east"]}))
        .await;
    assert_eq!(
        srv.answer(s(&pick, "web_url"), json!({"value": "us-east"}))
            .await
            .0,
        200
    );
    let todo = srv
        .create(json!({"question": "Renew the domain", "kind": "todo"}))
        .await;
    assert_eq!(
        srv.answer(s(&todo, "web_url"), json!({"value": "skipped"}))
            .await
            .0,
        200
    );
    let gone = srv
        .create(json!({"question": "Name the new service", "kind": "text"}))
        .await;
    let cancel = format!("/v1/decisions/{}/cancel", s(&gone, "decision_id"));
    let (status, _) = send(
        srv.req(reqwest::Method::POST, &cancel)
            .json(&json!({"reason": "abandoned"})),
    )
    .await;
    assert_eq!(status, 200);

    b.goto(&feed).await;
    // The rendered text, as the person reads it (after any CSS), one line per item.
    let lines = b.text_of("#history").await;
    let line_of = |question: &str| -> String {
        let at = lines
            .find(question)
            .unwrap_or_else(|| panic!("{question:?} is not in Recent:\n{lines}"));
        lines[at..].lines().take(3).collect::<Vec<_>>().join(" | ")
    };
    let denied = line_of("Claude Code wants to run a Bash command");
    assert!(denied.contains("Denied by default in Telegram"), "{denied}");
    let no_line = line_of("Merge the billing branch?");
    assert!(no_line.contains("No through its link"), "{no_line}");
    assert!(line_of("Which region?").contains("us-east through its link"));
    assert!(line_of("Renew the domain").contains("Skipped"));
    assert!(
        line_of("Name the new service").contains("Withdrawn by the agent ·"),
        "{lines}"
    );
    assert!(!lines.contains("Answered"), "{lines}");
    assert_fit_for_a_phone(&b, "feed with Recent").await;
    b.screenshot("feed-recent").await;

    close(b, srv).await;
}
