//! A local HTTP receiver standing in for the far end of a webhook, an ntfy server or a Web
//! Push service: it records every request and answers with the statuses a test scripts, then
//! with a default one. The deliveries it receives are real HTTP from the real sayso code.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::net::TcpListener;

/// One request the receiver got, and the status it answered with.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub status: u16,
}

impl Recorded {
    /// The body as JSON, or as a JSON string when it is not JSON.
    pub fn json(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body).into_owned();
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }
}

/// What the receiver answers with besides the status.
#[derive(Clone, Copy)]
pub enum Reply {
    /// `recorded`, with a `Location` a client following redirects would take (it must not).
    Text,
    /// The JSON this function makes of the request (ntfy's message object, say).
    Json(fn(&Recorded) -> Value),
}

#[derive(Clone)]
struct Log {
    requests: Arc<Mutex<Vec<Recorded>>>,
    /// Statuses to answer with, in order; `default` once they run out.
    statuses: Arc<Mutex<VecDeque<u16>>>,
    default: Arc<Mutex<u16>>,
    reply: Reply,
}

pub struct Receiver {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    log: Log,
    /// Requests already handed out by `next`.
    taken: usize,
}

/// ntfy's answer to a publish: the message it made.
fn ntfy_message(r: &Recorded) -> Value {
    serde_json::json!({"id": "msg1", "event": "message", "topic": r.json()["topic"]})
}

impl Receiver {
    /// An ntfy server's stand-in, answering each publish as ntfy does.
    pub async fn ntfy() -> Receiver {
        Receiver::start(Reply::Json(ntfy_message)).await
    }

    /// A receiver answering 200 with `reply`.
    pub async fn start(reply: Reply) -> Receiver {
        let log = Log {
            requests: Arc::default(),
            statuses: Arc::default(),
            default: Arc::new(Mutex::new(200)),
            reply,
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new().fallback(record).with_state(log.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver {
            base,
            log,
            taken: 0,
        }
    }

    /// Answers the next requests with these statuses, in order.
    pub fn answer_with(&self, statuses: &[u16]) {
        self.log.statuses.lock().unwrap().extend(statuses);
    }

    /// Answers every request after the scripted ones with `status`.
    pub fn answer_from_now_with(&self, status: u16) {
        *self.log.default.lock().unwrap() = status;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.log.requests.lock().unwrap().clone()
    }

    /// The first request's JSON once there is one, waiting up to `within` for it.
    pub async fn first_json(&self, within: Duration) -> Value {
        tokio::time::timeout(within, async {
            loop {
                if let Some(r) = self.requests().first() {
                    return r.json();
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the receiver was told")
    }

    /// The next request not yet handed out, waiting up to ten seconds for it.
    pub async fn next(&mut self) -> Recorded {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(r) = self.log.requests.lock().unwrap().get(self.taken).cloned() {
                self.taken += 1;
                return r;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the receiver got a request in time"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

async fn record(
    State(log): State<Log>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let scripted = log.statuses.lock().unwrap().pop_front();
    let status = scripted.unwrap_or_else(|| *log.default.lock().unwrap());
    let recorded = Recorded {
        method,
        path: uri.path().to_owned(),
        headers,
        body,
        status,
    };
    log.requests.lock().unwrap().push(recorded.clone());
    let status = StatusCode::from_u16(status).unwrap();
    match log.reply {
        Reply::Text => (status, [("location", "/elsewhere")], "recorded").into_response(),
        Reply::Json(make) => (status, axum::Json(make(&recorded))).into_response(),
    }
}
