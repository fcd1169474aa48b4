//! A recording stand-in for Telegram's Bot API on loopback (Telegram itself cannot run here).
//! It checks each call against the Bot API's documented shapes
//! (https://core.telegram.org/bots/api): the bot's token in the path, the methods sayso calls
//! with their required fields, `parse_mode: HTML` text made only of the tags Telegram takes
//! and within its 4096 characters, inline keyboards whose buttons carry 1–64 bytes of
//! `callback_data`, edits only of messages it sent into that chat, and answers only to
//! callback queries it issued. A call that breaks a rule is answered 400 as Telegram does,
//! and recorded as a violation the test fails on.
//!
//! Updates are queued by the test (`press`, `reply`), built as Telegram sends them, and
//! handed out by `getUpdates` (long polling, honouring `offset` and `timeout`) or posted to
//! a webhook. `down` makes every call fail with 502 until `up`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::standin::{self, Shared};

pub const TOKEN: &str = "123456:TEST-token";

/// One call sayso made.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    pub body: Value,
}

/// A message the bot sent, as it stands now.
#[derive(Debug, Clone)]
pub struct Sent {
    pub chat: String,
    pub message_id: i64,
    pub text: String,
    pub markup: Option<Value>,
    pub edits: usize,
}

#[derive(Default)]
struct Inner {
    calls: Vec<Call>,
    violations: Vec<String>,
    sent: Vec<Sent>,
    updates: Vec<Value>,
    next_update: i64,
    next_message: HashMap<String, i64>,
    issued_queries: Vec<String>,
    down: bool,
}

#[derive(Clone)]
pub struct BotApiStandIn {
    inner: Shared<Inner>,
    queued: Arc<Notify>,
    pub base: String,
    /// The bot's token, which every call's path must carry.
    token: String,
}

impl BotApiStandIn {
    pub async fn start() -> BotApiStandIn {
        Self::start_with_token(TOKEN).await
    }

    /// A stand-in for the bot whose token is `token`.
    pub async fn start_with_token(token: &str) -> BotApiStandIn {
        let port = standin::loopback().await;
        let me = BotApiStandIn {
            inner: Shared::new(Inner {
                next_update: 1000,
                ..Inner::default()
            }),
            queued: Arc::new(Notify::new()),
            base: format!("http://{}/", port.addr),
            token: token.to_string(),
        };
        port.serve(
            Router::new()
                .route("/{bot}/{method}", post(call))
                .with_state(me.clone()),
        );
        me
    }

    pub fn calls(&self, method: &str) -> Vec<Call> {
        let inner = self.inner.lock();
        inner
            .calls
            .iter()
            .filter(|c| c.method == method)
            .cloned()
            .collect()
    }

    pub fn violations(&self) -> Vec<String> {
        self.inner.lock().violations.clone()
    }

    pub fn down(&self) {
        self.inner.lock().down = true;
    }

    pub fn up(&self) {
        self.inner.lock().down = false;
    }

    /// The messages sent to `chat`, oldest first.
    pub fn sent_to(&self, chat: &str) -> Vec<Sent> {
        let inner = self.inner.lock();
        inner
            .sent
            .iter()
            .filter(|s| s.chat == chat)
            .cloned()
            .collect()
    }

    /// Waits until a message to `chat` satisfies `ok`, and returns it.
    pub async fn wait_for(&self, chat: &str, what: &str, ok: impl Fn(&Sent) -> bool) -> Sent {
        standin::wait_for(
            &format!("a message to {chat} {what}"),
            || self.sent_to(chat).into_iter().rev().find(|s| ok(s)),
            || {
                format!(
                    "{:#?}; violations: {:?}",
                    self.sent_to(chat),
                    self.violations()
                )
            },
        )
        .await
    }

    /// Waits until `method` was called `n` times; returns those calls.
    pub async fn wait_calls(&self, method: &str, n: usize) -> Vec<Call> {
        standin::wait_for(
            &format!("{n} calls of {method}"),
            || Some(self.calls(method)).filter(|calls| calls.len() >= n),
            || format!("{} calls", self.calls(method).len()),
        )
        .await
    }

    /// Queues an update (its `update_id` is set here) and returns it.
    pub fn queue(&self, mut update: Value) -> Value {
        let mut inner = self.inner.lock();
        inner.next_update += 1;
        update["update_id"] = json!(inner.next_update);
        inner.updates.push(update.clone());
        drop(inner);
        self.queued.notify_waiters();
        update
    }

    /// A press of a message's button by `user`, as Telegram sends it.
    pub fn press_update(&self, user: i64, message: &Sent, data: &str) -> Value {
        let query = format!("q{}", rand_id());
        self.inner.lock().issued_queries.push(query.clone());
        json!({
            "callback_query": {
                "id": query,
                "from": {"id": user, "is_bot": false, "first_name": "Someone"},
                "message": {
                    "message_id": message.message_id,
                    "chat": {"id": message.chat.parse::<i64>().unwrap(), "type": "private"},
                    "date": 1_700_000_000,
                    "text": message.text,
                },
                "chat_instance": "1",
                "data": data,
            }
        })
    }

    /// Queues a press by `user` of the button of `message` labelled `label`; returns it.
    pub fn press(&self, user: i64, message: &Sent, label: &str) -> Value {
        self.queue(self.press_update(user, message, &Self::button(message, label)))
    }

    /// A reply by `user` in `chat` to the message `to`, as Telegram sends it.
    pub fn reply_update(&self, user: i64, chat: &str, to: Option<i64>, text: &str) -> Value {
        let mut message = json!({
            "message_id": 90_000 + rand_id() % 1000,
            "from": {"id": user, "is_bot": false, "first_name": "Someone"},
            "chat": {"id": chat.parse::<i64>().unwrap(), "type": "private"},
            "date": 1_700_000_000,
            "text": text,
        });
        if let Some(to) = to {
            message["reply_to_message"] = json!({
                "message_id": to,
                "chat": {"id": chat.parse::<i64>().unwrap(), "type": "private"},
                "date": 1_700_000_000,
            });
        }
        json!({ "message": message })
    }

    /// The button of `message` whose label contains `label`: its callback data.
    pub fn button(message: &Sent, label: &str) -> String {
        let rows = message.markup.as_ref().expect("the message has buttons")["inline_keyboard"]
            .as_array()
            .expect("an inline keyboard")
            .clone();
        rows.iter()
            .flat_map(|r| r.as_array().cloned().unwrap_or_default())
            .find(|b| b["text"].as_str().unwrap_or_default().contains(label))
            .unwrap_or_else(|| panic!("no button {label:?} in {rows:?}"))["callback_data"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

fn rand_id() -> i64 {
    use std::sync::atomic::{AtomicI64, Ordering};
    static NEXT: AtomicI64 = AtomicI64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn ok(result: Value) -> (StatusCode, Json<Value>) {
    (StatusCode::OK, Json(json!({"ok": true, "result": result})))
}

fn refused(inner: &mut Inner, method: &str, why: String) -> (StatusCode, Json<Value>) {
    inner.violations.push(format!("{method}: {why}"));
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"ok": false, "error_code": 400, "description": format!("Bad Request: {why}")})),
    )
}

async fn call(
    State(me): State<BotApiStandIn>,
    Path((bot, method)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    {
        let mut inner = me.inner.lock();
        if inner.down {
            return (
                StatusCode::BAD_GATEWAY,
                Json(json!({"ok": false, "error_code": 502, "description": "Bad Gateway"})),
            );
        }
        inner.calls.push(Call {
            method: method.clone(),
            body: body.clone(),
        });
        if bot != format!("bot{}", me.token) {
            inner
                .violations
                .push(format!("{method}: wrong token in the path {bot:?}"));
            return (
                StatusCode::UNAUTHORIZED,
                Json(json!({"ok": false, "error_code": 401, "description": "Unauthorized"})),
            );
        }
    }
    match method.as_str() {
        "getUpdates" => get_updates(&me, &body).await,
        "deleteWebhook" | "setWebhook" => ok(json!(true)),
        "sendMessage" => {
            let mut inner = me.inner.lock();
            if let Err(why) = check_message(&body) {
                return refused(&mut inner, &method, why);
            }
            let chat = chat_of(&body);
            let id = {
                let n = inner.next_message.entry(chat.clone()).or_insert(0);
                *n += 1;
                *n
            };
            inner.sent.push(Sent {
                chat: chat.clone(),
                message_id: id,
                text: body["text"].as_str().unwrap().to_string(),
                markup: body.get("reply_markup").cloned(),
                edits: 0,
            });
            ok(
                json!({"message_id": id, "chat": {"id": chat.parse::<i64>().unwrap_or(0)},
                      "date": 1_700_000_000, "text": body["text"]}),
            )
        }
        "editMessageText" => {
            let mut inner = me.inner.lock();
            if let Err(why) = check_message(&body) {
                return refused(&mut inner, &method, why);
            }
            let chat = chat_of(&body);
            let Some(id) = body["message_id"].as_i64() else {
                return refused(&mut inner, &method, "message_id is required".into());
            };
            let Some(sent) = inner
                .sent
                .iter_mut()
                .find(|s| s.chat == chat && s.message_id == id)
            else {
                return refused(
                    &mut inner,
                    &method,
                    format!("message to edit not found ({chat}/{id})"),
                );
            };
            let text = body["text"].as_str().unwrap().to_string();
            let markup = body.get("reply_markup").cloned();
            if sent.text == text && sent.markup == markup {
                return (
                    StatusCode::BAD_REQUEST,
                    Json(json!({"ok": false, "error_code": 400, "description":
                        "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"})),
                );
            }
            sent.text = text;
            sent.markup = markup;
            sent.edits += 1;
            ok(json!({"message_id": id}))
        }
        "answerCallbackQuery" => {
            let mut inner = me.inner.lock();
            let id = body["callback_query_id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if !inner.issued_queries.contains(&id) {
                return refused(&mut inner, &method, format!("query id {id:?} is invalid"));
            }
            if body["text"]
                .as_str()
                .is_some_and(|t| t.chars().count() > 200)
            {
                return refused(
                    &mut inner,
                    &method,
                    "text longer than 200 characters".into(),
                );
            }
            ok(json!(true))
        }
        other => {
            let mut inner = me.inner.lock();
            refused(
                &mut inner,
                other,
                "a method sayso has no business calling".into(),
            )
        }
    }
}

async fn get_updates(me: &BotApiStandIn, body: &Value) -> (StatusCode, Json<Value>) {
    let offset = body["offset"].as_i64().unwrap_or(0);
    let timeout = body["timeout"].as_u64().unwrap_or(0).min(50);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout);
    loop {
        let waiting = me.queued.notified();
        let found: Vec<Value> = {
            let inner = me.inner.lock();
            if inner.down {
                return (
                    StatusCode::BAD_GATEWAY,
                    Json(json!({"ok": false, "error_code": 502, "description": "Bad Gateway"})),
                );
            }
            inner
                .updates
                .iter()
                .filter(|u| u["update_id"].as_i64().unwrap() >= offset)
                .cloned()
                .collect()
        };
        if !found.is_empty() || tokio::time::Instant::now() >= deadline {
            return ok(Value::Array(found));
        }
        let _ = tokio::time::timeout_at(deadline, waiting).await;
    }
}

fn chat_of(body: &Value) -> String {
    match &body["chat_id"] {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// The rules a sendMessage or editMessageText body must keep.
fn check_message(body: &Value) -> Result<(), String> {
    if chat_of(body).is_empty() {
        return Err("chat_id is required".into());
    }
    let text = body["text"].as_str().ok_or("text is required")?;
    if body["parse_mode"] != "HTML" {
        return Err("sayso sends HTML".into());
    }
    let visible = check_html(text)?;
    if visible.is_empty() || visible.chars().count() > 4096 {
        return Err(format!(
            "message text is empty or too long ({})",
            visible.chars().count()
        ));
    }
    if let Some(markup) = body.get("reply_markup") {
        if let Some(rows) = markup.get("inline_keyboard") {
            for b in rows
                .as_array()
                .ok_or("inline_keyboard must be an array of arrays")?
                .iter()
                .flat_map(|r| r.as_array().cloned().unwrap_or_default())
            {
                let text = b["text"].as_str().ok_or("a button needs text")?;
                if text.is_empty() {
                    return Err("a button's text is empty".into());
                }
                match (b.get("callback_data"), b.get("url")) {
                    (Some(Value::String(d)), None) if (1..=64).contains(&d.len()) => {}
                    (None, Some(Value::String(_))) => {}
                    _ => return Err(format!("BUTTON_DATA_INVALID: {b}")),
                }
            }
        } else if markup.get("force_reply") != Some(&json!(true)) {
            return Err(format!("reply_markup of an unknown kind: {markup}"));
        }
    }
    Ok(())
}

/// Telegram's HTML: only its tags, balanced; only its entities. Returns the visible text.
fn check_html(text: &str) -> Result<String, String> {
    const TAGS: [&str; 15] = [
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "a",
        "code",
        "pre",
        "blockquote",
        "tg-spoiler",
        "span",
    ];
    let mut open: Vec<String> = Vec::new();
    let mut visible = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(['<', '&']) {
        visible.push_str(&rest[..i]);
        rest = &rest[i..];
        if rest.starts_with('&') {
            let end = rest.find(';').ok_or("an & that starts no entity")?;
            let entity = &rest[1..end];
            let numeric =
                entity.starts_with('#') && entity[1..].chars().all(|c| c.is_ascii_digit());
            if !(matches!(entity, "lt" | "gt" | "amp" | "quot") || numeric) {
                return Err(format!("unsupported entity &{entity};"));
            }
            visible.push('x');
            rest = &rest[end + 1..];
            continue;
        }
        let end = rest.find('>').ok_or("a < that starts no tag")?;
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(closing) = tag.strip_prefix('/') {
            if open.pop().as_deref() != Some(closing) {
                return Err(format!(
                    "can't parse entities: unexpected end tag </{closing}>"
                ));
            }
        } else {
            let name = tag.split_whitespace().next().unwrap_or_default();
            if !TAGS.contains(&name) {
                return Err(format!(
                    "can't parse entities: unsupported start tag <{name}>"
                ));
            }
            if name == "a" && !tag.contains("href=\"") {
                return Err("an <a> without href".into());
            }
            open.push(name.to_string());
        }
    }
    visible.push_str(rest);
    if !open.is_empty() {
        return Err(format!("can't parse entities: unclosed tags {open:?}"));
    }
    Ok(visible)
}
