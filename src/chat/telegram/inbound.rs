//! Updates from Telegram: a press of a message's button (`callback_query`), a reply to an
//! ask (`message` with `reply_to_message`), and `/start`, which tells a person the user id
//! their operator binds to them. They come by long polling (`run_listener`) or by webhook
//! (http/chat.rs checks its secret, then calls `handle_update`).
//!
//! Who answers is `from.id`, which Telegram sets; a press is taken only from a message this
//! bot posted for that very decision, and each update once (`first_seen`), so a webhook's
//! retry or a replayed request counts for nothing.

use std::time::Duration;

use serde_json::{Value, json};

use super::api::{ApiError, BotApi, POLL_SECONDS};
use crate::chat::{answer, settled};
use crate::domain::chat::{ChatReply, parse_button_value};
use crate::domain::outbox::Channel;
use crate::render::T;
use crate::service::{ChatOutcome, Service};

/// Takes updates by long polling until the server stops: forgets any webhook first (Telegram
/// refuses getUpdates while one is set), then asks for updates after the last one taken,
/// which is kept in the database so a restart neither loses nor repeats any.
pub async fn run_listener(svc: Service, api: BotApi) {
    let mut backoff = Duration::from_secs(1);
    loop {
        match api.call("deleteWebhook", &json!({})).await {
            Ok(_) => break,
            Err(e) => {
                tracing::warn!(error = ?e, "Telegram: could not clear the webhook; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(60));
            }
        }
    }
    // Per bot: another bot's update ids are its own.
    let offset_key = format!("telegram.{}.offset", api.bot);
    let mut offset: i64 = match svc.chat_state(&offset_key).await {
        Ok(v) => v.and_then(|v| v.parse().ok()).unwrap_or(0),
        Err(e) => {
            tracing::warn!(error = %e, "Telegram: could not read the last update taken");
            0
        }
    };
    backoff = Duration::from_secs(1);
    loop {
        let asked = json!({
            "offset": offset,
            "timeout": POLL_SECONDS,
            "allowed_updates": ["message", "callback_query"],
        });
        let updates = match api.call("getUpdates", &asked).await {
            Ok(Value::Array(updates)) => updates,
            Ok(other) => {
                tracing::warn!(answer = %other, "Telegram getUpdates gave no list");
                Vec::new()
            }
            Err(e) => {
                tracing::warn!(error = ?e, "Telegram getUpdates failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(60));
                continue;
            }
        };
        backoff = Duration::from_secs(1);
        for update in &updates {
            handle_update(&svc, &api, update).await;
            if let Some(id) = update["update_id"].as_i64() {
                offset = offset.max(id + 1);
            }
        }
        if !updates.is_empty()
            && let Err(e) = svc.set_chat_state(&offset_key, &offset.to_string()).await
        {
            tracing::warn!(error = %e, "Telegram: could not keep the last update taken");
        }
    }
}

/// Handles one update; anything not ours, or seen before, is left alone.
pub async fn handle_update(svc: &Service, api: &BotApi, update: &Value) {
    let Some(id) = update["update_id"].as_i64() else {
        tracing::warn!("a Telegram update without an update_id was ignored");
        return;
    };
    match svc.first_seen(&format!("telegram:{}:{id}", api.bot)).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(
                update = id,
                "a Telegram update was delivered again; ignored"
            );
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "Telegram: could not check an update; ignored");
            return;
        }
    }
    let result = if update["callback_query"].is_object() {
        press(svc, api, &update["callback_query"]).await
    } else if update["message"].is_object() {
        message(svc, api, &update["message"]).await
    } else {
        Ok(())
    };
    if let Err(e) = result {
        tracing::warn!(error = ?e, update = id, "Telegram: could not answer an update");
    }
}

/// A press of one of an ask's buttons.
async fn press(svc: &Service, api: &BotApi, q: &Value) -> Result<(), ApiError> {
    let query = q["id"].as_str().unwrap_or_default();
    let user = user_id(&q["from"]);
    let chat = q["message"]["chat"]["id"].as_i64().map(|c| c.to_string());
    let message = q["message"]["message_id"].as_i64().map(|m| m.to_string());
    let pressed = q["data"].as_str().and_then(parse_button_value);
    // The press must come from a message this bot posted for the same decision.
    let post = match (&chat, &message) {
        (Some(chat), Some(message)) => svc
            .chat_post(Channel::Telegram, chat, message)
            .await
            .ok()
            .flatten(),
        _ => None,
    };
    let (Some(user), Some((decision, code)), Some(post)) = (user, pressed, post) else {
        tracing::warn!(data = ?q["data"], "a Telegram press not on one of our asks was ignored");
        return reply_to_press(api, query, "This button is not one of sayso's.", true).await;
    };
    if post.decision != decision {
        tracing::warn!(%decision, "a Telegram press naming another decision than its message's");
        return reply_to_press(api, query, "This button is not one of sayso's.", true).await;
    }
    let (t, outcome, zone) = answer(
        svc,
        Channel::Telegram,
        &user,
        decision,
        &ChatReply::Button(code),
    )
    .await;
    match outcome {
        ChatOutcome::Recorded(d) => {
            reply_to_press(api, query, &crate::chat::recorded(&t, &d, &zone), false).await
        }
        ChatOutcome::NotYours => reply_to_press(api, query, &t.tr("chat-not-yours"), true).await,
        ChatOutcome::Settled(d) => reply_to_press(api, query, &settled(&t, &d, &zone), true).await,
        ChatOutcome::OpenPage(link) => {
            reply_to_press(api, query, &t.tr("chat-on-the-page"), false).await?;
            send(api, &user, &page_link(&t, &link), None).await
        }
        ChatOutcome::Refused(why) => reply_to_press(api, query, &why, true).await,
    }
}

/// A message to the bot: a reply to an ask answers it; `/start` tells the sender their id.
async fn message(svc: &Service, api: &BotApi, m: &Value) -> Result<(), ApiError> {
    let Some(user) = user_id(&m["from"]) else {
        return Ok(());
    };
    if m["from"]["is_bot"] == json!(true) {
        return Ok(());
    }
    let chat = m["chat"]["id"].as_i64().map(|c| c.to_string());
    let replied = m["reply_to_message"]["message_id"]
        .as_i64()
        .map(|r| r.to_string());
    let text = m["text"].as_str().unwrap_or_default();
    let this = m["message_id"].as_i64();
    let (Some(chat), Some(replied)) = (chat.clone(), replied) else {
        if text.trim_start().starts_with("/start") || chat.is_some() {
            let hello = format!(
                "Your Telegram user id is <code>{user}</code>. Your sayso operator binds it to \
                 you with:\n<code>sayso person set NAME --telegram {user}</code>\nThen \
                 questions for you arrive here; answer with the buttons, or reply to a \
                 question with your answer."
            );
            return send(api, chat.as_deref().unwrap_or(&user), &hello, this).await;
        }
        return Ok(());
    };
    let post = svc
        .chat_post(Channel::Telegram, &chat, &replied)
        .await
        .ok()
        .flatten();
    let Some(post) = post else {
        return send(
            api,
            &chat,
            "That message is not one of sayso's questions: reply to the question itself.",
            this,
        )
        .await;
    };
    let (t, outcome, zone) = answer(
        svc,
        Channel::Telegram,
        &user,
        post.decision,
        &ChatReply::Text(text.to_string()),
    )
    .await;
    let said = match outcome {
        ChatOutcome::Recorded(d) => crate::chat::recorded(&t, &d, &zone),
        ChatOutcome::NotYours => t.tr("chat-not-yours"),
        ChatOutcome::Settled(d) => settled(&t, &d, &zone),
        ChatOutcome::OpenPage(link) => {
            return send(api, &chat, &page_link(&t, &link), this).await;
        }
        ChatOutcome::Refused(why) => why,
    };
    send(api, &chat, &super::markdown::escape(&said), this).await
}

/// Telegram's user id of `from`, as text.
fn user_id(from: &Value) -> Option<String> {
    from["id"]
        .as_i64()
        .filter(|id| *id > 0)
        .map(|id| id.to_string())
}

fn page_link(t: &T, link: &str) -> String {
    format!(
        "{} <a href=\"{}\">{}</a>",
        super::markdown::escape(&t.tr("chat-answer-on-page")),
        super::markdown::escape_attr(link),
        super::markdown::escape(&t.tr("chat-open-it")),
    )
}

/// Answers a press: a short toast, or an alert the person must dismiss. Only the presser
/// sees it.
async fn reply_to_press(
    api: &BotApi,
    query: &str,
    text: &str,
    alert: bool,
) -> Result<(), ApiError> {
    let text: String = text.chars().take(200).collect();
    api.call(
        "answerCallbackQuery",
        &json!({"callback_query_id": query, "text": text, "show_alert": alert}),
    )
    .await
    .map(|_| ())
}

/// Sends `html` to `chat`, as a reply to `reply_to` when given.
async fn send(api: &BotApi, chat: &str, html: &str, reply_to: Option<i64>) -> Result<(), ApiError> {
    let mut body = super::message(chat, html);
    if let Some(id) = reply_to {
        body["reply_parameters"] = json!({"message_id": id, "allow_sending_without_reply": true});
    }
    api.call("sendMessage", &body).await.map(|_| ())
}

/// Tells Telegram where the webhook is, with its secret; tried until Telegram takes it.
pub async fn set_webhook(api: BotApi, url: String, secret: String) {
    let mut backoff = Duration::from_secs(1);
    let body = json!({
        "url": url,
        "secret_token": secret,
        "allowed_updates": ["message", "callback_query"],
    });
    loop {
        match api.call("setWebhook", &body).await {
            Ok(_) => {
                tracing::info!(%url, "Telegram sends updates to the webhook");
                return;
            }
            Err(e) => {
                tracing::warn!(error = ?e, "Telegram: could not set the webhook; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(300));
            }
        }
    }
}
