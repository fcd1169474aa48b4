//! Slow clients: a thousand connections that send half a request and stall do not keep others
//! from being served, and the server sheds them: stalled heads are closed after the header
//! timeout, stalled bodies answered 408 after the body timeout.

mod common;

use std::time::{Duration, Instant};

use common::server::{fresh_server_with, s, send};
use reqwest::{Method, StatusCode};
use sayso::app::ServeLimits;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HEADER_TIMEOUT: Duration = Duration::from_secs(6);
const BODY_TIMEOUT: Duration = Duration::from_secs(7);
/// Stalled connections of each kind.
const EACH: usize = 250;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stall {
    /// `GET /healthz` without the blank line that ends the head.
    GetHead,
    /// A `POST` whose head stops after the first header.
    PostHead,
    /// A create with its whole head and a tenth of its body.
    CreateBody,
    /// An answer on the person's page with its whole head and a tenth of its body.
    AnswerBody,
}

/// A stalled connection and when it sent its last byte.
struct Stalled {
    kind: Stall,
    stream: TcpStream,
    sent: Instant,
}

fn timeout_of(kind: Stall) -> Duration {
    match kind {
        Stall::GetHead | Stall::PostHead => HEADER_TIMEOUT,
        Stall::CreateBody | Stall::AnswerBody => BODY_TIMEOUT,
    }
}

/// The soft limit on open files; the test holds two descriptors per connection (both ends
/// live in this process).
fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

fn partial(kind: Stall, key: &str, answer_path: &str) -> Vec<u8> {
    let body = r#"{"question": "Stalled?", "kind": "bool", "notify": "none"}"#;
    let (path, auth, body) = match kind {
        Stall::GetHead => return b"GET /healthz HTTP/1.1\r\nHost: x\r\n".to_vec(),
        Stall::PostHead => {
            return b"POST /v1/decisions HTTP/1.1\r\nHost: x\r\nContent-Type: applica".to_vec();
        }
        Stall::CreateBody => (
            "/v1/decisions",
            format!("Authorization: Bearer {key}\r\n"),
            body,
        ),
        Stall::AnswerBody => (answer_path, String::new(), r#"{"value": true}"#),
    };
    let announced = body.len() * 10;
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {announced}\r\n\r\n"
    )
    .into_bytes();
    req.extend_from_slice(&body.as_bytes()[..body.len() / 2]);
    req
}

/// Reads until the server closes; the bytes it sent and when the end came (`None` when it
/// did not within `limit`). A reset counts as closed.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (Vec<u8>, Option<Instant>) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (got, Some(Instant::now())),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (got, None),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_stalled_clients_do_not_keep_others_out_and_are_shed() {
    let stalled_total = 4 * EACH;
    let limit = open_file_limit().unwrap_or(u64::MAX);
    assert!(
        limit >= 2 * stalled_total as u64 + 500,
        "the open-file limit ({limit}) is too low for {stalled_total} connections held at both \
         ends; raise it (ulimit -n)"
    );
    let limits = ServeLimits {
        header_read_timeout: HEADER_TIMEOUT,
        body_read_timeout: BODY_TIMEOUT,
        ..ServeLimits::default()
    };
    // The cap must sit well above what stalled clients can hold, or they would lock others
    // out until shed; the default does.
    assert!(limits.max_connections >= 10 * stalled_total);
    let (_db, srv) = fresh_server_with(limits).await;
    let addr = srv.addr();
    let h = srv
        .create(json!({"question": "Answered slowly?", "kind": "bool"}))
        .await;
    let answer_path = format!("/d/{}", s(&h, "web_url").rsplit('/').next().unwrap());

    // Open them all, a few at a time so the listen backlog never overflows; the bodies
    // (longer timeout) first.
    let opening = Instant::now();
    let kinds = [
        Stall::CreateBody,
        Stall::AnswerBody,
        Stall::GetHead,
        Stall::PostHead,
    ];
    let mut stalled = Vec::with_capacity(stalled_total);
    for chunk in (0..stalled_total).collect::<Vec<_>>().chunks(100) {
        let opened = futures::future::join_all(chunk.iter().map(|i| {
            let kind = kinds[i * kinds.len() / stalled_total];
            let req = partial(kind, &srv.key, &answer_path);
            let addr = addr.clone();
            async move {
                let mut stream = TcpStream::connect(&addr).await.expect("connect");
                stream.write_all(&req).await.expect("write half a request");
                Stalled {
                    kind,
                    stream,
                    sent: Instant::now(),
                }
            }
        }))
        .await;
        stalled.extend(opened);
    }
    let all_open = Instant::now();
    eprintln!(
        "{stalled_total} stalled connections opened in {} ms",
        (all_open - opening).as_millis()
    );

    // Meanwhile others are served, promptly. The bound is generous for a busy machine; it
    // protects against being queued behind the stalled connections until they are shed.
    let mut served = Vec::new();
    for i in 0..10 {
        let t = Instant::now();
        let (status, _) = send(srv.client.get(srv.url("/healthz"))).await;
        assert_eq!(status, StatusCode::OK);
        let (status, d) = send(srv.req(Method::POST, "/v1/decisions").json(
            &json!({"question": format!("Served meanwhile {i}?"), "kind": "bool", "notify": "none"}),
        ))
        .await;
        assert_eq!(status, StatusCode::CREATED, "{d}");
        let (status, _) = send(srv.req(
            Method::GET,
            &format!("/v1/decisions/{}", s(&d, "decision_id")),
        ))
        .await;
        assert_eq!(status, StatusCode::OK);
        served.push(t.elapsed());
    }
    let served_until = Instant::now();
    served.sort();
    let first_shed = stalled
        .iter()
        .map(|c| c.sent + timeout_of(c.kind))
        .min()
        .unwrap();
    // The overlap this test is about: everything above ran while every stalled connection
    // was still within its timeout.
    assert!(
        served_until < first_shed,
        "the served requests took until after the first stalled connection could time out \
         ({} ms after); the machine is too slow for this check",
        (served_until - first_shed).as_millis()
    );
    assert!(
        served[served.len() - 1] < Duration::from_secs(2),
        "a slow round: {served:?}"
    );

    // Each stalled connection is shed: heads closed after the header timeout, bodies answered
    // 408 after the body timeout. Lower bounds are exact (nothing closes early); upper ones
    // generous (a busy machine closes late).
    let closing = futures::future::join_all(stalled.into_iter().map(|mut c| async move {
        let (got, closed) = read_until_closed(&mut c.stream, Duration::from_secs(30)).await;
        (c.kind, c.sent, got, closed)
    }))
    .await;
    let mut after = std::collections::HashMap::<&str, Vec<Duration>>::new();
    for (kind, sent, got, closed) in closing {
        let closed = closed.unwrap_or_else(|| panic!("a {kind:?} connection was never closed"));
        let waited = closed - sent;
        let text = String::from_utf8_lossy(&got);
        match kind {
            Stall::GetHead | Stall::PostHead => {
                assert!(
                    waited >= HEADER_TIMEOUT - Duration::from_millis(100),
                    "{kind:?} closed early ({waited:?})"
                );
                assert!(
                    !text.starts_with("HTTP/1.1 2"),
                    "{kind:?} was answered: {text}"
                );
                after.entry("heads").or_default().push(waited);
            }
            Stall::CreateBody | Stall::AnswerBody => {
                assert!(
                    waited >= BODY_TIMEOUT - Duration::from_millis(100),
                    "{kind:?} closed early ({waited:?}): {text}"
                );
                assert!(
                    text.starts_with("HTTP/1.1 408"),
                    "{kind:?} not answered 408: {text}"
                );
                assert!(text.contains("\"request_timeout\""), "{text}");
                assert!(
                    text.to_ascii_lowercase().contains("connection: close"),
                    "{text}"
                );
                after.entry("bodies").or_default().push(waited);
            }
        }
    }
    for (what, times) in &mut after {
        times.sort();
        let limit = if *what == "heads" {
            HEADER_TIMEOUT
        } else {
            BODY_TIMEOUT
        };
        eprintln!(
            "stalled {what} ({}) closed after {} ms (first) / {} ms (median) / {} ms (last); \
             timeout {} ms",
            times.len(),
            times[0].as_millis(),
            times[times.len() / 2].as_millis(),
            times[times.len() - 1].as_millis(),
            limit.as_millis()
        );
        assert!(times[times.len() - 1] < limit + Duration::from_secs(10));
    }
    eprintln!(
        "served meanwhile: healthz+create+get rounds in {} ms (median) / {} ms (max)",
        served[served.len() / 2].as_millis(),
        served[served.len() - 1].as_millis()
    );

    // The decision the stalled answers were for is untouched, and the server still serves.
    let d = srv.get(s(&h, "decision_id")).await;
    assert_eq!(d["status"], "pending", "{d}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_arrives_slowly_but_steadily_is_not_cut_off() {
    // The body timeout is for silence, not for slowness: a body dripping in chunks closer
    // together than the timeout is read to the end.
    let limits = ServeLimits {
        body_read_timeout: Duration::from_secs(1),
        ..ServeLimits::default()
    };
    let (_db, srv) = fresh_server_with(limits).await;
    let addr = srv.addr();
    let body = br#"{"question": "Slow but steady?", "kind": "bool", "notify": "none"}"#;
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /v1/decisions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        srv.key,
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    for piece in body.chunks(body.len() / 6 + 1) {
        tokio::time::sleep(Duration::from_millis(400)).await;
        stream.write_all(piece).await.unwrap();
    }
    let (got, closed) = read_until_closed(&mut stream, Duration::from_secs(30)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(closed.is_some());
    // Longer in all than the timeout, never silent for as long.
    assert!(started.elapsed() > Duration::from_secs(2));
    assert!(text.starts_with("HTTP/1.1 201"), "{text}");
    srv.stop().await;
}
