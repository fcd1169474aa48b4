//! An agent told to flood the person: with waiting requests until the person's pages find
//! no connection, and with urgent questions until their phone rings all night. Each key has
//! a share of the waiting requests and the connections they hold stop below the server's
//! cap, so the pages always answer; urgent is the operator's to give a key, a few an hour;
//! and each person's notifications per channel have a budget past which a burst becomes
//! one message that says how many wait.

use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::common::db::fresh_sqlite_url;
use crate::common::http::json_of;
use crate::common::receiver::{Receiver, Recorded};
use crate::common::server::{TestServer, fresh_server, s, send};
use crate::support::{parked, retry_after};
use sayso::app::ServeLimits;
use sayso::domain::outbox::Channel;
use sayso::service::PersonSettings;

// ---- waiting requests ----

/// A server that holds 100 connections (so, by default, 50 waiting requests per key and 90
/// connections for waiting requests in all).
async fn capped_server(url: &str) -> TestServer {
    let limits = ServeLimits {
        max_connections: 100,
        ..ServeLimits::default()
    };
    TestServer::start_with(url, limits).await
}

/// Opens `count` awaits of `id` with `key`, each on a connection of its own, ten at a
/// time: each ten park or are refused before the next open, so the connections never
/// outnumber what the server holds. Returns the refusals; the parked stay open.
async fn park(
    srv: &TestServer,
    key: &str,
    id: &str,
    count: usize,
    open: &mut Vec<tokio::task::JoinHandle<reqwest::Response>>,
) -> Vec<reqwest::Response> {
    let mut refused = Vec::new();
    let mut launched = 0;
    while launched < count {
        let wave = (count - launched).min(10);
        let before = parked(srv).await;
        let mut this_wave = Vec::new();
        for _ in 0..wave {
            let req = Client::new()
                .get(srv.url(&format!("/v1/decisions/{id}/await?timeout_s=120")))
                .bearer_auth(key);
            this_wave.push(tokio::spawn(async move { req.send().await.unwrap() }));
        }
        launched += wave;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let finished = this_wave.iter().filter(|h| h.is_finished()).count();
            if parked(srv).await + finished >= before + wave {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the awaits neither parked nor returned"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A refused await looks once before it answers, parked for that moment: give it
        // time to answer.
        tokio::time::sleep(Duration::from_millis(200)).await;
        for h in this_wave {
            if h.is_finished() {
                refused.push(h.await.unwrap());
            } else {
                open.push(h);
            }
        }
    }
    refused
}

/// A yes/no `question` that notifies no one, created with `key`; its handle.
async fn create_as(srv: &TestServer, key: &str, question: &str) -> Value {
    json_of(
        srv.client
            .post(srv.url("/v1/decisions"))
            .bearer_auth(key)
            .json(&json!({"question": question, "kind": "bool", "notify": "none"})),
    )
    .await
}

async fn assert_too_many_waiting(resp: reqwest::Response, setting: &str) {
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    retry_after(&resp);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "too_many_waiting", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(setting), "{message}");
}

/// The person's page of a new decision, and the health check, from a client of their own.
async fn assert_pages_answer(srv: &TestServer, times: usize) {
    let h = srv
        .create(json!({"question": "Still there?", "kind": "bool", "notify": "none"}))
        .await;
    let person = Client::new();
    let loads = (0..times).map(|_| person.get(s(&h, "web_url")).send());
    for resp in futures::future::join_all(loads).await {
        assert_eq!(resp.unwrap().status(), StatusCode::OK);
    }
    let health = person.get(srv.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parked_awaits_past_a_keys_share_get_429_and_the_pages_still_answer() {
    let db = fresh_sqlite_url();
    let srv = capped_server(&db.url).await;
    let h = srv
        .create(json!({"question": "Park on me", "kind": "bool", "notify": "none"}))
        .await;
    let id = s(&h, "decision_id").to_string();
    let mut open = Vec::new();
    let refused = park(&srv, &srv.key, &id, 110, &mut open).await;
    assert_eq!((open.len(), refused.len()), (50, 60));
    for resp in refused {
        assert_too_many_waiting(resp, "SAYSO_WAITING_PER_KEY").await;
    }
    assert_pages_answer(&srv, 5).await;

    // The same key's MCP call that would wait is told so, as a tool error.
    let resp = srv
        .req(Method::POST, "/mcp")
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "await_decision", "arguments": {"decision_id": id, "timeout_s": 30}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let raw = resp.text().await.unwrap();
    assert!(
        raw.contains("too_many_waiting") && raw.contains("SAYSO_WAITING_PER_KEY"),
        "{raw}"
    );

    // Another key still has its share.
    let other = srv.other_inbox_key("other").await;
    let theirs = create_as(&srv, &other, "Mine").await;
    let refused = park(&srv, &other, s(&theirs, "decision_id"), 5, &mut open).await;
    assert!(refused.is_empty());
    // Answered, the waiters return and the key may wait again.
    srv.answer(s(&h, "web_url"), json!({"value": "yes"})).await;
    for h in open.drain(..50) {
        assert_eq!(h.await.unwrap().status(), StatusCode::OK);
    }
    let again = srv
        .create(json!({"question": "Again", "kind": "bool", "notify": "none"}))
        .await;
    let refused = park(&srv, &srv.key, s(&again, "decision_id"), 1, &mut open).await;
    assert!(refused.is_empty());
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_requests_of_many_keys_leave_connections_for_the_pages() {
    let db = fresh_sqlite_url();
    let srv = capped_server(&db.url).await;
    let mut open = Vec::new();
    let mut refused = Vec::new();
    let mut ids = Vec::new();
    for n in 0..3 {
        let key = srv.other_inbox_key(&format!("agent{n}")).await;
        let (_, h) = send(
            srv.client
                .post(srv.url("/v1/decisions"))
                .bearer_auth(&key)
                .json(&json!({"question": "Park", "kind": "bool", "notify": "none"})),
        )
        .await;
        let id = s(&h, "decision_id").to_string();
        refused.extend(park(&srv, &key, &id, 40, &mut open).await);
        ids.push((key, id));
    }
    // 90 connections wait; the 30 past them are refused, naming the setting.
    assert_eq!((open.len(), refused.len()), (90, 30));
    for resp in refused {
        assert_too_many_waiting(resp, "SAYSO_WAITING_CONNECTIONS").await;
    }
    // The ten connections left serve the person.
    assert_pages_answer(&srv, 9).await;
    // An event stream waits too, and is refused the same way.
    let (key, id) = &ids[0];
    let resp = Client::new()
        .get(srv.url("/v1/events"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["connection"], "close");
    assert_too_many_waiting(resp, "SAYSO_WAITING_CONNECTIONS").await;
    // An await of a decision already resolved needs no seat: it is answered at once.
    srv.client
        .post(srv.url(&format!("/v1/decisions/{id}/cancel")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let other = create_as(&srv, key, "Done").await;
    let done = s(&other, "decision_id");
    srv.client
        .post(srv.url(&format!("/v1/decisions/{done}/cancel")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let resp = Client::new()
        .get(srv.url(&format!("/v1/decisions/{done}/await?timeout_s=60")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    srv.stop().await;
}

// ---- urgent questions and the notification budget ----

/// What the stand-in ntfy server answers a publish with.
/// Quiet hours around now, in UTC: from an hour ago to two hours ahead.
fn quiet_now() -> String {
    let hour = OffsetDateTime::now_utc().hour();
    format!("{:02}:00-{:02}:00", (hour + 23) % 24, (hour + 2) % 24)
}

/// The inbox's own person gets ntfy on `ntfy`'s topic, in quiet hours when `quiet`.
async fn person_on_ntfy(srv: &TestServer, ntfy: &Receiver, quiet: bool) {
    let settings = PersonSettings {
        ntfy_url: Some(format!("{}/phone", ntfy.base)),
        quiet: quiet.then(quiet_now),
        tz: quiet.then(|| "UTC".into()),
        ..PersonSettings::default()
    };
    srv.svc
        .set_person("default", "default", &settings)
        .await
        .unwrap();
}

/// `count` urgent questions from `key`, 32 at a time; their handles.
async fn urgent_burst(srv: &TestServer, key: &str, count: usize) -> Vec<Value> {
    futures::stream::iter(0..count)
        .map(|n| {
            let req = srv
                .client
                .post(srv.url("/v1/decisions"))
                .bearer_auth(key)
                .json(&json!({"question": format!("Wake up {n}"), "kind": "bool",
                    "urgent": true}));
            async move {
                let (status, h) = send(req).await;
                assert_eq!(status, StatusCode::CREATED, "{h}");
                h
            }
        })
        .buffer_unordered(32)
        .collect()
        .await
}

/// Waits until the outbox worker has looked at the ntfy ask of every decision (sent it,
/// held it, skipped it).
async fn ntfy_asks_handled(srv: &TestServer, handles: &[Value]) {
    let deadline = Instant::now() + Duration::from_secs(120);
    for h in handles {
        let id = Uuid::parse_str(s(h, "decision_id")).unwrap();
        loop {
            let states = srv.svc.store().notifications(id).await.unwrap();
            let ntfy = states.iter().find(|n| n.channel == Channel::Ntfy);
            if ntfy.is_some_and(|n| n.detail.is_some() || n.status.as_str() != "pending") {
                break;
            }
            assert!(Instant::now() < deadline, "the ntfy asks were not handled");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn warned_not_urgent(h: &Value) -> bool {
    h["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().starts_with("urgent:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urgent_questions_from_a_key_not_allowed_them_wake_no_one_in_quiet_hours() {
    let db = fresh_sqlite_url();
    let ntfy = Receiver::ntfy().await;
    let srv = TestServer::start_budgeted(&db.url, 3, Duration::from_secs(60)).await;
    person_on_ntfy(&srv, &ntfy, true).await;
    // The first key: the operator allowed it nothing.
    let handles = urgent_burst(&srv, &srv.key, 600).await;
    ntfy_asks_handled(&srv, &handles).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rang = ntfy.requests().len();
    assert_eq!(rang, 0, "the phone rang {rang} times in quiet hours");
    // Each was asked, as not urgent, saying why.
    for h in &handles {
        assert!(warned_not_urgent(h), "{h}");
        let warning = h["warnings"][0].as_str().unwrap();
        assert!(warning.contains("sayso key set"), "{warning}");
    }
    let one = Uuid::parse_str(s(&handles[0], "decision_id")).unwrap();
    let states = srv.svc.store().notifications(one).await.unwrap();
    let ntfy_state = states.iter().find(|n| n.channel == Channel::Ntfy).unwrap();
    // Held until they end, or (ending after the question expires) not sent at all.
    assert!(
        ntfy_state
            .detail
            .as_deref()
            .unwrap()
            .contains("quiet hours"),
        "{ntfy_state:?}"
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_allowed_urgent_rings_a_few_times_however_many_it_asks() {
    let db = fresh_sqlite_url();
    let ntfy = Receiver::ntfy().await;
    let srv = TestServer::start_budgeted(&db.url, 3, Duration::from_secs(60)).await;
    person_on_ntfy(&srv, &ntfy, true).await;
    let (key, _) = srv.svc.create_api_key_with("default", true).await.unwrap();
    let handles = urgent_burst(&srv, &key, 600).await;
    ntfy_asks_handled(&srv, &handles).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The budget lets three through this minute; the other urgent ones wait for its end.
    let rang = ntfy.requests().len();
    assert!(rang <= 3, "the phone rang {rang} times");
    assert!(rang >= 1, "an urgent question goes through quiet hours");
    // Ten an hour (SAYSO_URGENT_PER_HOUR's default) stay urgent; the rest are asked as not
    // urgent, saying why.
    let warned: Vec<&Value> = handles.iter().filter(|h| warned_not_urgent(h)).collect();
    assert_eq!(warned.len(), 590);
    let warning = warned[0]["warnings"][0].as_str().unwrap();
    assert!(warning.contains("SAYSO_URGENT_PER_HOUR"), "{warning}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_burst_goes_out_as_one_message_that_says_how_many_wait() {
    let db = fresh_sqlite_url();
    let ntfy = Receiver::ntfy().await;
    // A short budget window, so its end comes within the test.
    let window = Duration::from_secs(3);
    let srv = TestServer::start_budgeted(&db.url, 3, window).await;
    person_on_ntfy(&srv, &ntfy, false).await;
    let started = Instant::now();
    let asks: Vec<Value> = futures::stream::iter(0..20)
        .map(|n| srv.create(json!({"question": format!("Question {n}"), "kind": "bool"})))
        .buffer_unordered(8)
        .collect()
        .await;
    assert_eq!(asks.len(), 20);
    // Every ask reaches the phone, alone or counted in a message standing for it.
    let deadline = Instant::now() + Duration::from_secs(60);
    let stood_for = |published: &[Recorded]| -> u64 {
        published
            .iter()
            .map(|r| 1 + waiting_in(&r.json()["message"]))
            .sum()
    };
    while stood_for(&ntfy.requests()) < 20 {
        assert!(Instant::now() < deadline, "{:?}", ntfy.requests().len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let published = ntfy.requests();
    assert_eq!(stood_for(&published), 20);
    let windows = started.elapsed().as_secs_f64() / window.as_secs_f64();
    assert!(
        (published.len() as f64) <= 3.0 * (windows.ceil() + 1.0),
        "{} messages in {windows:.1} windows",
        published.len()
    );
    // The first three alone, then one that says how many more wait and opens the feed.
    let digest = published
        .iter()
        .map(Recorded::json)
        .find(|m| waiting_in(&m["message"]) > 0)
        .expect("a message for those held");
    assert!(
        digest["click"].as_str().unwrap().ends_with("/inbox"),
        "{digest}"
    );
    assert!(digest.get("actions").is_none(), "{digest}");
    let first = published[0].json();
    assert!(first["actions"].is_array(), "{first}");
    tokio::time::sleep(window + Duration::from_millis(500)).await;
    assert_eq!(ntfy.requests().len(), published.len(), "nothing goes twice");
    srv.stop().await;
}

/// N in a message's "N more questions are waiting" line; 0 without one.
fn waiting_in(message: &Value) -> u64 {
    let text = message.as_str().unwrap_or_default();
    text.lines()
        .find_map(|l| {
            l.strip_suffix(" more questions are waiting in your sayso feed.")
                .or_else(|| l.strip_suffix(" more question is waiting in your sayso feed."))
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// `sayso` with `args` on the database at `url`, with `stdin` written to it.
async fn sayso(url: &str, args: &[&str], stdin: &str) -> std::process::Output {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_sayso"))
        .args(args)
        .env("SAYSO_DATABASE_URL", url)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    drop(input);
    child.wait_with_output().await.unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_gives_and_takes_urgent_per_key() {
    let (db, srv) = fresh_server().await;
    let key = stdout(&sayso(&db.url, &["key", "create", "--urgent"], "").await);
    let key = key.trim();
    let urgent = |key: &str| {
        let req = srv
            .client
            .post(srv.url("/v1/decisions"))
            .bearer_auth(key)
            .json(&json!({"question": "Now?", "kind": "bool", "urgent": true}));
        async move {
            let (status, h) = send(req).await;
            assert_eq!(status, StatusCode::CREATED, "{h}");
            !warned_not_urgent(&h)
        }
    };
    assert!(urgent(key).await);
    assert!(!urgent(&srv.key).await);

    // The list shows each key's id and what it may do, never the key.
    let list = stdout(&sayso(&db.url, &["key", "list"], "").await);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    assert!(lines[0].ends_with("live  not urgent"), "{list}");
    assert!(lines[1].ends_with("live  urgent"), "{list}");
    assert!(!list.contains("sk_"), "{list}");
    let id = lines[1].split_whitespace().next().unwrap();

    let out = stdout(&sayso(&db.url, &["key", "set", id, "--urgent", "no"], "").await);
    assert!(out.contains("may not"), "{out}");
    assert!(!urgent(key).await);
    // By the key itself, from stdin, as people write yes.
    let out = stdout(&sayso(&db.url, &["key", "set", "-", "--urgent", "YES"], key).await);
    assert!(out.contains("may ask"), "{out}");
    assert!(urgent(key).await);

    let out = sayso(
        &db.url,
        &["key", "set", "sk_nothing", "--urgent", "yes"],
        "",
    )
    .await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no live API key matches"));
    let out = sayso(&db.url, &["key", "set", id, "--urgent", "maybe"], "").await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--urgent"));
    srv.stop().await;
}
