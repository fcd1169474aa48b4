//! Telegram (docs/CHANNELS.md): a bot that asks each person in their private chat with it.
//!
//! An ask is a message with an inline keyboard (bool, approvals, a short `choose`, a
//! to-do), a forced reply (a text), or the page's link alone (a form, an Allow the message
//! cannot show whole or that wants a passkey); it is edited in place when the decision
//! settles, from any channel, and while a rule of several people counts. Presses and replies
//! come by long polling (no public URL needed) or, with `SAYSO_TELEGRAM_WEBHOOK_SECRET`, by
//! webhook (inbound.rs); either way an answer counts as the person whose Telegram user id
//! pressed or replied, never by name.

mod api;
mod inbound;
mod markdown;
mod render;

pub use api::BotApi;
pub use inbound::{handle_update, run_listener, set_webhook};

use async_trait::async_trait;
use serde_json::{Value, json};

use self::api::ApiError;
use super::{TelegramSettings, ask, settled, standing};
use crate::courier::{Courier, Delivering, Delivery, ESCALATE_SKIPPED, NOTICE_SKIPPED, Notice};
use crate::domain::chat::ChatPost;
use crate::domain::outbox::{Channel, Purpose};

/// Delivers asks to people's Telegram chats and edits them as their decisions move on.
pub struct TelegramCourier {
    api: BotApi,
}

impl TelegramCourier {
    pub fn new(settings: &TelegramSettings) -> Self {
        TelegramCourier {
            api: BotApi::new(settings),
        }
    }
}

#[async_trait]
impl Courier for TelegramCourier {
    fn channel(&self) -> Channel {
        Channel::Telegram
    }

    async fn deliver(&self, d: &Delivering<'_>) -> Delivery {
        let (Some(chat), Some(person)) = (d.channels.chats.telegram.as_deref(), d.person) else {
            return Delivery::Skipped("the person has no Telegram user".into());
        };
        match d.message.purpose {
            Purpose::Ask | Purpose::Reminder => {
                let shown = render::fit(ask(d), None);
                let mut body = message(chat, &render::text(&shown, None));
                if let Some(markup) = render::markup(&shown) {
                    body["reply_markup"] = markup;
                }
                let sent = match self.api.call("sendMessage", &body).await {
                    Ok(sent) => sent,
                    Err(e) => return e.delivery(),
                };
                let Some(message_id) = sent["message_id"].as_i64() else {
                    return Delivery::Failed("Telegram sendMessage gave no message_id".into());
                };
                let post = ChatPost {
                    decision: d.decision.id,
                    person: person.id,
                    channel: Channel::Telegram,
                    conversation: chat.to_string(),
                    message: message_id.to_string(),
                };
                // Sent already: trying again would send it twice. Unrecorded, the message
                // is not edited when the decision settles, which the log says.
                if let Err(e) = d.outbox.record_chat_post(&post).await {
                    tracing::warn!(error = %e, decision = %d.decision.id,
                        "a Telegram message was sent but not recorded; it will not be updated");
                }
                Delivery::Sent(Some(format!(
                    "telegram message {message_id} in chat {chat}"
                )))
            }
            Purpose::Resolved | Purpose::Progress => self.update(d, chat, person.id).await,
            Purpose::Escalate => Delivery::Skipped(ESCALATE_SKIPPED.into()),
            Purpose::PasskeyAdded => Delivery::Skipped(NOTICE_SKIPPED.into()),
        }
    }

    async fn notify_person(&self, n: &Notice<'_>) -> Delivery {
        let Some(chat) = n.person.chats.telegram.as_deref() else {
            return Delivery::Skipped(format!("{} has no Telegram user", n.person.name));
        };
        let text = format!(
            "<b>{}</b>\n{}\n<a href=\"{}\">Open sayso</a>",
            markdown::escape(&n.title),
            markdown::escape(&n.body),
            markdown::escape_attr(&n.url)
        );
        match self.api.call("sendMessage", &message(chat, &text)).await {
            Ok(_) => Delivery::Sent(Some(format!("telegram notice in chat {chat}"))),
            Err(e) => e.delivery(),
        }
    }
}

impl TelegramCourier {
    /// Edits the person's messages of the decision: settled (no keyboard) or the tally so far
    /// (keyboard kept).
    async fn update(&self, d: &Delivering<'_>, chat: &str, person: uuid::Uuid) -> Delivery {
        let footer = match d.message.purpose {
            Purpose::Progress => {
                match standing(&d.t(), d.decision, crate::service::now(), d.zone) {
                    Some(p) => p,
                    None => return Delivery::Skipped("no tally to show".into()),
                }
            }
            _ => settled(&d.t(), d.decision, d.zone),
        };
        let posts = match d.outbox.chat_posts(d.decision.id, Channel::Telegram).await {
            Ok(posts) => posts,
            Err(e) => return Delivery::Retry(format!("database: {e}")),
        };
        let posts: Vec<ChatPost> = posts
            .into_iter()
            .filter(|p| p.person == person && p.conversation == chat)
            .collect();
        if posts.is_empty() {
            return Delivery::Skipped("no Telegram message of this decision to update".into());
        }
        let shown = render::fit(ask(d), Some(&footer));
        for post in &posts {
            let mut body = message(chat, &render::text(&shown, Some(&footer)));
            body["message_id"] = json!(post.message.parse::<i64>().unwrap_or_default());
            if d.message.purpose == Purpose::Progress
                && let Some(markup) = render::markup(&shown)
            {
                body["reply_markup"] = markup;
            }
            match self.api.call("editMessageText", &body).await {
                Ok(_) => {}
                Err(e) if e.is_unchanged() => {}
                Err(e @ ApiError::Transient(_)) => return e.delivery(),
                // A message deleted by the person, or too old to edit: nothing to update.
                Err(ApiError::Permanent(why)) => return Delivery::Skipped(why),
            }
        }
        Delivery::Sent(Some(format!("{} telegram message(s) updated", posts.len())))
    }
}

/// A sendMessage or editMessageText body: HTML, without link previews (a link the asker
/// wrote must not unfold into a card the person takes for sayso's).
pub(super) fn message(chat: &str, text: &str) -> Value {
    json!({
        "chat_id": chat,
        "text": text,
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": true},
    })
}

/// Sends `text` to `chat` (`sayso person test`).
pub async fn send_test(
    settings: &TelegramSettings,
    chat: &str,
    text: &str,
) -> Result<String, String> {
    let api = BotApi::new(settings);
    match api
        .call("sendMessage", &message(chat, &markdown::escape(text)))
        .await
    {
        Ok(sent) => Ok(format!(
            "sent a test message to the Telegram chat {chat} (message {})",
            sent["message_id"]
        )),
        Err(ApiError::Transient(why) | ApiError::Permanent(why)) => Err(why),
    }
}
