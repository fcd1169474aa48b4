//! `GET /v1/events`: resolutions arrive live over Server-Sent Events, a reconnect with
//! `Last-Event-ID` gets exactly what it missed, another inbox's never show, and on
//! PostgreSQL an answer on one replica reaches a stream on another.

mod common;

use std::time::Duration;

use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};

use common::db::fresh_pg_url;
use common::server::{TestServer, fresh_server, s, send};

/// One event as a client sees it.
#[derive(Debug)]
struct SseEvent {
    id: String,
    event: String,
    data: Value,
}

/// A reader of an event stream over a real HTTP connection.
struct Stream {
    resp: Response,
    buf: String,
}

impl Stream {
    async fn open(server: &TestServer, key: &str, last_event_id: Option<&str>) -> Stream {
        let mut req = server
            .client
            .get(server.url("/v1/events"))
            .bearer_auth(key)
            .timeout(Duration::from_secs(600));
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let resp = req.send().await.expect("stream opened");
        assert_eq!(resp.status(), StatusCode::OK);
        let ct = resp.headers()["content-type"].to_str().unwrap().to_string();
        assert!(ct.starts_with("text/event-stream"), "{ct}");
        Stream {
            resp,
            buf: String::new(),
        }
    }

    /// The next event (keep-alive comments skipped), or `None` if none comes within `wait`.
    async fn next(&mut self, wait: Duration) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                if let Some(event) = parse(&block) {
                    return Some(event);
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.resp.chunk())
                .await
                .ok()?;
            let chunk = chunk.expect("stream readable").expect("stream still open");
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// The next event, which must come within 10 s.
    async fn expect(&mut self) -> SseEvent {
        self.next(Duration::from_secs(10))
            .await
            .expect("an event within 10 s")
    }
}

fn parse(block: &str) -> Option<SseEvent> {
    let (mut id, mut event, mut data) = (None, None, String::new());
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("id:") {
            id = Some(v.trim_start().to_string());
        } else if let Some(v) = line.strip_prefix("event:") {
            event = Some(v.trim_start().to_string());
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.trim_start());
        }
    }
    Some(SseEvent {
        id: id?,
        event: event?,
        data: serde_json::from_str(&data).expect("data is JSON"),
    })
}

async fn ask(server: &TestServer, key: &str, question: &str) -> Value {
    let (status, handle) = send(
        server
            .client
            .post(server.url("/v1/decisions"))
            .bearer_auth(key)
            .json(&json!({"question": question, "kind": "bool", "notify": "none"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{handle}");
    handle
}

async fn answer(server: &TestServer, handle: &Value, action: &str) {
    server
        .answer_ok(
            s(handle, "web_url"),
            json!({"action": action, "value": true}),
        )
        .await;
}

fn assert_event(e: &SseEvent, handle: &Value, status: &str) {
    assert_eq!(e.event, "decision.resolved");
    assert_eq!(e.data["decision_id"], handle["decision_id"], "{e:?}");
    assert_eq!(e.data["status"], status, "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_with_last_event_id_misses_nothing_and_repeats_nothing() {
    let (_db, server) = fresh_server().await;
    let key = server.key.clone();
    let other_key = server.other_inbox_key("elsewhere").await;
    let handles: Vec<Value> = {
        let mut v = vec![];
        for i in 0..6 {
            v.push(ask(&server, &key, &format!("question {i}")).await);
        }
        v
    };
    let theirs = ask(&server, &other_key, "not yours").await;

    let mut stream = Stream::open(&server, &key, None).await;
    answer(&server, &handles[0], "answer").await;
    let first = stream.expect().await;
    assert_event(&first, &handles[0], "answered");
    let (status, _) = send(server.req(
        Method::POST,
        &format!("/v1/decisions/{}/cancel", s(&handles[1], "decision_id")),
    ))
    .await;
    assert_eq!(status, StatusCode::OK);
    let second = stream.expect().await;
    assert_event(&second, &handles[1], "cancelled");
    assert!(first.id.parse::<i64>().unwrap() < second.id.parse::<i64>().unwrap());

    // Disconnect; three resolutions here and one in another inbox happen meanwhile.
    drop(stream);
    answer(&server, &handles[2], "answer").await;
    answer(&server, &theirs, "answer").await;
    answer(&server, &handles[3], "decline").await;
    answer(&server, &handles[4], "answer").await;

    let mut stream = Stream::open(&server, &key, Some(&second.id)).await;
    let missed = [
        (stream.expect().await, 2, "answered"),
        (stream.expect().await, 3, "declined"),
        (stream.expect().await, 4, "answered"),
    ];
    for (e, i, status) in &missed {
        assert_event(e, &handles[*i], status);
    }
    assert!(
        stream.next(Duration::from_millis(500)).await.is_none(),
        "nothing more, nothing twice"
    );
    answer(&server, &handles[5], "answer").await;
    let live = stream.expect().await;
    assert_event(&live, &handles[5], "answered");
    assert!(missed[2].0.id.parse::<i64>().unwrap() < live.id.parse::<i64>().unwrap());

    // From the start, by query parameter: all six, in order.
    let resp = server
        .client
        .get(server.url("/v1/events?last_event_id=0"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let mut all = Stream {
        resp,
        buf: String::new(),
    };
    let order = [0, 1, 2, 3, 4, 5];
    let mut ids = vec![];
    for i in order {
        let e = all.expect().await;
        assert_eq!(e.data["decision_id"], handles[i]["decision_id"]);
        ids.push(e.id.parse::<i64>().unwrap());
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(all.next(Duration::from_millis(300)).await.is_none());

    // The other inbox sees only its own.
    let mut other = Stream::open(&server, &other_key, Some("0")).await;
    assert_event(&other.expect().await, &theirs, "answered");
    assert!(other.next(Duration::from_millis(300)).await.is_none());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiry_is_an_event_too() {
    let (_db, server) = fresh_server().await;
    let key = server.key.clone();
    let mut stream = Stream::open(&server, &key, None).await;
    let (status, handle) = send(server.req(Method::POST, "/v1/decisions").json(&json!({
        "question": "Quick?", "kind": "bool", "notify": "none", "ttl_seconds": 10
    })))
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let e = stream
        .next(Duration::from_secs(20))
        .await
        .expect("the expiry arrives");
    assert_event(&e, &handle, "expired");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_the_error_shape() {
    let (_db, server) = fresh_server().await;
    let (status, body) = send(server.client.get(server.url("/v1/events"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "unauthorized");
    let (status, body) = send(
        server
            .req(Method::GET, "/v1/events")
            .header("Last-Event-ID", "yesterday"),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["details"][0]["path"], "Last-Event-ID");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_on_one_replica_reaches_a_stream_on_another() {
    let Some(db) = fresh_pg_url().await else {
        return;
    };
    let a = TestServer::start(&db.url).await;
    let b = TestServer::start_replica(&db.url, &a).await;
    let key = a.key.clone();
    let first = ask(&a, &key, "one").await;
    let second = ask(&a, &key, "two").await;
    let mut on_b = Stream::open(&b, &key, None).await;
    answer(&a, &first, "answer").await;
    let e1 = on_b.expect().await;
    assert_event(&e1, &first, "answered");

    // B's stream drops; A resolves meanwhile; B resumes where it was.
    drop(on_b);
    answer(&a, &second, "decline").await;
    let third = ask(&a, &key, "three").await;
    let mut on_b = Stream::open(&b, &key, Some(&e1.id)).await;
    assert_event(&on_b.expect().await, &second, "declined");
    answer(&a, &third, "answer").await;
    assert_event(&on_b.expect().await, &third, "answered");
    assert!(on_b.next(Duration::from_millis(300)).await.is_none());
    b.stop().await;
    a.stop().await;
}
