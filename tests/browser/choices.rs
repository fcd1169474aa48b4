//! Yes/no, choice and text answers in the browser reach the waiting agent.

use reqwest::StatusCode;
use serde_json::json;

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::browser::Browser;
use crate::common::server::s;
use crate::support::{awaited, close, database_choice, setup};

#[tokio::test]
async fn bool_choose_and_text_answers_reach_the_waiting_agent() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    // Created first, so that its ten seconds run out while the other cases are answered.
    let expiring = srv
        .create(json!({"question": "Restart the worker?", "kind": "bool",
            "ttl_seconds": 10, "default_outcome": false}))
        .await;

    // bool: a remark typed first, then one tap on the yes button.
    let h = srv
        .create(json!({"question": "Deploy v2.3 to production?", "kind": "bool",
            "project": "billing", "yes_label": "Ship it", "no_label": "Hold",
            "context_md": "Changes since **v2.2**:\n\n- faster invoices\n- `GET /v2/bills`\n\nSee https://example.com/releases/v2.3.0/notes-for-the-billing-service-with-a-long-path"}))
        .await;
    b.goto(s(&h, "web_url")).await;
    let yes = b.find("button[type=submit][name=value][value=yes]").await;
    assert_eq!(yes.text().await.unwrap().trim(), "Ship it");
    let no = b.find("button[type=submit][name=value][value=no]").await;
    assert_eq!(no.text().await.unwrap().trim(), "Hold");
    assert!(
        !b.has("#submit").await,
        "bool has no separate submit button"
    );
    assert_fit_for_a_phone(&b, "bool").await;
    b.screenshot("bool").await;
    b.type_into("#remark", "after 6pm").await;
    b.click_and_wait("button[name=value][value=yes]").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(d["outcome"], true);
    assert_eq!(d["outcome_source"], "human");
    assert_eq!(d["remark"], "after 6pm");
    assert_eq!(result_status(&b).await, "answered");
    assert!(b.text().await.contains("after 6pm"), "the remark is shown");
    assert!(
        !b.has("form#answer").await,
        "an answered page offers no form"
    );
    assert_fit_for_a_phone(&b, "answered bool").await;
    b.screenshot("answered-bool").await;

    // choose: the recommended option is marked; the person picks another one.
    let h = srv.create(database_choice()).await;
    b.goto(s(&h, "web_url")).await;
    for i in 0..3 {
        let input = b.find(&format!("input#opt-{i}[name=value]")).await;
        assert_eq!(input.attr("type").await.unwrap().as_deref(), Some("radio"));
        assert!(b.has(&format!("label[for=opt-{i}]")).await);
    }
    assert_eq!(
        b.attr_of("#opt-1", "value").await.as_deref(),
        Some("SQLite")
    );
    assert_recommended(&b, "opt-1").await;
    assert!(b.has("#opt-other[value=__other__]").await);
    assert!(b.has("input#other[name=other]").await);
    assert_fit_for_a_phone(&b, "choose").await;
    b.screenshot("choose").await;
    b.click("label[for=opt-0]").await;
    b.click_and_wait("#submit").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(
        (&d["status"], &d["outcome"]),
        (&json!("answered"), &json!("PostgreSQL")),
        "{d}"
    );
    assert_eq!(d["custom"], false);
    assert_eq!(result_status(&b).await, "answered");
    b.screenshot("answered-choose").await;

    // choose, multi: ticked in reverse order, answered in option order.
    let h = srv
        .create(
            json!({"question": "Which regions get the rollout?", "kind": "choose",
            "multi": true, "options": ["eu-west", "us-east", "ap-south", "sa-east"]}),
        )
        .await;
    b.goto(s(&h, "web_url")).await;
    assert_eq!(
        b.attr_of("#opt-0", "type").await.as_deref(),
        Some("checkbox")
    );
    assert_eq!(
        b.attr_of("#opt-other", "type").await.as_deref(),
        Some("checkbox")
    );
    b.screenshot("choose-multi").await;
    b.click("label[for=opt-3]").await;
    b.click("label[for=opt-1]").await;
    b.click_and_wait("#submit").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(d["outcome"], json!(["us-east", "sa-east"]));

    // choose, Other: the typed text is the answer.
    let h = srv
        .create(json!({"question": "Which queue?", "kind": "choose",
            "options": ["RabbitMQ", "SQS"], "placeholder": "another queue"}))
        .await;
    b.goto(s(&h, "web_url")).await;
    b.click("label[for=opt-other]").await;
    b.type_into("#other", "NATS JetStream").await;
    b.click_and_wait("#submit").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(d["outcome"], "NATS JetStream");
    assert_eq!(d["custom"], true);
    assert!(b.text().await.contains("NATS JetStream"));

    // text: typed into the text area.
    let h = srv
        .create(
            json!({"question": "What should the release notes say?", "kind": "text",
            "placeholder": "one or two lines"}),
        )
        .await;
    b.goto(s(&h, "web_url")).await;
    let area = b.find("textarea#value[name=value]").await;
    assert_eq!(
        area.attr("placeholder").await.unwrap().as_deref(),
        Some("one or two lines")
    );
    assert_fit_for_a_phone(&b, "text").await;
    b.screenshot("text").await;
    b.type_into("#value", "Faster invoices, new bills endpoint.")
        .await;
    b.click_and_wait("#submit").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(d["outcome"], "Faster invoices, new bills endpoint.");
    assert_eq!(result_status(&b).await, "answered");

    // The first decision expired meanwhile: the agent gets the default, the page says so.
    let (status, d) = srv.await_decision(s(&expiring, "decision_id"), 30).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(d["status"], "expired", "{d}");
    assert_eq!(d["outcome"], false);
    assert_eq!(d["outcome_source"], "default");
    b.goto(s(&expiring, "web_url")).await;
    assert_eq!(result_status(&b).await, "expired");
    assert!(
        !b.has("form#answer").await,
        "an expired page offers no form"
    );
    assert_fit_for_a_phone(&b, "expired").await;
    b.screenshot("expired").await;

    close(b, srv).await;
}

/// The option `id` is the recommended one, with a visible "Recommended" badge, and no
/// other option is marked.
async fn assert_recommended(b: &Browser, id: &str) {
    let marked = b
        .js(
            "const marked = [...document.querySelectorAll('.recommended')];
             const options = [...document.querySelectorAll('input[name=value]')];
             const owner = el => options.find(o => el === o || el.contains(o)
                 || (el.htmlFor && el.htmlFor === o.id) || (o.labels && [...o.labels].includes(el)));
             return [...new Set(marked.map(owner).filter(o => o).map(o => o.id))];",
            vec![],
        )
        .await;
    assert_eq!(marked, json!([id]), "the recommended mark is on {marked}");
    let badge = b
        .js(
            "const input = document.getElementById(arguments[0]);
             const label = document.querySelector(`label[for='${arguments[0]}']`);
             const near = label || input.closest('label') || input.parentElement;
             return near.innerText;",
            vec![json!(id)],
        )
        .await;
    assert!(
        badge.as_str().unwrap_or_default().contains("Recommended"),
        "no Recommended badge beside {id}: {badge}"
    );
}
