//! Awaiting a decision: resolved, woken by an answer, timed out.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::common::server::{TestServer, s, send};

pub async fn await_returns_at_once_when_resolved(srv: &TestServer) {
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    srv.answer(s(&h, "web_url"), json!({"value": false})).await;
    let started = Instant::now();
    let (status, d) = srv.await_decision(s(&h, "decision_id"), 30).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(d["status"], "answered");
    assert_eq!(d["outcome"], false);
    assert!(started.elapsed() < Duration::from_secs(10));
}

pub async fn await_wakes_on_an_answer_made_while_it_waits(srv: &TestServer) {
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
    srv.answer_ok(s(&h, "web_url"), json!({"value": "ok"}))
        .await;
    let (status, d) = waiting.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(d["status"], "answered");
    assert_eq!(d["outcome"], "ok");
    // Far below the 60 s timeout: it was woken, not timed out.
    assert!(answered.elapsed() < Duration::from_secs(10));
}

pub async fn await_returns_pending_after_its_timeout(srv: &TestServer) {
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
