//! Listing, and what another inbox's key or no valid key gets.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::common::server::{TestServer, s, send};

pub async fn list_pages_with_a_cursor_newest_first(srv: &TestServer) {
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

pub async fn another_inbox_gets_404(srv: &TestServer) {
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

pub async fn requests_without_a_valid_key_get_401(srv: &TestServer) {
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
