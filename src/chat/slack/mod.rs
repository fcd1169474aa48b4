//! Slack (docs/CHANNELS.md): a bot that asks each person in their direct messages with it.
//!
//! An ask is a Block Kit message (blocks.rs): the question, the context in Slack's mrkdwn with
//! everything the asker wrote escaped, what an approval runs set apart, and the kind's
//! buttons, the "Answer…" button of a text that opens a modal, or the page's link alone. It is
//! posted with `chat.postMessage` to the person's user id (Slack puts it in their direct
//! messages with the bot and names that conversation) and recorded, so `chat.update` changes
//! it in place when the decision settles, from any channel, and while a rule of several
//! people counts.
//!
//! Presses come to `/chat/slack/interactivity`, signed (signature.rs, http/chat_slack.rs), or
//! over Socket Mode (socket.rs); either way inbound.rs takes them, and an answer counts as
//! the person bound to the Slack user id that pressed, never by name.

pub mod api;
pub mod blocks;
pub mod inbound;
pub mod interaction;
pub mod mrkdwn;
pub(super) mod route;
pub mod signature;
pub mod socket;

use std::sync::Arc;

use async_trait::async_trait;

use self::api::{CallError, SlackApi};
use super::{SlackSettings, ask, settled, standing};
use crate::courier::{Courier, Delivering, Delivery, ESCALATE_SKIPPED, NOTICE_SKIPPED, Notice};
use crate::domain::chat::ChatPost;
use crate::domain::outbox::{Channel, Purpose};
use crate::service::Service;

/// Slack's errors for a message that can no longer be changed: deleted, too old, or in a
/// conversation the bot left. Nothing is left to update, which is not a failure.
const GONE: &[&str] = &[
    "message_not_found",
    "cant_update_message",
    "edit_window_closed",
    "channel_not_found",
    "is_archived",
];

/// Delivers asks to people's Slack direct messages and changes them as their decisions move
/// on.
pub struct SlackCourier {
    api: SlackApi,
}

impl SlackCourier {
    pub fn new(settings: &SlackSettings) -> Self {
        SlackCourier {
            api: SlackApi::new(&settings.api_url, &settings.bot_token),
        }
    }
}

#[async_trait]
impl Courier for SlackCourier {
    fn channel(&self) -> Channel {
        Channel::Slack
    }

    async fn deliver(&self, d: &Delivering<'_>) -> Delivery {
        let (Some(user), Some(person)) = (d.channels.chats.slack.as_deref(), d.person) else {
            return Delivery::Skipped("the person has no Slack user".into());
        };
        match d.message.purpose {
            Purpose::Ask | Purpose::Reminder => {
                let message = blocks::ask_message(&ask(d), d.decision.id, None);
                let (conversation, ts) = match self.api.post_message(user, &message).await {
                    Ok(posted) => posted,
                    Err(e) => return e.delivery(),
                };
                let post = ChatPost {
                    decision: d.decision.id,
                    person: person.id,
                    channel: Channel::Slack,
                    conversation: conversation.clone(),
                    message: ts.clone(),
                };
                // Posted already: trying again would post it twice. Unrecorded, the message
                // is not updated when the decision settles, which the log says.
                if let Err(e) = d.outbox.record_chat_post(&post).await {
                    tracing::warn!(error = %e, decision = %d.decision.id,
                        "a Slack message was posted but not recorded; it will not be updated");
                }
                Delivery::Sent(Some(format!("slack {conversation}/{ts}")))
            }
            Purpose::Resolved | Purpose::Progress => self.update(d, person.id).await,
            Purpose::Escalate => Delivery::Skipped(ESCALATE_SKIPPED.into()),
            Purpose::PasskeyAdded => Delivery::Skipped(NOTICE_SKIPPED.into()),
        }
    }

    async fn notify_person(&self, n: &Notice<'_>) -> Delivery {
        let Some(user) = n.person.chats.slack.as_deref() else {
            return Delivery::Skipped(format!("{} has no Slack user", n.person.name));
        };
        let message = blocks::notice_message(&n.title, &n.body, &n.url);
        match self.api.post_message(user, &message).await {
            Ok((conversation, ts)) => Delivery::Sent(Some(format!("slack {conversation}/{ts}"))),
            Err(e) => e.delivery(),
        }
    }
}

impl SlackCourier {
    /// Changes the person's messages of the decision: settled (no buttons) or the tally so
    /// far (buttons kept).
    async fn update(&self, d: &Delivering<'_>, person: uuid::Uuid) -> Delivery {
        let shown = ask(d);
        let message = match d.message.purpose {
            Purpose::Progress => {
                match standing(&d.t(), d.decision, crate::service::now(), d.zone) {
                    Some(p) => blocks::ask_message(&shown, d.decision.id, Some(&p)),
                    None => return Delivery::Skipped("no tally to show".into()),
                }
            }
            _ => blocks::settled_message(&shown, &settled(&d.t(), d.decision, d.zone)),
        };
        let posts = match d.outbox.chat_posts(d.decision.id, Channel::Slack).await {
            Ok(posts) => posts,
            Err(e) => return Delivery::Retry(format!("database: {e}")),
        };
        let posts: Vec<ChatPost> = posts.into_iter().filter(|p| p.person == person).collect();
        if posts.is_empty() {
            return Delivery::Skipped("no Slack message of this decision to update".into());
        }
        let mut gone = Vec::new();
        for post in &posts {
            match self
                .api
                .update(&post.conversation, &post.message, &message)
                .await
            {
                Ok(()) => {}
                Err(CallError::Failed(why)) if GONE.iter().any(|g| why.ends_with(g)) => {
                    gone.push(why);
                }
                Err(e) => return e.delivery(),
            }
        }
        if gone.len() == posts.len() {
            return Delivery::Skipped(gone.join("; "));
        }
        Delivery::Sent(Some(format!(
            "{} slack message(s) updated",
            posts.len() - gone.len()
        )))
    }
}

/// Sends `user` a test message (`sayso person test --channel slack`): where it went, or
/// Slack's error.
pub async fn send_test(settings: &SlackSettings, user: &str, text: &str) -> Result<String, String> {
    let api = SlackApi::new(&settings.api_url, &settings.bot_token);
    let message = blocks::notice_message("sayso", text, "");
    match api.post_message(user, &message).await {
        Ok((conversation, ts)) => Ok(format!(
            "sent a test message to the Slack user {user} (conversation {conversation}, ts {ts})"
        )),
        Err(e) => Err(e.text().to_string()),
    }
}

/// Starts Socket Mode when the app-level token is given: presses come over a websocket the
/// server keeps open, and each goes through `inbound` once (by its envelope id).
pub fn start_listener(svc: &Service, settings: &SlackSettings) {
    let Some(app_token) = settings.app_token.clone() else {
        return;
    };
    let api = SlackApi::new(&settings.api_url, &settings.bot_token);
    let handler: socket::Handler = {
        let svc = svc.clone();
        let api = api.clone();
        Arc::new(move |envelope: socket::Envelope| {
            let svc = svc.clone();
            let api = api.clone();
            Box::pin(async move { inbound::from_socket(&svc, &api, envelope).await })
        })
    };
    svc.spawn_until_shutdown(socket::run(api, app_token, handler));
}
