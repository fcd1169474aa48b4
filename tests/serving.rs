//! The server's edges: shutdown, slow clients, body limits, health, unknown routes.

mod common;

use std::time::{Duration, Instant};

use common::server::{fresh_server, fresh_server_with, s, send};
use reqwest::{Method, StatusCode};
use sayso::app::ServeLimits;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_answers_parked_awaits() {
    let (_db, mut srv) = fresh_server().await;
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
    let limits = ServeLimits {
        header_read_timeout: Duration::from_secs(1),
        ..ServeLimits::default()
    };
    let (_db, srv) = fresh_server_with(limits).await;
    let addr = srv.addr();
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
    let (_db, srv) = fresh_server().await;
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
    let (_db, srv) = fresh_server().await;
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
    let (_db, srv) = fresh_server().await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_past_the_limit_is_told_which_limit() {
    let limits = ServeLimits {
        max_connections: 2,
        ..ServeLimits::default()
    };
    let (_db, srv) = fresh_server_with(limits).await;
    let addr = srv.addr();
    // Two connections with a request open hold both places (idle ones would make way): each
    // has sent half of a create's body.
    let half = format!(
        "POST /v1/decisions HTTP/1.1\r\nhost: sayso\r\nauthorization: Bearer {}\r\n\
         content-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"question\":",
        srv.key
    );
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        stream.write_all(half.as_bytes()).await.unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let resp = reqwest::Client::new()
        .get(srv.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(resp.headers()["retry-after"], "1");
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unavailable");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("SAYSO_MAX_CONNECTIONS") && message.contains("(2"),
        "{message}"
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_past_the_open_files_limit_is_told_so() {
    let db = common::db::fresh_sqlite_url();
    common::server::init_tls();
    // The real binary with few files to open: the database, its readers and a handful of
    // connections use them up.
    let bin = env!("CARGO_BIN_EXE_sayso");
    let state = common::first_run::StateDir::new();
    let (name, dir) = state.env();
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", "ulimit -n 64 && exec \"$0\" serve", bin])
        .env(name, dir)
        .env("SAYSO_DATABASE_URL", &db.url)
        .env("SAYSO_LISTEN", "127.0.0.1:0")
        .env("SAYSO_LOG_FORMAT", "json")
        .env("SAYSO_RATE_LIMIT_PER_S", "0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap());
    let mut address = String::new();
    let mut line = String::new();
    while tokio::io::AsyncBufReadExt::read_line(&mut lines, &mut line)
        .await
        .unwrap()
        > 0
    {
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if v["fields"]["message"] == "sayso is listening" {
            address = v["fields"]["address"].as_str().unwrap().to_string();
            break;
        }
        line.clear();
    }
    assert!(!address.is_empty(), "sayso did not start");
    tokio::spawn(async move {
        let mut rest = String::new();
        while tokio::io::AsyncBufReadExt::read_line(&mut lines, &mut rest)
            .await
            .unwrap_or(0)
            > 0
        {
            rest.clear();
        }
    });
    // Hold connections (each asks once and keeps its connection) until the server can take
    // no more.
    let mut held = Vec::new();
    for _ in 0..80 {
        let mut c = TcpStream::connect(&address).await.unwrap();
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        held.push(c);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let client = reqwest::Client::new();
    let mut told = None;
    for _ in 0..20 {
        if let Ok(resp) = client.get(format!("http://{address}/healthz")).send().await
            && resp.status() == StatusCode::SERVICE_UNAVAILABLE
        {
            told = Some(resp.json::<serde_json::Value>().await.unwrap());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let body = told.expect("a connection past the open-files limit gets a 503");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("ulimit -n"), "{message}");
    // Files come back as the held connections go, and the server serves again.
    drop(held);
    let mut served = false;
    for _ in 0..50 {
        if let Ok(resp) = client.get(format!("http://{address}/healthz")).send().await
            && resp.status() == StatusCode::OK
        {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(served, "the server serves again once files are free");
    child.kill().await.unwrap();
}
