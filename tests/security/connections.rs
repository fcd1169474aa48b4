//! Connections held open to crowd the person out: kept-alive connections asking `/healthz`
//! every few seconds with no key, as many as the server holds; one address opening more than
//! its share; connections left idle. Idle connections make way for new ones at the cap and
//! are closed after the idle timeout, and one address holds at most its share, so the
//! person's pages and `/healthz` answer from a new connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::{Client, StatusCode};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::db::fresh_sqlite_url;
use crate::common::server::{TestServer, s};
use crate::support::parked;
use sayso::app::ServeLimits;

fn addr(srv: &TestServer) -> SocketAddr {
    srv.base
        .trim_start_matches("http://")
        .parse()
        .expect("the test server's address")
}

/// Sends `request` on `stream` and reads one response; its status and body.
async fn exchange(stream: &mut TcpStream, request: &str) -> std::io::Result<(u16, String)> {
    stream.write_all(request.as_bytes()).await?;
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        got.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
    let status: u16 = head[9..12].parse().expect("a status");
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|n| n.trim().parse().expect("a length"))
        .unwrap_or(0);
    while got.len() < head_end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        got.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&got[head_end..head_end + length]).into_owned();
    Ok((status, body))
}

const HEALTHZ: &str = "GET /healthz HTTP/1.1\r\nhost: sayso\r\n\r\n";

/// Whether the server closes `stream` (it reads to its end) within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut sink = [0u8; 1024];
    tokio::time::timeout(within, async {
        loop {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// One of the flood: a kept-alive connection asking `/healthz` every two seconds, with no
/// key, opened again whenever the server closes it; until `stop`, for at most two minutes.
async fn keep_asking(to: SocketAddr, stop: Arc<AtomicBool>, answered: Arc<AtomicUsize>) {
    let mut first = true;
    for _ in 0..60 {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut stream) = TcpStream::connect(to).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        while !stop.load(Ordering::Relaxed) {
            match exchange(&mut stream, HEALTHZ).await {
                Ok((200, _)) if first => {
                    first = false;
                    answered.fetch_add(1, Ordering::Relaxed);
                }
                Ok(_) => {}
                Err(_) => break,
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_kept_alive_connections_leave_the_pages_a_connection() {
    let db = fresh_sqlite_url();
    let srv = TestServer::start_with(
        &db.url,
        ServeLimits {
            max_connections: 100,
            ..ServeLimits::default()
        },
    )
    .await;
    let h = srv
        .create(json!({"question": "Deploy?", "kind": "bool", "notify": "none"}))
        .await;
    let page = s(&h, "web_url").to_string();

    // A hundred connections, as many as the server holds, each answered once and kept.
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let flood: Vec<_> = (0..100)
        .map(|_| {
            tokio::spawn(keep_asking(
                addr(&srv),
                Arc::clone(&stop),
                Arc::clone(&answered),
            ))
        })
        .collect();
    for _ in 0..600 {
        if answered.load(Ordering::Relaxed) == 100 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        answered.load(Ordering::Relaxed),
        100,
        "the flood never got in"
    );

    // The person, each time from a new connection, while the flood goes on.
    for _ in 0..5 {
        for url in [page.clone(), srv.url("/healthz")] {
            let fresh = Client::builder().pool_max_idle_per_host(0).build().unwrap();
            let status = tokio::time::timeout(Duration::from_secs(1), async {
                let resp = fresh.get(&url).send().await.expect("answered");
                let status = resp.status();
                resp.bytes().await.expect("the whole answer");
                status
            })
            .await
            .unwrap_or_else(|_| panic!("{url} took more than a second"));
            assert_eq!(status, StatusCode::OK, "{url}");
        }
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for task in flood {
        task.abort();
    }
    srv.stop().await;
}

/// A server that caps loopback too, at `per_address` connections an address.
async fn capped_per_address(url: &str, per_address: usize) -> TestServer {
    TestServer::start_with(
        url,
        ServeLimits {
            max_connections: 100,
            connections_per_address: Some(per_address),
            uncapped_addresses: vec![],
            ..ServeLimits::default()
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_holds_at_most_its_share_and_its_idle_ones_make_way() {
    let db = fresh_sqlite_url();
    let srv = capped_per_address(&db.url, 3).await;
    let h = srv
        .create(json!({"question": "Park", "kind": "bool", "notify": "none"}))
        .await;
    let id = s(&h, "decision_id");
    let mut idle = Vec::new();
    for _ in 0..3 {
        let mut stream = TcpStream::connect(addr(&srv)).await.unwrap();
        assert_eq!(exchange(&mut stream, HEALTHZ).await.unwrap().0, 200);
        idle.push(stream);
    }
    // A fourth connection from the address takes the place of one of its idle ones.
    let mut fourth = TcpStream::connect(addr(&srv)).await.unwrap();
    assert_eq!(exchange(&mut fourth, HEALTHZ).await.unwrap().0, 200);
    let mut closed = 0;
    for stream in &mut idle {
        if closed_within(stream, Duration::from_millis(500)).await {
            closed += 1;
        }
    }
    assert!(closed >= 1, "no idle connection made way");
    drop(idle);
    drop(fourth);

    // Three connections busy with parked awaits: a fourth is refused, naming the setting.
    let await_request = format!(
        "GET /v1/decisions/{id}/await?timeout_s=60 HTTP/1.1\r\nhost: sayso\r\n\
         authorization: Bearer {}\r\n\r\n",
        srv.key
    );
    let mut waiting = Vec::new();
    for _ in 0..3 {
        let mut stream = TcpStream::connect(addr(&srv)).await.unwrap();
        stream.write_all(await_request.as_bytes()).await.unwrap();
        waiting.push(stream);
    }
    // Once they wait, none of the address's connections is idle.
    for _ in 0..600 {
        if parked(&srv).await == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(parked(&srv).await, 3);
    let mut fourth = TcpStream::connect(addr(&srv)).await.unwrap();
    let (status, body) = exchange(&mut fourth, HEALTHZ).await.unwrap();
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("SAYSO_CONNECTIONS_PER_ADDRESS"), "{body}");

    // Another address is not held back by this one's.
    let other = Client::builder()
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap();
    let resp = other.get(srv.url("/healthz")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    drop(waiting);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_busy_ones_are_not() {
    let db = fresh_sqlite_url();
    let srv = TestServer::start_with(
        &db.url,
        ServeLimits {
            idle_timeout: Duration::from_secs(1),
            // Far above the idle timeout: what closes them here is the idle timeout.
            header_read_timeout: Duration::from_secs(60),
            ..ServeLimits::default()
        },
    )
    .await;
    let h = srv
        .create(json!({"question": "Wait", "kind": "bool", "notify": "none"}))
        .await;
    let id = s(&h, "decision_id");

    // HTTP/1.1, kept alive after its answer.
    let mut kept = TcpStream::connect(addr(&srv)).await.unwrap();
    assert_eq!(exchange(&mut kept, HEALTHZ).await.unwrap().0, 200);
    assert!(
        closed_within(&mut kept, Duration::from_secs(20)).await,
        "an idle HTTP/1.1 connection stayed open"
    );

    // A connection waiting on an await is busy, not idle: its answer comes at its timeout.
    let mut waiting = TcpStream::connect(addr(&srv)).await.unwrap();
    let await_request = format!(
        "GET /v1/decisions/{id}/await?timeout_s=3 HTTP/1.1\r\nhost: sayso\r\n\
         authorization: Bearer {}\r\n\r\n",
        srv.key
    );
    let (status, body) = exchange(&mut waiting, &await_request).await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("pending"), "{body}");

    // HTTP/2 with no stream open: told to go away, then closed.
    let mut h2 = TcpStream::connect(addr(&srv)).await.unwrap();
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .unwrap();
    let went_away = tokio::time::timeout(Duration::from_secs(20), h2_until_closed(&mut h2))
        .await
        .expect("an idle HTTP/2 connection stayed open");
    assert!(went_away, "closed without a GOAWAY");
    srv.stop().await;
}

/// Reads HTTP/2 frames, acknowledging SETTINGS and PING as a client must, until the server
/// closes the connection; whether it sent a GOAWAY first.
async fn h2_until_closed(stream: &mut TcpStream) -> bool {
    let mut went_away = false;
    loop {
        let mut head = [0u8; 9];
        if stream.read_exact(&mut head).await.is_err() {
            return went_away;
        }
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let (kind, flags) = (head[3], head[4]);
        let mut payload = vec![0u8; len];
        if stream.read_exact(&mut payload).await.is_err() {
            return went_away;
        }
        let ack = flags & 1 == 1;
        let reply: Option<Vec<u8>> = match kind {
            4 if !ack => Some(vec![0, 0, 0, 4, 1, 0, 0, 0, 0]),
            6 if !ack => {
                let mut pong = vec![0, 0, 8, 6, 1, 0, 0, 0, 0];
                pong.extend_from_slice(&payload);
                Some(pong)
            }
            7 => {
                went_away = true;
                None
            }
            _ => None,
        };
        if let Some(reply) = reply {
            let _ = stream.write_all(&reply).await;
        }
    }
}
