//! Two people must say yes: one opens her feed on a phone, sees how far the decision has
//! come, answers it on her own page, and is told her answer counted; once the other says yes
//! too, her page names them both.

use fantoccini::Locator;
use serde_json::json;

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::people::feed_link;
use crate::common::server::{s, send};
use crate::support::{close, setup};

#[tokio::test]
async fn a_person_answers_a_decision_two_must_agree_on() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let ana = srv.add_person("ana").await;
    let ben = srv.add_person("ben").await;
    let h = srv
        .create(
            json!({"question": "Ship release 2.4 to production?", "kind": "bool",
                        "project": "billing", "approvers": ["ana", "ben"], "required": 2}),
        )
        .await;
    let id = s(&h, "decision_id");

    // Ana's feed: hers, with the decision and how far it has come.
    let feed = srv.url(&format!("/inbox/{}", srv.svc.tokens().feed_token(ana.id)));
    b.goto(&feed).await;
    assert_eq!(
        b.text_of("#whose").await.to_lowercase(),
        "ana · inbox default"
    );
    let item = b.text_of("#pending li.item").await;
    assert!(item.contains("Ship release 2.4 to production?"), "{item}");
    assert!(item.contains("0 of 2 said yes"), "{item}");
    assert_fit_for_a_phone(&b, "people feed").await;
    b.screenshot("people-feed").await;

    // Her page, through her own link.
    b.click_and_wait("#pending a").await;
    assert!(b.path().await.starts_with("/a/"), "{}", b.path().await);
    assert_eq!(b.text_of("#progress").await, "0 of 2 said yes");
    assert_fit_for_a_phone(&b, "people answer").await;
    b.screenshot("people-answer").await;
    b.tap_and_wait(Locator::Css("button[name=value][value=yes]"))
        .await;
    assert_eq!(
        b.text_of("#progress").await,
        "You said yes. 1 of 2 said yes: ana"
    );
    assert!(
        !b.has("form#answer").await,
        "no buttons once her Yes counted"
    );
    assert_eq!(srv.get(id).await["status"], "pending");
    assert_fit_for_a_phone(&b, "people counted").await;
    b.screenshot("people-counted").await;

    // Ben says yes from his own link; Ana's page then names them both.
    let ben_link = feed_link(&srv, id, ben.id).await;
    let (status, body) = send(srv.client.post(&ben_link).json(&json!({"value": "yes"}))).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    b.client.refresh().await.unwrap();
    assert_eq!(result_status(&b).await, "answered");
    assert_eq!(b.text_of("#answered-by").await, "Answered by ana and ben");
    b.screenshot("people-resolved").await;

    // The decision's own link only shows it, and says who answers it.
    let h = srv
        .create(
            json!({"question": "Rotate the signing key?", "kind": "bool",
                        "approvers": ["ana", "ben"], "required": 2}),
        )
        .await;
    b.goto(s(&h, "web_url")).await;
    assert!(!b.has("form#answer").await);
    assert!(
        b.text_of("#elsewhere")
            .await
            .starts_with("ana and ben answer this")
    );
    assert_fit_for_a_phone(&b, "people elsewhere").await;
    b.screenshot("people-elsewhere").await;

    // A tool approval sent to Ana alone: her page, her Allow, her name on it.
    let h = srv
        .create(json!({"question": "Run a command?", "kind": "choose",
                        "options": ["Allow", "Deny"], "approvers": ["ana"],
                        "approval": {"harness": "claude", "tool_name": "Bash",
                                     "tool_input": {"command": "cargo publish --dry-run"}}}))
        .await;
    b.goto(&feed_link(&srv, s(&h, "decision_id"), ana.id).await)
        .await;
    b.click_and_wait("#allow").await;
    assert_eq!(result_status(&b).await, "allowed");
    assert_eq!(b.text_of("#answered-by").await, "Allowed by ana");
    assert_fit_for_a_phone(&b, "people approval").await;
    b.screenshot("people-approval").await;

    close(b, srv).await;
}
