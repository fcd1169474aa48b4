//! The light steady load, the readiness probe and parked awaits, and what each client
//! saw.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::common::server::{s, send};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Get,
    Answer,
    Ready,
}

/// One request of the load, as the client saw it.
#[derive(Debug, Clone)]
pub struct Record {
    pub replica: usize,
    pub op: Op,
    pub started: Instant,
    pub took: Duration,
    /// 0 when no response came (transport error or the client's 30 s timeout).
    pub status: u16,
    pub code: Option<String>,
    pub retry_after: bool,
}

impl Record {
    pub fn ended(&self) -> Instant {
        self.started + self.took
    }
}

pub type Records = Arc<Mutex<Vec<Record>>>;

async fn request(
    records: &Records,
    replica: usize,
    op: Op,
    req: reqwest::RequestBuilder,
) -> (u16, Value) {
    let started = Instant::now();
    let (status, retry_after, body) = match req.send().await {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let retry_after = resp.headers().contains_key("retry-after");
            let text = resp.text().await.unwrap_or_default();
            (
                status,
                retry_after,
                serde_json::from_str(&text).unwrap_or(Value::Null),
            )
        }
        Err(e) => {
            eprintln!("{op:?} on replica {replica}: no response: {e}");
            (0, false, Value::Null)
        }
    };
    records.lock().unwrap().push(Record {
        replica,
        op,
        started,
        took: started.elapsed(),
        status,
        code: body["error"]["code"].as_str().map(str::to_string),
        retry_after,
    });
    (status, body)
}

/// What the load was told: decisions created (201) and answers accepted (200, or 409 on a
/// retry of an answer whose first try may have committed before its 503).
#[derive(Default)]
pub struct Acknowledged {
    pub created: Vec<String>,
    pub answered: HashMap<String, bool>,
}

/// A client of the steady load and where it writes down what it saw.
pub struct Worker {
    pub client: Client,
    pub base: String,
    pub key: String,
    pub replica: usize,
    pub worker: usize,
    pub records: Records,
    pub acked: Arc<Mutex<Acknowledged>>,
}

/// One client of the steady load on one replica: creates a decision, reads one back, and
/// answers every other one, about five times a second, until `stop`.
pub async fn load(worker: Worker, mut stop: watch::Receiver<bool>) {
    let Worker {
        client,
        base,
        key,
        replica,
        worker,
        records,
        acked,
    } = worker;
    // Decisions this worker will answer: id, answer token, the value it answers with.
    let mut to_answer: Vec<(String, String, bool)> = Vec::new();
    let mut last: Option<String> = None;
    let mut i = 0usize;
    while !*stop.borrow_and_update() {
        i += 1;
        let (status, h) = request(
            &records,
            replica,
            Op::Create,
            client
                .post(format!("{base}/v1/decisions"))
                .bearer_auth(&key)
                .json(&json!({
                    "question": format!("Outage load {replica}.{worker}.{i}?"),
                    "kind": "bool",
                    "notify": "none",
                })),
        )
        .await;
        if status == 201 {
            let id = s(&h, "decision_id").to_string();
            acked.lock().unwrap().created.push(id.clone());
            if i.is_multiple_of(2) {
                let token = s(&h, "web_url").rsplit('/').next().unwrap().to_string();
                to_answer.push((id.clone(), token, i.is_multiple_of(4)));
            }
            last = Some(id);
        }
        if let Some(id) = &last {
            request(
                &records,
                replica,
                Op::Get,
                client
                    .get(format!("{base}/v1/decisions/{id}"))
                    .bearer_auth(&key),
            )
            .await;
        }
        // A few stay queued, so there is one to answer also while creates fail.
        if (to_answer.len() > 2 || status != 201)
            && let Some((id, token, value)) = to_answer.first().cloned()
        {
            let (status, body) = request(
                &records,
                replica,
                Op::Answer,
                client
                    .post(format!("{base}/d/{token}"))
                    .json(&json!({"value": value})),
            )
            .await;
            let retried_after_commit = status == 409 && body["error"]["code"] == "already_resolved";
            if status == 200 || retried_after_commit {
                acked.lock().unwrap().answered.insert(id, value);
                to_answer.remove(0);
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(150)) => {}
            _ = stop.changed() => {}
        }
    }
}

/// Polls `/readyz` of a replica four times a second until `stop`.
pub async fn probe_ready(
    client: Client,
    base: String,
    replica: usize,
    records: Records,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow_and_update() {
        request(
            &records,
            replica,
            Op::Ready,
            client.get(format!("{base}/readyz")),
        )
        .await;
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            _ = stop.changed() => {}
        }
    }
}

/// An await on `base` for `id`, parked in a task; yields its response and when it came.
pub fn park_await(
    client: &Client,
    base: &str,
    key: &str,
    id: &str,
) -> tokio::task::JoinHandle<((StatusCode, Value), Instant)> {
    let req = client
        .get(format!("{base}/v1/decisions/{id}/await?timeout_s=300"))
        .timeout(Duration::from_secs(300))
        .bearer_auth(key);
    tokio::spawn(async move {
        let r = send(req).await;
        (r, Instant::now())
    })
}

pub async fn create(client: &Client, base: &str, key: &str, question: &str) -> (String, String) {
    let (status, h) = send(
        client
            .post(format!("{base}/v1/decisions"))
            .bearer_auth(key)
            .json(&json!({"question": question, "kind": "bool", "notify": "none"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{h}");
    let token = s(&h, "web_url").rsplit('/').next().unwrap().to_string();
    (s(&h, "decision_id").to_string(), token)
}

/// Answers through `base`, retrying while the replica still says 503; returns when accepted.
pub async fn answer_when_possible(
    client: &Client,
    base: &str,
    token: &str,
    value: bool,
) -> Instant {
    let started = Instant::now();
    loop {
        let (status, body) = send(
            client
                .post(format!("{base}/d/{token}"))
                .json(&json!({"value": value})),
        )
        .await;
        if status == StatusCode::OK {
            return Instant::now();
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the answer was still refused 30 s after the database came back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn await_woken(
    parked: tokio::task::JoinHandle<((StatusCode, Value), Instant)>,
    answered: Instant,
    what: &str,
) -> Duration {
    let ((status, d), woke) = tokio::time::timeout(Duration::from_secs(30), parked)
        .await
        .unwrap_or_else(|_| panic!("{what}: the parked await was not woken within 30 s"))
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{what}: {d}");
    assert_eq!(d["status"], "answered", "{what}: {d}");
    woke.saturating_duration_since(answered)
}

pub fn millis(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}
