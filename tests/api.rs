//! The agent API against a real server on port 0, on SQLite and on PostgreSQL.

mod common;

use std::time::{Duration, Instant};

use common::server::{TestServer, s, send};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Runs each case once on a fresh SQLite file and once on a fresh PostgreSQL database.
macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let db = crate::common::db::fresh_sqlite_url();
                    let srv = crate::common::server::TestServer::start(&db.url).await;
                    super::$case(&srv).await;
                    srv.stop().await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(db) = crate::common::db::fresh_pg_url().await else { return };
                    let srv = crate::common::server::TestServer::start(&db.url).await;
                    super::$case(&srv).await;
                    srv.stop().await;
                }
            )*
        }
    };
}

on_both_backends!(
    every_kind_is_created_and_answered,
    each_validation_rule_is_refused_with_its_path,
    harmless_problems_become_warnings,
    idempotent_create_returns_the_first_handle,
    await_returns_at_once_when_resolved,
    await_wakes_on_an_answer_made_while_it_waits,
    await_returns_pending_after_its_timeout,
    expiry_applies_default_outcome_or_none,
    cancel_resolves_and_blocks_later_answers,
    cancel_of_an_expired_decision_gets_409,
    decline_keeps_the_remark,
    second_answer_gets_409,
    list_pages_with_a_cursor_newest_first,
    another_inbox_gets_404,
    requests_without_a_valid_key_get_401,
    bad_answers_are_refused_with_their_path,
    concurrent_answers_and_cancels_have_one_winner,
    answers_racing_expiry_have_one_outcome,
);

async fn every_kind_is_created_and_answered(srv: &TestServer) {
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

async fn each_validation_rule_is_refused_with_its_path(srv: &TestServer) {
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
}

async fn harmless_problems_become_warnings(srv: &TestServer) {
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

async fn idempotent_create_returns_the_first_handle(srv: &TestServer) {
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

async fn await_returns_at_once_when_resolved(srv: &TestServer) {
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    srv.answer(s(&h, "web_url"), json!({"value": false})).await;
    let started = Instant::now();
    let (status, d) = srv.await_decision(s(&h, "decision_id"), 30).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(d["status"], "answered");
    assert_eq!(d["outcome"], false);
    assert!(started.elapsed() < Duration::from_secs(10));
}

async fn await_wakes_on_an_answer_made_while_it_waits(srv: &TestServer) {
    let h = srv.create(json!({"question": "Q", "kind": "text"})).await;
    let id = s(&h, "decision_id").to_string();
    let waiting = {
        let req = srv.req(
            Method::GET,
            &format!("/v1/decisions/{id}/await?timeout_s=60"),
        );
        tokio::spawn(async move { send(req).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the await must park while pending");
    let answered = Instant::now();
    let (status, _) = srv.answer(s(&h, "web_url"), json!({"value": "ok"})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, d) = waiting.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(d["status"], "answered");
    assert_eq!(d["outcome"], "ok");
    // Far below the 60 s timeout: it was woken, not timed out.
    assert!(answered.elapsed() < Duration::from_secs(10));
}

async fn await_returns_pending_after_its_timeout(srv: &TestServer) {
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let started = Instant::now();
    let (status, d) = srv.await_decision(s(&h, "decision_id"), 1).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(d["status"], "pending");
    assert!(d["outcome"].is_null());
    assert!(started.elapsed() >= Duration::from_millis(900));
    let (status, err) = srv.await_decision(s(&h, "decision_id"), 0).await;
    assert_eq!(status, StatusCode::OK, "{err}");
    let (status, err) = send(srv.req(
        Method::GET,
        &format!(
            "/v1/decisions/{}/await?timeout_s=soon",
            s(&h, "decision_id")
        ),
    ))
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(err["error"]["details"][0]["path"], "timeout_s");
}

async fn expiry_applies_default_outcome_or_none(srv: &TestServer) {
    let with_default = srv
        .create(json!({"question": "Ship it?", "kind": "bool", "ttl_seconds": 10, "default_outcome": false}))
        .await;
    let without = srv
        .create(json!({"question": "Name it?", "kind": "text", "ttl_seconds": 10}))
        .await;
    let (a, b) = tokio::join!(
        srv.await_decision(s(&with_default, "decision_id"), 60),
        srv.await_decision(s(&without, "decision_id"), 60),
    );
    let (a, b) = (a.1, b.1);
    assert_eq!(a["status"], "expired", "{a}");
    assert_eq!(a["outcome"], false);
    assert_eq!(a["outcome_source"], "default");
    assert_eq!(a["answered_at"], a["expires_at"]);
    assert!(s(&a, "answer_text").contains("not the user"), "{a}");
    assert_eq!(b["status"], "expired", "{b}");
    assert!(b["outcome"].is_null());
    assert!(b["outcome_source"].is_null());
    assert!(
        s(&b, "answer_text")
            .to_lowercase()
            .contains("nobody answered"),
        "{b}"
    );
    // A person who opens the link late cannot answer it.
    let (status, err) = srv
        .answer(s(&without, "web_url"), json!({"value": "late"}))
        .await;
    assert_eq!(status, StatusCode::GONE, "{err}");
    assert_eq!(err["error"]["code"], "expired");
}

async fn cancel_resolves_and_blocks_later_answers(srv: &TestServer) {
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let id = s(&h, "decision_id");
    let (status, d) = send(
        srv.req(Method::POST, &format!("/v1/decisions/{id}/cancel"))
            .json(&json!({"reason": "no longer needed"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    assert_eq!(d["status"], "cancelled");
    assert!(d["outcome"].is_null());
    let (status, err) = srv.answer(s(&h, "web_url"), json!({"value": true})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(err["error"]["code"], "already_resolved");
    let (status, _) = send(srv.req(Method::POST, &format!("/v1/decisions/{id}/cancel"))).await;
    assert_eq!(status, StatusCode::CONFLICT);
}

/// Expiry resolves a decision like an answer does: a later cancel is `409 already_resolved`
/// (DESIGN.md §2), not the `410` a person answering late gets.
async fn cancel_of_an_expired_decision_gets_409(srv: &TestServer) {
    let h = srv
        .create(json!({"question": "Q", "kind": "bool", "ttl_seconds": 10}))
        .await;
    let id = s(&h, "decision_id");
    // The expiry sweep, run as if its time had come.
    let later = sayso::service::now() + time::Duration::minutes(1);
    let expired = srv.svc.store().expire_due(later, 1000).await.unwrap();
    assert!(
        expired.iter().any(|e| e.id.to_string() == id),
        "{expired:?}"
    );
    let (status, err) = send(srv.req(Method::POST, &format!("/v1/decisions/{id}/cancel"))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{err}");
    assert_eq!(err["error"]["code"], "already_resolved");
    assert_eq!(srv.get(id).await["status"], "expired");
    let (status, err) = srv.answer(s(&h, "web_url"), json!({"value": true})).await;
    assert_eq!(status, StatusCode::GONE, "{err}");
}

async fn decline_keeps_the_remark(srv: &TestServer) {
    let h = srv
        .create(json!({"question": "Q", "kind": "choose", "options": ["a", "b"]}))
        .await;
    let page = srv.client.get(s(&h, "web_url")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let (status, r) = srv
        .answer(
            s(&h, "web_url"),
            json!({"action": "decline", "remark": "ask Sam"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    let d = srv.get(s(&h, "decision_id")).await;
    assert_eq!(d["status"], "declined");
    assert!(d["outcome"].is_null());
    assert_eq!(d["remark"], "ask Sam");
    assert!(s(&d, "answer_text").contains("declined"));
    // The audit trail has every step.
    let (status, events) = send(srv.req(
        Method::GET,
        &format!("/v1/decisions/{}/events", s(&h, "decision_id")),
    ))
    .await;
    assert_eq!(status, StatusCode::OK);
    let kinds: Vec<&str> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["created", "viewed", "declined"]);
}

async fn second_answer_gets_409(srv: &TestServer) {
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let (first, _) = srv.answer(s(&h, "web_url"), json!({"value": "yes"})).await;
    let (second, err) = srv.answer(s(&h, "web_url"), json!({"value": "no"})).await;
    assert_eq!(first, StatusCode::OK);
    assert_eq!(second, StatusCode::CONFLICT);
    assert!(s(&err["error"], "message").contains("answered"));
    assert_eq!(srv.get(s(&h, "decision_id")).await["outcome"], true);
}

async fn list_pages_with_a_cursor_newest_first(srv: &TestServer) {
    let mut ids = Vec::new();
    for i in 0..7 {
        let kind = if i % 2 == 0 { "todo" } else { "bool" };
        let h = srv
            .create(json!({"question": format!("Q{i}"), "kind": kind, "project": if i < 4 { "alpha" } else { "beta" }}))
            .await;
        ids.push(s(&h, "decision_id").to_string());
    }
    ids.reverse();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/decisions?limit=3&cursor={c}"),
            None => "/v1/decisions?limit=3".to_string(),
        };
        let (status, page) = send(srv.req(Method::GET, &path)).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        for item in page["items"].as_array().unwrap() {
            seen.push(s(item, "decision_id").to_string());
        }
        match page["next"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, ids, "every decision once, newest first");
    let (_, todos) = send(srv.req(Method::GET, "/v1/decisions?kind=todo&project=alpha")).await;
    assert_eq!(todos["items"].as_array().unwrap().len(), 2, "{todos}");
    let (_, pending) = send(srv.req(Method::GET, "/v1/decisions?status=answered")).await;
    assert_eq!(pending["items"].as_array().unwrap().len(), 0);
    let (status, err) = send(srv.req(Method::GET, "/v1/decisions?status=done")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(err["error"]["details"][0]["path"], "status");
}

async fn another_inbox_gets_404(srv: &TestServer) {
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let id = s(&h, "decision_id");
    let other = srv.other_inbox_key("other").await;
    for (method, path) in [
        (Method::GET, format!("/v1/decisions/{id}")),
        (Method::GET, format!("/v1/decisions/{id}/await?timeout_s=1")),
        (Method::POST, format!("/v1/decisions/{id}/cancel")),
    ] {
        let (status, err) = send(
            srv.client
                .request(method, srv.url(&path))
                .bearer_auth(&other),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {err}");
        assert_eq!(err["error"]["code"], "not_found");
    }
    let (_, list) = send(srv.client.get(srv.url("/v1/decisions")).bearer_auth(&other)).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 0);
    // Still pending for its owner.
    assert_eq!(srv.get(id).await["status"], "pending");
}

async fn requests_without_a_valid_key_get_401(srv: &TestServer) {
    for auth in [None, Some("sk_wrong"), Some("not-a-key")] {
        let mut req = srv.client.get(srv.url("/v1/decisions"));
        if let Some(a) = auth {
            req = req.bearer_auth(a);
        }
        let (status, err) = send(req).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(err["error"]["code"], "unauthorized");
    }
}

async fn bad_answers_are_refused_with_their_path(srv: &TestServer) {
    let choose = srv
        .create(json!({"question": "Q", "kind": "choose", "options": ["a", "b"], "allow_other": false, "allow_remark": false}))
        .await;
    let form = srv
        .create(json!({"question": "Q", "kind": "form", "schema": {"type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}, "email": {"type": "string", "format": "email"}},
            "required": ["n"]}}))
        .await;
    let cases = [
        (&choose, json!({"value": "c"}), "value"),
        (&choose, json!({"other": "typed"}), "other"),
        (&choose, json!({"value": "a", "remark": "hi"}), "remark"),
        (&form, json!({"value": {"n": 9}}), "value.n"),
        (&form, json!({"value": {"email": "x@y.z"}}), "value.n"),
        (
            &form,
            json!({"value": {"n": 2, "email": "nope"}}),
            "value.email",
        ),
        (&form, json!({"action": "done"}), "action"),
    ];
    for (h, body, path) in cases {
        let (status, err) = srv.answer(s(h, "web_url"), body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body} → {err}");
        let paths = err["error"]["details"].to_string();
        assert!(
            paths.contains(&format!("\"{path}")),
            "{body}: expected {path} in {paths}"
        );
    }
    // Nothing was resolved by the refused answers.
    assert_eq!(srv.get(s(&form, "decision_id")).await["status"], "pending");
    // A forged link is simply not found.
    let forged = format!("{}/d/{}", srv.base, "A".repeat(48));
    let (status, _) = srv.answer(&forged, json!({"value": true})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

async fn concurrent_answers_and_cancels_have_one_winner(srv: &TestServer) {
    let mut handles = Vec::new();
    for i in 0..25 {
        handles.push(
            srv.create(json!({"question": format!("race {i}"), "kind": "bool"}))
                .await,
        );
    }
    let mut tasks = Vec::new();
    for h in &handles {
        for attempt in 0..8 {
            let client = srv.client.clone();
            let web_url = s(h, "web_url").to_string();
            let cancel_url = srv.url(&format!("/v1/decisions/{}/cancel", s(h, "decision_id")));
            let key = srv.key.clone();
            tasks.push(tokio::spawn(async move {
                let req = if attempt % 3 == 0 {
                    client.post(cancel_url).bearer_auth(key)
                } else {
                    client
                        .post(web_url)
                        .json(&json!({"value": attempt % 2 == 0}))
                };
                let (status, body) = send(req).await;
                (status, body)
            }));
        }
    }
    let mut wins = std::collections::HashMap::<String, usize>::new();
    for (i, t) in tasks.into_iter().enumerate() {
        let (status, body) = t.await.unwrap();
        let id = s(&handles[i / 8], "decision_id").to_string();
        match status {
            StatusCode::OK => *wins.entry(id).or_default() += 1,
            StatusCode::CONFLICT => assert_eq!(body["error"]["code"], "already_resolved"),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    for h in &handles {
        let id = s(h, "decision_id");
        assert_eq!(wins.get(id), Some(&1), "exactly one winner for {id}");
        let d = srv.get(id).await;
        assert!(d["status"] == "answered" || d["status"] == "cancelled");
    }
}

async fn answers_racing_expiry_have_one_outcome(srv: &TestServer) {
    let mut handles = Vec::new();
    for i in 0..6 {
        handles.push(
            srv.create(
                json!({"question": format!("expiry race {i}"), "kind": "bool", "ttl_seconds": 10}),
            )
            .await,
        );
    }
    let mut awaits = Vec::new();
    let mut answers = Vec::new();
    for (i, h) in handles.iter().enumerate() {
        let id = s(h, "decision_id").to_string();
        let req = srv.req(
            Method::GET,
            &format!("/v1/decisions/{id}/await?timeout_s=60"),
        );
        awaits.push(tokio::spawn(async move { send(req).await }));
        let expires_at = time::OffsetDateTime::parse(
            s(h, "expires_at"),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        // Nine answers each: on even decisions from expiry to 40 ms after it (expiry must
        // win), on odd ones from 40 ms before to 40 ms after (the first answer must win).
        let offsets: Vec<i64> = if i % 2 == 0 {
            (0..=40).step_by(5).collect()
        } else {
            (-40..=40).step_by(10).collect()
        };
        for offset_ms in offsets {
            let at = expires_at + time::Duration::milliseconds(offset_ms);
            let client = srv.client.clone();
            let url = s(h, "web_url").to_string();
            answers.push(tokio::spawn(async move {
                let wait = (at - time::OffsetDateTime::now_utc()).max(time::Duration::ZERO);
                tokio::time::sleep(wait.try_into().unwrap()).await;
                let (status, _) = send(client.post(url).json(&json!({"value": "yes"}))).await;
                status
            }));
        }
    }
    for (i, h) in handles.iter().enumerate() {
        let statuses: Vec<StatusCode> = {
            let mut v = Vec::new();
            for t in answers.drain(..9) {
                v.push(t.await.unwrap());
            }
            v
        };
        let oks = statuses.iter().filter(|s| **s == StatusCode::OK).count();
        assert!(
            statuses
                .iter()
                .all(|s| [StatusCode::OK, StatusCode::CONFLICT, StatusCode::GONE].contains(s)),
            "{statuses:?}"
        );
        let d = srv.get(s(h, "decision_id")).await;
        match d["status"].as_str().unwrap() {
            "answered" => {
                assert_eq!(oks, 1, "one answer won: {statuses:?}");
                assert_eq!(d["outcome"], true);
            }
            "expired" => {
                assert_eq!(oks, 0, "no answer may win after expiry: {statuses:?}");
                assert!(d["outcome"].is_null());
                assert!(statuses.iter().all(|s| *s == StatusCode::GONE));
            }
            other => panic!("unexpected status {other}"),
        }
        let (_, awaited) = (&mut awaits[i]).await.unwrap();
        assert_eq!(
            awaited["status"], d["status"],
            "the await saw the final state"
        );
    }
}
