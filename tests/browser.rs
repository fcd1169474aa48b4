//! A person answers in a real Chromium at phone width (360×800), and the agent's await gets
//! that answer. The pages follow docs/PAGES.md; screenshots land in `target/screenshots/`.
//!
//! Browsers take turns (see `common::browser`), so each area runs its cases one after the
//! other in one session.

mod common;

#[path = "browser/checks.rs"]
mod checks;
#[path = "browser/hostile.rs"]
mod hostile;
#[path = "browser/weight.rs"]
mod weight;

use checks::{assert_fit_for_a_phone, result_status};
use common::browser::Browser;
use common::db::{SqliteTestDb, fresh_sqlite_url};
use common::server::{TestServer, s};
use fantoccini::Locator;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A browser and a server on a fresh SQLite file; `None` when the browser is skipped.
pub async fn setup() -> Option<(Browser, TestServer, SqliteTestDb)> {
    let browser = Browser::start().await?;
    let db = fresh_sqlite_url();
    let srv = TestServer::start(&db.url).await;
    Some((browser, srv, db))
}

/// The agent's await, which must already have the answer.
pub async fn awaited(srv: &TestServer, handle: &Value) -> Value {
    let (status, d) = srv.await_decision(s(handle, "decision_id"), 10).await;
    assert_eq!(status, StatusCode::OK, "await failed: {d}");
    d
}

/// The feed link of the `default` inbox.
pub async fn feed_url(srv: &TestServer) -> String {
    let inbox = srv
        .svc
        .store()
        .inbox_by_name("default")
        .await
        .unwrap()
        .expect("the default inbox");
    srv.svc.feed_url(&inbox)
}

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
    let h = srv
        .create(
            json!({"question": "Which database for the pilot?", "kind": "choose",
            "options": [
                {"label": "PostgreSQL", "description": "shared by all replicas"},
                {"label": "SQLite", "description": "one file, nothing to run",
                 "preview": "```toml\n[database]\nurl = \"sqlite://sayso.db\"\n```"},
                {"label": "MySQL"}
            ],
            "recommended": 1}),
        )
        .await;
    b.goto(s(&h, "web_url")).await;
    for i in 0..3 {
        let input = b.find(&format!("input#opt-{i}[name=value]")).await;
        assert_eq!(input.attr("type").await.unwrap().as_deref(), Some("radio"));
        assert!(b.has(&format!("label[for=opt-{i}]")).await);
    }
    assert_eq!(
        b.find("#opt-1")
            .await
            .attr("value")
            .await
            .unwrap()
            .as_deref(),
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
        b.find("#opt-0")
            .await
            .attr("type")
            .await
            .unwrap()
            .as_deref(),
        Some("checkbox")
    );
    assert_eq!(
        b.find("#opt-other")
            .await
            .attr("type")
            .await
            .unwrap()
            .as_deref(),
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

    b.close().await;
    srv.stop().await;
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

#[tokio::test]
async fn form_answers_are_corrected_after_a_refusal_and_reach_the_agent() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let h = srv
        .create(
            json!({"question": "Order the team licences", "kind": "form",
            "schema": {"type": "object", "properties": {
                "name": {"type": "string", "title": "Your name", "minLength": 2},
                "email": {"type": "string", "format": "email", "title": "Billing email"},
                "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 10},
                "plan": {"type": "string", "title": "Plan", "enum": ["free", "pro", "team"],
                         "enumNames": ["Free", "Pro", "Team"]},
                "newsletter": {"type": "boolean", "title": "Send me the newsletter"}
            }, "required": ["name", "email", "seats", "plan"]}}),
        )
        .await;
    b.goto(s(&h, "web_url")).await;
    let ty = |i: usize| {
        let b = &b;
        async move {
            b.find(&format!("#f-{i}"))
                .await
                .attr("type")
                .await
                .unwrap()
                .unwrap_or_default()
        }
    };
    assert_eq!(ty(0).await, "text");
    assert_eq!(ty(1).await, "email");
    assert_eq!(ty(2).await, "number");
    assert_eq!(ty(4).await, "checkbox");
    for (i, name) in ["name", "email", "seats", "plan", "newsletter"]
        .iter()
        .enumerate()
    {
        let control = b.find(&format!("#f-{i}")).await;
        assert_eq!(control.attr("name").await.unwrap().as_deref(), Some(*name));
    }
    assert_eq!(
        b.find("#f-3")
            .await
            .tag_name()
            .await
            .unwrap()
            .to_lowercase(),
        "select"
    );
    assert_fit_for_a_phone(&b, "form").await;
    b.screenshot("form").await;

    b.type_into("#f-0", "Ada Lovelace").await;
    b.type_into("#f-1", "ada-at-example").await;
    b.type_into("#f-2", "42").await;
    b.find("#f-3").await.select_by_value("pro").await.unwrap();
    b.click("label[for=f-4]").await;
    // The page may check in the browser too; the server must check whatever it gets.
    b.js(
        "document.getElementById('answer').noValidate = true; return null",
        vec![],
    )
    .await;
    b.click_and_wait("#submit").await;

    let refused = b
        .js(
            "const nav = performance.getEntriesByType('navigation')[0];
             return nav.responseStatus === undefined ? null : nav.responseStatus;",
            vec![],
        )
        .await;
    if !refused.is_null() {
        assert_eq!(refused, 422, "a refused answer is a 422 page");
    }
    assert!(b.has(".errors[role=alert]").await, "no error summary");
    let email_error = field_error_beside(&b, "f-1").await;
    let seats_error = field_error_beside(&b, "f-2").await;
    assert!(
        email_error.is_some(),
        "no .field-error beside the email field"
    );
    assert!(
        seats_error.is_some(),
        "no .field-error beside the seats field"
    );
    assert_ne!(email_error, seats_error, "each field has its own message");
    assert_eq!(field_error_beside(&b, "f-0").await, None);
    assert_eq!(value_of(&b, "f-0").await, "Ada Lovelace");
    assert_eq!(value_of(&b, "f-1").await, "ada-at-example");
    assert_eq!(value_of(&b, "f-2").await, "42");
    assert_eq!(value_of(&b, "f-3").await, "pro");
    assert!(
        b.find("#f-4").await.is_selected().await.unwrap(),
        "the checkbox stays ticked"
    );
    assert_eq!(srv.get(s(&h, "decision_id")).await["status"], "pending");
    assert_fit_for_a_phone(&b, "form with errors").await;
    b.screenshot("form-errors").await;

    b.type_into("#f-1", "ada@example.com").await;
    b.type_into("#f-2", "3").await;
    b.click_and_wait("#submit").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(
        d["outcome"],
        json!({"name": "Ada Lovelace", "email": "ada@example.com", "seats": 3,
               "plan": "pro", "newsletter": true})
    );
    assert_eq!(result_status(&b).await, "answered");
    b.screenshot("answered-form").await;

    // The coding-agent shape: a chip per question, one section each.
    let h = srv
        .create(json!({"question": "Set up the new service", "kind": "form",
        "questions": [
            {"id": "db", "question": "Which database?", "header": "Database",
             "options": [{"label": "PostgreSQL", "description": "shared"},
                         {"label": "SQLite", "description": "embedded"}],
             "recommended": 0},
            {"id": "extras", "question": "Which extras?", "header": "Extras",
             "multiSelect": true,
             "options": [{"label": "metrics"}, {"label": "tracing"}, {"label": "audit"}]},
            {"id": "runtime", "question": "Which runtime?", "header": "Runtime",
             "options": [{"label": "tokio"}, {"label": "async-std"}]},
            {"id": "go", "question": "Proceed today?", "header": "Go ahead", "type": "yesno"},
            {"id": "notes", "question": "Anything else?", "header": "Notes",
             "placeholder": "optional notes"}
        ]}))
        .await;
    b.goto(s(&h, "web_url")).await;
    for header in ["Database", "Extras", "Runtime", "Go ahead", "Notes"] {
        let shown = b
            .js(
                "return [...document.querySelectorAll('#answer *')].some(el =>
                     el.children.length === 0 && el.textContent.trim() === arguments[0]
                     && el.getBoundingClientRect().height > 0);",
                vec![json!(header)],
            )
            .await;
        assert_eq!(shown, true, "no chip {header:?} on the page");
    }
    for question in [
        "Which database?",
        "Which extras?",
        "Which runtime?",
        "Proceed today?",
    ] {
        assert!(b.text().await.contains(question), "{question} not shown");
    }
    assert_fit_for_a_phone(&b, "questions form").await;
    b.screenshot("form-questions").await;
    tick(&b, "input[name=db][value=SQLite]").await;
    tick(&b, "input[name=extras][value=audit]").await;
    tick(&b, "input[name=extras][value=metrics]").await;
    tick(&b, "input[name=runtime][value=__other__]").await;
    b.type_into("input[name='other:runtime']", "smol").await;
    tick(&b, "input[name=go][value=yes]").await;
    b.type_into("textarea[name=notes]", "ship it").await;
    b.click_and_wait("#submit").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(d["status"], "answered", "{d}");
    // A question's picks come in the order ticked.
    assert_eq!(
        d["outcome"],
        json!({"db": "SQLite", "extras": ["audit", "metrics"], "runtime": "smol",
               "go": "yes", "notes": "ship it"})
    );
    assert_eq!(d["custom"], true);
    assert_eq!(result_status(&b).await, "answered");

    b.close().await;
    srv.stop().await;
}

/// The text of the `.field-error` nearest to the control `id` (within its own field).
async fn field_error_beside(b: &Browser, id: &str) -> Option<String> {
    let found = b
        .js(
            "const control = document.getElementById(arguments[0]);
             for (let el = control.parentElement; el && el.id !== 'answer'; el = el.parentElement) {
                 const controls = el.querySelectorAll('input:not([type=hidden]), select, textarea');
                 if ([...controls].some(c => c.name !== control.name && c.name !== 'other:' + control.name))
                     return null;
                 const error = el.querySelector('.field-error');
                 if (error) return error.textContent.trim();
             }
             return null;",
            vec![json!(id)],
        )
        .await;
    found.as_str().map(str::to_owned)
}

async fn value_of(b: &Browser, id: &str) -> String {
    b.find(&format!("#{id}"))
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

/// Ticks a radio or checkbox the way a person does: on its label when it has one.
async fn tick(b: &Browser, css: &str) {
    let input = b.find(css).await;
    let id = input.attr("id").await.unwrap().unwrap_or_default();
    let label = format!("label[for='{id}']");
    if !id.is_empty() && b.has(&label).await {
        b.click(&label).await;
    } else {
        input.click().await.unwrap();
    }
    assert!(input.is_selected().await.unwrap(), "{css} not ticked");
}

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
    let feed_path = url::Url::parse(&feed).unwrap().path().to_owned();
    assert_eq!(b.path().await, feed_path, "the tap comes back to the feed");
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
    assert_eq!(b.path().await, feed_path);

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
    b.close().await;
    srv.stop().await;
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
    b.close().await;
    srv.stop().await;
}
