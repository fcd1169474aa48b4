//! A form answered in the browser: refused, corrected, and received by the agent.

use serde_json::json;

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::browser::Browser;
use crate::common::server::s;
use crate::support::{awaited, close, setup};

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
            b.attr_of(&format!("#f-{i}"), "type")
                .await
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

    close(b, srv).await;
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
