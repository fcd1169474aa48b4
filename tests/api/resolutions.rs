//! How a decision resolves: expiry, cancel, decline, a second answer, bad answers.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::common::server::{TestServer, s, send};

pub async fn expiry_applies_default_outcome_or_none(srv: &TestServer) {
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

pub async fn cancel_resolves_and_blocks_later_answers(srv: &TestServer) {
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
/// (docs/API.md), not the `410` a person answering late gets.
pub async fn cancel_of_an_expired_decision_gets_409(srv: &TestServer) {
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

pub async fn decline_keeps_the_remark(srv: &TestServer) {
    let h = srv
        .create(json!({"question": "Q", "kind": "choose", "options": ["a", "b"]}))
        .await;
    let page = srv.client.get(s(&h, "web_url")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    srv.answer_ok(
        s(&h, "web_url"),
        json!({"action": "decline", "remark": "ask Sam"}),
    )
    .await;
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

pub async fn second_answer_gets_409(srv: &TestServer) {
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let (first, _) = srv.answer(s(&h, "web_url"), json!({"value": "yes"})).await;
    let (second, err) = srv.answer(s(&h, "web_url"), json!({"value": "no"})).await;
    assert_eq!(first, StatusCode::OK);
    assert_eq!(second, StatusCode::CONFLICT);
    assert!(s(&err["error"], "message").contains("answered"));
    assert_eq!(srv.get(s(&h, "decision_id")).await["outcome"], true);
}

pub async fn bad_answers_are_refused_with_their_path(srv: &TestServer) {
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
