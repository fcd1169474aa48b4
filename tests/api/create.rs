//! Creating decisions: every kind, each validation rule, warnings, idempotency.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::server::{TestServer, s, send};

pub async fn every_kind_is_created_and_answered(srv: &TestServer) {
    let cases: Vec<(Value, Value, Value, bool)> = vec![
        (
            json!({"question": "Deploy to production?", "kind": "bool"}),
            json!({"value": "yes", "remark": "after 6pm"}),
            json!(true),
            false,
        ),
        (
            json!({"question": "Which plan?", "kind": "choose", "options": ["Plan A", {"label": "Plan B", "description": "cheaper"}]}),
            json!({"value": "Plan B"}),
            json!("Plan B"),
            false,
        ),
        (
            json!({"question": "Which regions?", "kind": "choose", "multi": true, "options": ["eu", "us", "ap"]}),
            json!({"value": ["ap", "eu"]}),
            json!(["eu", "ap"]),
            false,
        ),
        (
            json!({"question": "Which cache?", "kind": "choose", "options": ["Memcached", "None"]}),
            json!({"other": "Redis"}),
            json!("Redis"),
            true,
        ),
        (
            json!({"question": "Name this service", "kind": "text", "placeholder": "a short name"}),
            json!({"value": "payments-gateway"}),
            json!("payments-gateway"),
            false,
        ),
        (
            json!({"question": "Release details", "kind": "form", "schema": {"type": "object",
                "properties": {"version": {"type": "string", "minLength": 1}, "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
                               "notify": {"type": "boolean"}, "env": {"type": "string", "enum": ["staging", "prod"]}},
                "required": ["version", "replicas"]}}),
            json!({"value": {"version": "1.4.2", "replicas": 3, "notify": true, "env": "prod"}}),
            json!({"version": "1.4.2", "replicas": 3, "notify": true, "env": "prod"}),
            false,
        ),
        (
            json!({"question": "A few choices", "kind": "form", "questions": [
                {"id": "db", "question": "Which database?", "header": "DB", "options": [{"label": "Postgres"}, {"label": "SQLite"}]},
                {"question": "Anything else?", "type": "text"}]}),
            json!({"value": {"db": "SQLite", "Anything else?": "no"}}),
            json!({"db": "SQLite", "Anything else?": "no"}),
            false,
        ),
        (
            json!({"question": "Smoke-test checkout before 3 PM", "kind": "todo"}),
            json!({"action": "done"}),
            json!("done"),
            false,
        ),
    ];
    for (create, answer, outcome, custom) in cases {
        let handle = srv.create(create.clone()).await;
        let id = s(&handle, "decision_id");
        assert!(s(&handle, "web_url").starts_with(&srv.base));
        let (status, body) = srv.answer(s(&handle, "web_url"), answer).await;
        assert_eq!(status, StatusCode::OK, "{create} → {body}");
        let d = srv.get(id).await;
        assert_eq!(d["status"], "answered", "{d}");
        assert_eq!(d["outcome"], outcome, "{d}");
        assert_eq!(d["custom"], custom, "{d}");
        assert_eq!(d["outcome_source"], "human");
        assert!(d["answered_at"].is_string());
        assert_eq!(d["kind"], create["kind"]);
        assert!(s(&d, "answer_text").contains(s(&create, "question")), "{d}");
    }
}

pub async fn each_validation_rule_is_refused_with_its_path(srv: &TestServer) {
    let cases: Vec<(Value, &str)> = vec![
        (json!({"kind": "bool"}), "question"),
        (json!({"question": "   ", "kind": "bool"}), "question"),
        (
            json!({"question": "x".repeat(2001), "kind": "bool"}),
            "question",
        ),
        (json!({"question": 5, "kind": "bool"}), "question"),
        (json!({"question": "Q"}), "kind"),
        (json!({"question": "Q", "kind": "poll"}), "kind"),
        (
            json!({"question": "Q", "kind": "bool", "project": "p".repeat(101)}),
            "project",
        ),
        (json!({"question": "Q", "kind": "choose"}), "options"),
        (
            json!({"question": "Q", "kind": "choose", "options": ["only"]}),
            "options",
        ),
        (
            json!({"question": "Q", "kind": "choose", "options": ["a", "b", "a"]}),
            "options[2].label",
        ),
        (
            json!({"question": "Q", "kind": "choose", "options": ["a", {"label": ""}]}),
            "options[1].label",
        ),
        (
            json!({"question": "Q", "kind": "choose", "options": ["a", "l".repeat(201)]}),
            "options[1]",
        ),
        (
            json!({"question": "Q", "kind": "choose", "options": ["a", "b"], "multi": "yes"}),
            "multi",
        ),
        (json!({"question": "Q", "kind": "form"}), "schema"),
        (
            json!({"question": "Q", "kind": "form", "schema": {"type": "object", "properties": {"a": {"type": "object"}}}}),
            "schema.properties.a.type",
        ),
        (
            json!({"question": "Q", "kind": "form", "questions": [{"question": "A?"}, {"question": "A?"}]}),
            "questions[1]",
        ),
        (
            json!({"question": "Q", "kind": "bool", "context_md": "m".repeat(64 * 1024 + 1)}),
            "context_md",
        ),
        (
            json!({"question": "Q", "kind": "bool", "context_image_b64": "not base64!!"}),
            "context_image_b64",
        ),
        (
            json!({"question": "Q", "kind": "bool", "context_image_b64": "aGVsbG8gd29ybGQ="}),
            "context_image_b64",
        ),
        (
            json!({"question": "Q", "kind": "bool", "attachments": [{"name": "x", "url": "javascript:alert(1)"}]}),
            "attachments[0].url",
        ),
        (
            json!({"question": "Q", "kind": "bool", "ttl_minutes": 0}),
            "ttl_minutes",
        ),
        (
            json!({"question": "Q", "kind": "bool", "ttl_minutes": 43201}),
            "ttl_minutes",
        ),
        (
            json!({"question": "Q", "kind": "bool", "ttl_minutes": 1.5}),
            "ttl_minutes",
        ),
        (
            json!({"question": "Q", "kind": "bool", "ttl_seconds": 5}),
            "ttl_seconds",
        ),
        (
            json!({"question": "Q", "kind": "bool", "ttl_seconds": 60, "ttl_minutes": 1}),
            "ttl_seconds",
        ),
        (
            json!({"question": "Q", "kind": "bool", "default_outcome": "maybe"}),
            "default_outcome",
        ),
        (
            json!({"question": "Q", "kind": "choose", "options": ["a", "b"], "default_outcome": "c"}),
            "default_outcome",
        ),
        (
            json!({"question": "Q", "kind": "bool", "notify": "pigeon"}),
            "notify",
        ),
        (
            json!({"question": "Q", "kind": "bool", "callback_url": "ftp://example.com/x"}),
            "callback_url",
        ),
        (
            json!({"question": "Q", "kind": "bool", "completion": "https://example.com/x"}),
            "completion",
        ),
        (
            json!({"question": "Q", "kind": "bool", "completion": {"wrap_in": "data"}}),
            "completion.url",
        ),
        (
            json!({"question": "Q", "kind": "bool", "completion": {"url": "file:///etc/passwd"}}),
            "completion.url",
        ),
        (
            json!({"question": "Q", "kind": "bool", "completion": {"url": "https://example.com/x", "wrap_in": "{{outcome}}"}}),
            "completion.wrap_in",
        ),
        (
            json!({"question": "Q", "kind": "bool", "completion": {"url": "https://example.com/x", "wrap_in": 5}}),
            "completion.wrap_in",
        ),
        (
            json!({"question": "Q", "kind": "bool", "metadata": [1, 2]}),
            "metadata",
        ),
        (
            json!({"question": "Q", "kind": "bool", "metadata": {"blob": "b".repeat(5000)}}),
            "metadata",
        ),
        (
            json!({"question": "Q", "kind": "bool", "allow_remark": "no"}),
            "allow_remark",
        ),
    ];
    for (body, path) in cases {
        let (status, err) = send(srv.req(Method::POST, "/v1/decisions").json(&body)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body} → {err}");
        assert_eq!(err["error"]["code"], "validation_failed");
        let paths: Vec<&str> = err["error"]["details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["path"].as_str().unwrap())
            .collect();
        assert!(
            paths.iter().any(|p| p.starts_with(path)),
            "expected a problem at {path}, got {paths:?} for {body}"
        );
    }
    // Several problems are listed at once.
    let (_, err) = send(
        srv.req(Method::POST, "/v1/decisions")
            .json(&json!({"question": "", "kind": "choose", "options": ["a"], "ttl_minutes": -1})),
    )
    .await;
    assert!(
        err["error"]["details"].as_array().unwrap().len() >= 3,
        "{err}"
    );
    // A refused create writes nothing.
    let (_, list) = send(srv.req(Method::GET, "/v1/decisions")).await;
    assert_eq!(list["items"], json!([]), "{list}");
}

pub async fn harmless_problems_become_warnings(srv: &TestServer) {
    let handle = srv
        .create(json!({"question": "Q", "kind": "choose", "options": ["a", "b"], "recommended": 7, "mood": "curious"}))
        .await;
    let warnings = handle["warnings"].as_array().unwrap();
    assert!(warnings.len() >= 2, "{handle}");
    let text = handle["warnings"].to_string();
    assert!(
        text.contains("recommended") && text.contains("mood"),
        "{text}"
    );
}

pub async fn idempotent_create_returns_the_first_handle(srv: &TestServer) {
    let body = json!({"question": "Deploy?", "kind": "bool"});
    let first = srv
        .req(Method::POST, "/v1/decisions")
        .header("Idempotency-Key", "run-42")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), StatusCode::CREATED);
    let location = first.headers()["location"].to_str().unwrap().to_string();
    let first: Value = first.json().await.unwrap();
    assert_eq!(
        location,
        format!("/v1/decisions/{}", s(&first, "decision_id"))
    );

    let (status, again) = send(
        srv.req(Method::POST, "/v1/decisions")
            .header("Idempotency-Key", "run-42")
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["decision_id"], first["decision_id"]);
    assert_eq!(again["web_url"], first["web_url"]);

    let (status, err) = send(
        srv.req(Method::POST, "/v1/decisions")
            .header("Idempotency-Key", "run-42")
            .json(&json!({"question": "Deploy now?", "kind": "bool"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(err["error"]["code"], "idempotency_mismatch");

    let list = srv.req(Method::GET, "/v1/decisions").send().await.unwrap();
    let list: Value = list.json().await.unwrap();
    assert_eq!(
        list["items"].as_array().unwrap().len(),
        1,
        "one decision, not two"
    );
}
