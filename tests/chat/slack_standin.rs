//! A recording stand-in for Slack on loopback: Slack's Web API cannot run here, so this
//! answers the calls sayso makes as Slack documents them, and checks each against Slack's
//! documented shapes (api.slack.com/methods, /reference/block-kit):
//!
//! - the Bearer token: the bot token for every method, the app-level token for
//!   `apps.connections.open`;
//! - Block Kit: block and element types, and the limits (at most 50 blocks; a section's text
//!   at most 3000 characters, a header's 150; a button's text at most 75, its value 2000, its
//!   url 3000, its action_id 255; at most 25 elements in an actions block, 10 in a context;
//!   block and action ids unique); no mention or broadcast (`<!…>`, `<@…>`) and no disguised
//!   link in any mrkdwn text, since sayso escapes everything an agent wrote;
//! - `chat.update` only on a `ts` it returned, in the conversation it returned for it;
//! - `views.open` only with a `trigger_id` a press carried, within its 3 s, and a modal within
//!   the modal limits (title, submit and close at most 24 characters).
//!
//! A call that breaks a rule is answered as Slack would (`{"ok": false, "error": …}`) and
//! recorded with the problems found, so the tests can assert that there were none. The
//! person's side (presses, modal submissions) is built by the tests; Socket Mode goes over a
//! websocket stand-in here too (`apps.connections.open` returns its `ws://` URL).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use crate::standin::{self, Shared};

mod shapes;
use shapes::*;

pub const BOT_TOKEN: &str = "xoxb-1111-2222-standin";
pub const APP_TOKEN: &str = "xapp-1-A111-2222-standin";
pub const SIGNING_SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";
pub const TEAM: &str = "T0SAYSO";

/// One Web API call as it arrived, with what the stand-in found wrong in it.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    pub body: Value,
    /// What the stand-in answered: `ok`, or the error it named.
    pub answer: Result<(), String>,
    pub problems: Vec<String>,
}

/// A message the stand-in holds, as last posted or updated.
#[derive(Debug, Clone)]
pub struct Posted {
    pub channel: String,
    pub ts: String,
    pub user: String,
    pub text: String,
    pub blocks: Vec<Value>,
    pub updates: usize,
}

#[derive(Default)]
struct Inner {
    calls: Vec<Call>,
    messages: Vec<Posted>,
    /// Each posted `response_url` body, by the hook it went to.
    responses: Vec<(String, Value)>,
    /// trigger_id → when the press that carried it was made.
    triggers: HashMap<String, Instant>,
    /// The next so many Web API calls get a 503.
    outage: usize,
    next_ts: u64,
    /// A websocket's way to the test, set while one is connected.
    socket: Option<mpsc::UnboundedSender<SocketCommand>>,
    socket_connections: usize,
    acks: Vec<Value>,
}

enum SocketCommand {
    Send(String),
    Drop,
}

/// The stand-in: its Web API base URL and what it recorded.
#[derive(Clone)]
pub struct SlackStandIn {
    pub api_url: String,
    pub addr: SocketAddr,
    ws_addr: SocketAddr,
    inner: Shared<Inner>,
}

impl SlackStandIn {
    pub async fn start() -> SlackStandIn {
        let port = standin::loopback().await;
        let ws_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let standin = SlackStandIn {
            api_url: format!("http://{}/api/", port.addr),
            addr: port.addr,
            ws_addr: ws_listener.local_addr().unwrap(),
            inner: Shared::new(Inner {
                next_ts: 1,
                ..Inner::default()
            }),
        };
        port.serve(
            Router::new()
                .route("/api/{method}", post(api))
                .route("/hooks/{hook}", post(hook))
                .with_state(standin.clone()),
        );
        tokio::spawn(websockets(ws_listener, standin.clone()));
        standin
    }

    /// sayso's client for this stand-in, with `token`.
    pub fn api(&self, token: &str) -> sayso::chat::slack::api::SlackApi {
        sayso::chat::slack::api::SlackApi::new(&self.api_url.parse().unwrap(), token)
    }

    /// A person's direct message conversation with the bot, as Slack names it.
    pub fn dm_of(user: &str) -> String {
        format!("D{}", &user[1..])
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.inner.lock().calls.clone()
    }

    /// The calls to `method`.
    pub fn calls_to(&self, method: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.method == method)
            .collect()
    }

    /// What was wrong in any call: empty when sayso kept to Slack's shapes.
    pub fn problems(&self) -> Vec<String> {
        self.calls()
            .iter()
            .flat_map(|c| c.problems.iter().map(move |p| format!("{}: {p}", c.method)))
            .collect()
    }

    /// Every message posted, as it is now.
    pub fn messages(&self) -> Vec<Posted> {
        self.inner.lock().messages.clone()
    }

    pub fn responses(&self) -> Vec<(String, Value)> {
        self.inner.lock().responses.clone()
    }

    /// The next `n` Web API calls are answered 503.
    pub fn fail_next(&self, n: usize) {
        self.inner.lock().outage = n;
    }

    /// A trigger_id for a press, valid for 3 s from now as Slack's are.
    pub fn trigger(&self) -> String {
        let id = format!("{}.{}.{}", 1000 + rand_u32() % 9000, rand_u32(), rand_u32());
        self.inner
            .lock()
            .triggers
            .insert(id.clone(), Instant::now());
        id
    }

    /// A response_url on this stand-in.
    pub fn response_url(&self) -> String {
        format!("http://{}/hooks/{}", self.addr, rand_u32())
    }

    /// Waits until `check` finds what it looks for in the stand-in, or panics naming `what`.
    pub async fn wait_for<T>(
        &self,
        what: &str,
        mut check: impl FnMut(&SlackStandIn) -> Option<T>,
    ) -> T {
        let calls = || {
            let calls: Vec<String> = (self.calls().iter())
                .map(|c| format!("{} {:?} {}", c.method, c.answer, c.body))
                .collect();
            format!("calls {calls:#?}")
        };
        standin::wait_for(what, || check(self), calls).await
    }

    /// Waits for the message posted to `user`, the `n`th (from 0).
    pub async fn message_to(&self, user: &str, n: usize) -> Posted {
        self.wait_for(&format!("message {n} to {user}"), |s| {
            s.messages().into_iter().filter(|m| m.user == user).nth(n)
        })
        .await
    }

    /// Waits until the message `ts` has been updated, and returns it as it is now.
    pub async fn updated(&self, what: &str, ts: &str) -> Posted {
        self.wait_for(what, |s| {
            s.messages()
                .into_iter()
                .find(|m| m.ts == ts && m.updates > 0)
        })
        .await
    }

    /// Waits for the `n`th (from 0) message sent to a response_url: `(url, body)`.
    pub async fn response(&self, what: &str, n: usize) -> (String, Value) {
        self.wait_for(what, |s| s.responses().into_iter().nth(n))
            .await
    }

    /// Waits for the `n`th (from 0) `views.open` call: a modal opened.
    pub async fn view_opened(&self, what: &str, n: usize) -> Call {
        self.wait_for(what, |s| s.calls_to("views.open").into_iter().nth(n))
            .await
    }

    // ---- Socket Mode ----

    /// How many websocket connections were opened so far.
    pub fn socket_connections(&self) -> usize {
        self.inner.lock().socket_connections
    }

    /// Sends an envelope over the open websocket (waiting for one to be open).
    pub async fn send_envelope(&self, envelope: Value) {
        let tx = self
            .wait_for("a Socket Mode connection", |s| {
                s.inner.lock().socket.clone()
            })
            .await;
        tx.send(SocketCommand::Send(envelope.to_string())).unwrap();
    }

    /// Drops the websocket without a word, as a network failure would.
    pub fn drop_socket(&self) {
        if let Some(tx) = self.inner.lock().socket.take() {
            let _ = tx.send(SocketCommand::Drop);
        }
    }

    /// The acknowledgements received, in order.
    pub fn acks(&self) -> Vec<Value> {
        self.inner.lock().acks.clone()
    }

    /// Waits until `n` envelopes in all have been acknowledged.
    pub async fn acked(&self, what: &str, n: usize) {
        self.wait_for(what, |s| (s.acks().len() == n).then_some(()))
            .await
    }

    fn record(&self, call: Call) {
        self.inner.lock().calls.push(call);
    }
}

fn rand_u32() -> u32 {
    rand::random()
}

// ---- the Web API ----

async fn api(
    State(standin): State<SlackStandIn>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    {
        let mut inner = standin.inner.lock();
        if inner.outage > 0 {
            inner.outage -= 1;
            inner.calls.push(Call {
                method: method.clone(),
                body: Value::Null,
                answer: Err("503".into()),
                problems: vec![],
            });
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                "<html>upstream connect error</html>",
            )
                .into_response();
        }
    }
    let mut problems = vec![];
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_string();
    let json_body = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json_body {
        problems.push("the body is not sent as application/json".into());
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or_else(|_| {
        problems.push("the body is not JSON".into());
        Value::Null
    });
    let wanted = if method == "apps.connections.open" {
        APP_TOKEN
    } else {
        BOT_TOKEN
    };
    let result = if token.is_empty() {
        Err("not_authed".to_string())
    } else if token != wanted {
        Err("invalid_auth".to_string())
    } else {
        match method.as_str() {
            "chat.postMessage" => post_message(&standin, &body, &mut problems),
            "chat.update" => update(&standin, &body, &mut problems),
            "chat.postEphemeral" => post_ephemeral(&body, &mut problems),
            "views.open" => views_open(&standin, &body, &mut problems),
            "apps.connections.open" => Ok(json!({
                "url": format!("ws://{}/link/?ticket={}&app_id=A0SAYSO", standin.ws_addr, rand_u32()),
            })),
            _ => Err("unknown_method".into()),
        }
    };
    let (answer, reply) = match result {
        Ok(mut reply) => {
            reply["ok"] = json!(true);
            (Ok(()), reply)
        }
        Err(error) => (Err(error.clone()), json!({"ok": false, "error": error})),
    };
    standin.record(Call {
        method,
        body,
        answer,
        problems,
    });
    axum::Json(reply).into_response()
}

fn post_message(
    standin: &SlackStandIn,
    body: &Value,
    problems: &mut Vec<String>,
) -> Result<Value, String> {
    let channel = body["channel"].as_str().unwrap_or_default();
    // A user id posts to the bot's direct messages with that user; Slack answers with the
    // conversation's id, which is what chat.update wants.
    let (user, conversation) = match channel.chars().next() {
        Some('U' | 'W') => (channel.to_string(), SlackStandIn::dm_of(channel)),
        Some('D') => (format!("U{}", &channel[1..]), channel.to_string()),
        _ => return Err("channel_not_found".into()),
    };
    if user.contains("GONE") {
        return Err("user_not_found".into());
    }
    check_message(body, problems);
    if !problems.is_empty() {
        return Err("invalid_blocks".into());
    }
    let mut inner = standin.inner.lock();
    let ts = format!("1712000000.{:06}", inner.next_ts);
    inner.next_ts += 1;
    inner.messages.push(Posted {
        channel: conversation.clone(),
        ts: ts.clone(),
        user,
        text: body["text"].as_str().unwrap_or_default().into(),
        blocks: body["blocks"].as_array().cloned().unwrap_or_default(),
        updates: 0,
    });
    Ok(json!({"channel": conversation, "ts": ts, "message": {"text": body["text"], "ts": ts}}))
}

fn update(
    standin: &SlackStandIn,
    body: &Value,
    problems: &mut Vec<String>,
) -> Result<Value, String> {
    let channel = body["channel"].as_str().unwrap_or_default();
    let ts = body["ts"].as_str().unwrap_or_default();
    check_message(body, problems);
    let mut inner = standin.inner.lock();
    let Some(message) = inner.messages.iter_mut().find(|m| m.ts == ts) else {
        problems.push(format!(
            "chat.update on ts {ts:?}, which was never returned"
        ));
        return Err("message_not_found".into());
    };
    if message.channel != channel {
        problems.push(format!(
            "chat.update of {ts} in {channel:?}, but it is in {}",
            message.channel
        ));
        return Err("channel_not_found".into());
    }
    if !problems.is_empty() {
        return Err("invalid_blocks".into());
    }
    message.text = body["text"].as_str().unwrap_or_default().into();
    message.blocks = body["blocks"].as_array().cloned().unwrap_or_default();
    message.updates += 1;
    Ok(json!({"channel": channel, "ts": ts}))
}

fn post_ephemeral(body: &Value, problems: &mut Vec<String>) -> Result<Value, String> {
    for field in ["channel", "user"] {
        if body[field].as_str().is_none_or(str::is_empty) {
            problems.push(format!("chat.postEphemeral without {field}"));
        }
    }
    check_mrkdwn("text", body["text"].as_str().unwrap_or_default(), problems);
    if problems.is_empty() {
        Ok(json!({"message_ts": "1712000000.999999"}))
    } else {
        Err("invalid_arguments".into())
    }
}

fn views_open(
    standin: &SlackStandIn,
    body: &Value,
    problems: &mut Vec<String>,
) -> Result<Value, String> {
    let trigger = body["trigger_id"].as_str().unwrap_or_default();
    let issued = standin.inner.lock().triggers.get(trigger).copied();
    match issued {
        None => return Err("invalid_trigger_id".into()),
        Some(at) if at.elapsed() > Duration::from_secs(3) => {
            return Err("expired_trigger_id".into());
        }
        Some(_) => {}
    }
    check_view(&body["view"], problems);
    if problems.is_empty() {
        Ok(json!({"view": {"id": "V0SAYSO", "type": "modal"}}))
    } else {
        Err("invalid_arguments".into())
    }
}

/// A `response_url`: the body must be a message (text), ephemeral or not said.
async fn hook(
    State(standin): State<SlackStandIn>,
    Path(hook): Path<String>,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut problems = vec![];
    if body["text"].as_str().is_none_or(str::is_empty) && body["blocks"].is_null() {
        problems.push("a response_url post without text or blocks".to_string());
    }
    check_mrkdwn(
        "response text",
        body["text"].as_str().unwrap_or_default(),
        &mut problems,
    );
    standin.record(Call {
        method: "response_url".into(),
        body: body.clone(),
        answer: Ok(()),
        problems,
    });
    standin.inner.lock().responses.push((hook, body));
    (StatusCode::OK, "ok").into_response()
}

// ---- Socket Mode ----

/// Accepts websocket connections (each `apps.connections.open` URL) and serves the latest.
async fn websockets(listener: TcpListener, standin: SlackStandIn) {
    while let Ok((tcp, _)) = listener.accept().await {
        let standin = standin.clone();
        tokio::spawn(async move {
            let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
                return;
            };
            let (tx, mut rx) = mpsc::unbounded_channel();
            {
                let mut inner = standin.inner.lock();
                inner.socket = Some(tx);
                inner.socket_connections += 1;
            }
            let hello = json!({
                "type": "hello", "num_connections": 1,
                "debug_info": {"host": "standin", "approximate_connection_time": 18060},
                "connection_info": {"app_id": "A0SAYSO"},
            });
            if ws.send(Message::text(hello.to_string())).await.is_err() {
                return;
            }
            loop {
                tokio::select! {
                    command = rx.recv() => match command {
                        Some(SocketCommand::Send(text)) => {
                            if ws.send(Message::text(text)).await.is_err() { return; }
                        }
                        // Gone without a close frame, as a dropped network connection.
                        Some(SocketCommand::Drop) | None => return,
                    },
                    frame = ws.next() => match frame {
                        Some(Ok(Message::Text(text))) => {
                            let ack: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                            standin.inner.lock().acks.push(ack);
                        }
                        Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                        Some(Ok(_)) => {}
                    },
                }
            }
        });
    }
}
