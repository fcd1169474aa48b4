//! Text as typed and as shown: line breaks reach the agent, long words wrap.

use serde_json::json;

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::server::s;
use crate::support::{awaited, close, feed_url, setup};

#[tokio::test]
async fn line_breaks_typed_in_the_browser_reach_the_agent_as_typed() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let h = srv
        .create(json!({"question": "What should the release notes say?", "kind": "text"}))
        .await;
    b.goto(s(&h, "web_url")).await;
    b.type_into("#value", "Faster invoices.\nNew bills endpoint.")
        .await;
    b.type_into("#remark", "first draft\nplease edit").await;
    b.click_and_wait("#submit").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(d["status"], "answered", "{d}");
    // Browsers send a text area's line breaks as CRLF; the agent gets what was typed.
    assert_eq!(d["outcome"], "Faster invoices.\nNew bills endpoint.");
    assert_eq!(d["remark"], "first draft\nplease edit");
    close(b, srv).await;
}

#[tokio::test]
async fn long_unbroken_words_wrap_at_phone_width() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let project = "payments_reconciliation_nightly_batch_eu_west_1";
    let url =
        "https://ci.example.com/pipelines/payments-reconciliation/jobs/4711/artifacts/report.html";
    let h = srv
        .create(
            json!({"question": format!("Rerun {url}?"), "kind": "choose",
            "project": project,
            "options": [{"label": "rerun_with_the_previous_configuration_snapshot",
                         "description": url}, "skip"],
            "context_md": format!("Failed: `{url}`\n\n{url}")}),
        )
        .await;
    srv.create(json!({"question": format!("Archive {url}"), "kind": "todo", "project": project}))
        .await;
    b.goto(s(&h, "web_url")).await;
    assert_fit_for_a_phone(&b, "answer page with long words").await;
    b.click("label[for=opt-0]").await;
    b.type_into("#remark", url).await;
    b.click_and_wait("#submit").await;
    assert_eq!(result_status(&b).await, "answered");
    assert_fit_for_a_phone(&b, "answered page with long words").await;
    b.goto(&feed_url(&srv).await).await;
    b.screenshot("feed-long-words").await;
    assert_fit_for_a_phone(&b, "feed with long words").await;
    close(b, srv).await;
}
