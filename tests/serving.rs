//! The server's edges: shutdown, slow clients, body limits, health, unknown routes.

mod common;

use std::time::{Duration, Instant};

use common::server::{TestServer, s, send};
use reqwest::{Method, StatusCode};
use sayso::app::ServeLimits;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_answers_parked_awaits() {
    let db = common::db::fresh_sqlite_url();
    let mut srv = TestServer::start(&db.url).await;
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let req = srv.req(
        Method::GET,
        &format!("/v1/decisions/{}/await?timeout_s=300", s(&h, "decision_id")),
    );
    let parked = tokio::spawn(async move { send(req).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    srv.begin_stop();
    let (status, d) = tokio::time::timeout(Duration::from_secs(10), parked)
        .await
        .expect("the await is answered on shutdown")
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(d["status"], "pending");
    assert!(started.elapsed() < Duration::from_secs(5));
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_sends_half_a_header_is_disconnected() {
    let db = common::db::fresh_sqlite_url();
    let limits = ServeLimits {
        header_read_timeout: Duration::from_secs(1),
        ..ServeLimits::default()
    };
    let srv = TestServer::start_with(&db.url, limits).await;
    let addr = srv.base.trim_start_matches("http://").to_string();
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // Others are served meanwhile.
    let (status, _) = send(srv.client.get(srv.url("/healthz"))).await;
    assert_eq!(status, StatusCode::OK);
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut buf)).await;
    assert!(
        read.is_ok(),
        "the stalled connection must be closed by the server"
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_limit_get_413_in_the_error_shape() {
    let db = common::db::fresh_sqlite_url();
    let srv = TestServer::start(&db.url).await;
    let huge = format!(
        r#"{{"question":"Q","kind":"bool","context_md":"{}"}}"#,
        "m".repeat(9 * 1024 * 1024)
    );
    let (status, err) = send(
        srv.req(Method::POST, "/v1/decisions")
            .header("content-type", "application/json")
            .body(huge),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(err["error"]["code"], "payload_too_large");
    let h = srv.create(json!({"question": "Q", "kind": "text"})).await;
    let (status, err) = srv
        .answer(s(&h, "web_url"), json!({"value": "v".repeat(100 * 1024)}))
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{err}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_and_unknown_routes() {
    let db = common::db::fresh_sqlite_url();
    let srv = TestServer::start(&db.url).await;
    let (status, _) = send(srv.client.get(srv.url("/healthz"))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = send(srv.client.get(srv.url("/readyz"))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, err) = send(srv.client.get(srv.url("/v2/nothing"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(err["error"]["code"], "not_found");
    let (status, err) = send(srv.req(Method::DELETE, "/v1/decisions")).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(err["error"]["code"].is_string());
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_page_shows_without_deciding() {
    let db = common::db::fresh_sqlite_url();
    let srv = TestServer::start(&db.url).await;
    let h = srv
        .create(json!({"question": "Deploy <b>now</b>?", "kind": "bool"}))
        .await;
    for _ in 0..3 {
        let resp = srv.client.get(s(&h, "web_url")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["referrer-policy"], "no-referrer");
        assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
        let html = resp.text().await.unwrap();
        // Escaped, however the template engine spells the entities.
        assert!(!html.contains("<b>now</b>"), "{html}");
        assert!(
            html.contains("&lt;b&gt;now&lt;/b&gt;") || html.contains("&#60;b&#62;now"),
            "{html}"
        );
    }
    assert_eq!(srv.get(s(&h, "decision_id")).await["status"], "pending");
    srv.stop().await;
}
