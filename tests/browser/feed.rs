//! Declining and to-do actions from the feed.

use fantoccini::Locator;
use serde_json::json;

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::server::s;
use crate::support::{awaited, feed_url, setup};

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
    let pending_text = b.find("#pending").await.text().await.unwrap();
    assert!(pending_text.contains("Merge the billing branch?"));
    assert!(
        !pending_text.contains("Renew the domain"),
        "to-dos are not in #pending"
    );
    assert_eq!(
        b.client
            .find_all(Locator::Css("#todos li.todo"))
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        b.client
            .find_all(Locator::Css(
                "#todos li.todo form input[type=hidden][name=return][value=feed]"
            ))
            .await
            .unwrap()
            .len(),
        2
    );
    assert!(
        b.find("#history")
            .await
            .text()
            .await
            .unwrap()
            .contains("Name the new service")
    );
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
    assert_eq!(
        b.client
            .find_all(Locator::Css("#todos li.todo"))
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        b.find("#history")
            .await
            .text()
            .await
            .unwrap()
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

    b.close().await;
    srv.stop().await;
}
