//! Matrix (docs/CHANNELS.md): a bot account on one homeserver asks each person in a direct
//! room of their own, which it creates (`is_direct`, the person invited) on their first ask
//! and remembers.
//!
//! An ask is an `m.room.message` (render.rs) under a transaction id made from its outbox
//! message, so a repeated attempt returns the event already sent instead of sending twice;
//! the bot places the answers' reactions under it (👍 / 👎, 1️⃣ 2️⃣ …) for the person to
//! tap. When the decision settles, from any channel, or while a rule of several people
//! counts, the message is edited in place (`m.replace`). Reactions and replies come through
//! the bot's own `/sync` (sync.rs); an answer counts as the person whose Matrix id the
//! homeserver gives as the event's `sender`, and only in that person's own room.

mod api;
mod render;
mod sync;

pub use api::{Api, Credentials};
pub use sync::run_listener;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::Mutex;
use uuid::Uuid;

use self::api::ApiError;
use super::{MatrixSettings, ask, progress, settled};
use crate::courier::{Courier, Delivering, Delivery, ESCALATE_SKIPPED, NOTICE_SKIPPED, Notice};
use crate::domain::chat::ChatPost;
use crate::domain::outbox::{Channel, Purpose};
use crate::service::Outbox;

/// The bot: its homeserver connection, shared by the courier and the sync listener.
pub struct Matrix {
    api: Api,
    /// Held while a person's room is looked up or made, so two asks at once make one room.
    rooms: Mutex<()>,
}

impl Matrix {
    /// The bot of `settings`, which hold a password or an access token (the settings check).
    pub fn new(settings: &MatrixSettings) -> Arc<Matrix> {
        let credentials = match &settings.access_token {
            Some(token) => Credentials::Token {
                user: Some(settings.user.clone()),
                token: token.clone(),
            },
            None => Credentials::Password {
                user: settings.user.clone(),
                password: settings.password.clone().unwrap_or_default(),
            },
        };
        Arc::new(Matrix {
            api: Api::new(&settings.homeserver, credentials),
            rooms: Mutex::new(()),
        })
    }

    /// The bot of `settings` for this process: the courier and the sync listener share one,
    /// so a server that logs in with a password does it once, not once for each.
    pub fn shared(settings: &MatrixSettings) -> Arc<Matrix> {
        use std::sync::{Mutex as Plain, Weak};
        static BOTS: Plain<Vec<(String, Weak<Matrix>)>> = Plain::new(Vec::new());
        let key = format!(
            "{}\n{}\n{}",
            settings.homeserver,
            settings.user,
            settings.access_token.as_deref().unwrap_or_default()
        );
        let mut bots = BOTS.lock().unwrap_or_else(|e| e.into_inner());
        bots.retain(|(_, bot)| bot.strong_count() > 0);
        if let Some(bot) = bots
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, b)| b.upgrade())
        {
            return bot;
        }
        let bot = Matrix::new(settings);
        bots.push((key, Arc::downgrade(&bot)));
        bot
    }

    /// The person's direct room: the one remembered, else a new one with them invited.
    async fn room_for(&self, state: &impl State, user: &str) -> Result<Room, Delivery> {
        if !valid_user_id(user) {
            return Err(Delivery::Failed(format!(
                "{user:?} is not a Matrix user id (@name:server)"
            )));
        }
        let _held = self.rooms.lock().await;
        match state.get(&room_key(user)).await {
            Ok(Some(room)) if !room.is_empty() => {
                return Ok(Room {
                    id: room,
                    new: false,
                });
            }
            Ok(_) => {}
            Err(e) => return Err(Delivery::Retry(format!("database: {e}"))),
        }
        // Synapse makes the room even when the invitation goes to no one: ask first.
        match self.api.user_exists(user).await {
            Ok(true) => {}
            Ok(false) => {
                return Err(Delivery::Failed(format!(
                    "the Matrix homeserver knows no user {user} (their profile is not found)"
                )));
            }
            Err(e) => return Err(e.delivery()),
        }
        let room = self
            .api
            .create_direct_room(user)
            .await
            .map_err(|e| e.delivery())?;
        // The owner first: once the room is remembered, answers in it are read against it.
        for (key, value) in [(owner_key(&room), user), (room_key(user), room.as_str())] {
            if let Err(e) = state.set(&key, value).await {
                return Err(Delivery::Retry(format!("database: {e}")));
            }
        }
        tracing::info!(%room, user, "Matrix: made a direct room");
        Ok(Room {
            id: room,
            new: true,
        })
    }

    /// Forgets `room` as `user`'s room (they left it, or the bot can no longer post there),
    /// so their next ask makes a new one.
    async fn forget_room(&self, state: &impl State, user: &str, room: &str) {
        let _held = self.rooms.lock().await;
        if let Ok(Some(current)) = state.get(&room_key(user)).await
            && current == room
            && let Err(e) = state.set(&room_key(user), "").await
        {
            tracing::warn!(error = %e, "Matrix: could not forget a room");
        }
    }

    /// Sends `content` into `user`'s room, making the room first if need be. A remembered
    /// room the bot can no longer post to is forgotten, and the attempt is retried (into a
    /// new room).
    async fn send_to(
        &self,
        state: &impl State,
        user: &str,
        event_type: &str,
        txn: &str,
        content: &Value,
    ) -> Result<(String, String), Delivery> {
        let room = self.room_for(state, user).await?;
        match self.api.send(&room.id, event_type, txn, content).await {
            Ok(event) => Ok((room.id, event)),
            Err(e) if e.errcode() == Some("M_FORBIDDEN") && !room.new => {
                self.forget_room(state, user, &room.id).await;
                Err(Delivery::Retry(format!(
                    "{e}; the bot left or was removed from {}, so the next try makes a new room",
                    room.id
                )))
            }
            Err(e) => Err(e.delivery()),
        }
    }
}

struct Room {
    id: String,
    /// Made by this attempt.
    new: bool,
}

/// Where the courier and the listener keep what they remember (`chat_state`).
trait State: Sync {
    async fn get(&self, key: &str) -> Result<Option<String>, String>;
    async fn set(&self, key: &str, value: &str) -> Result<(), String>;
}

impl State for Outbox {
    async fn get(&self, key: &str) -> Result<Option<String>, String> {
        self.chat_state(key).await.map_err(|e| e.to_string())
    }
    async fn set(&self, key: &str, value: &str) -> Result<(), String> {
        self.set_chat_state(key, value)
            .await
            .map_err(|e| e.to_string())
    }
}

impl State for crate::service::Service {
    async fn get(&self, key: &str) -> Result<Option<String>, String> {
        self.chat_state(key).await.map_err(|e| e.to_string())
    }
    async fn set(&self, key: &str, value: &str) -> Result<(), String> {
        self.set_chat_state(key, value)
            .await
            .map_err(|e| e.to_string())
    }
}

/// The room remembered for a person's Matrix id.
fn room_key(user: &str) -> String {
    format!("matrix.room.{user}")
}

/// Whose direct room a room is: the one person whose answers count there.
fn owner_key(room: &str) -> String {
    format!("matrix.owner.{room}")
}

/// The reactions an ask offered and the codes they answer ("👍 a\n👎 d"), by its event.
fn keys_key(event: &str) -> String {
    format!("matrix.keys.{event}")
}

/// Where the listener's `/sync` resumes.
const SINCE: &str = "matrix.since";

/// `@localpart:server`, as the spec's grammar allows it (historical localparts included).
pub fn valid_user_id(user: &str) -> bool {
    let Some((local, server)) = user.strip_prefix('@').and_then(|u| u.split_once(':')) else {
        return false;
    };
    user.len() <= 255
        && !local.is_empty()
        && local.chars().all(|c| c.is_ascii_graphic() && c != ':')
        && !server.is_empty()
        && server
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c))
}

/// A transaction id made from what is sent and where: the same every attempt at it.
fn txn(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    format!("sayso.{}", hex::encode(&h.finalize()[..16]))
}

/// Sends `user` a test message (`sayso person test`), in their direct room: the one the
/// server remembers, else a new one it will use from then on.
pub async fn send_test(
    settings: &MatrixSettings,
    svc: &crate::service::Service,
    user: &str,
    text: &str,
) -> Result<String, String> {
    let bot = Matrix::new(settings);
    let content = render::notice(text, None, None);
    let txn = txn(&[&Uuid::new_v4().simple().to_string(), "test"]);
    match bot
        .send_to(svc, user, "m.room.message", &txn, &content)
        .await
    {
        Ok((room, event)) => Ok(format!(
            "sent a test message to {user} in the Matrix room {room} (event {event})"
        )),
        Err(Delivery::Retry(why) | Delivery::Failed(why) | Delivery::Skipped(why)) => Err(why),
        Err(Delivery::Sent(_)) => Err("the test message was not sent".into()),
    }
}

/// Delivers asks into people's direct rooms and edits them as their decisions move on.
pub struct MatrixCourier {
    matrix: Arc<Matrix>,
}

impl MatrixCourier {
    pub fn new(matrix: Arc<Matrix>) -> Self {
        MatrixCourier { matrix }
    }
}

#[async_trait]
impl Courier for MatrixCourier {
    fn channel(&self) -> Channel {
        Channel::Matrix
    }

    async fn deliver(&self, d: &Delivering<'_>) -> Delivery {
        let (Some(user), Some(person)) = (d.channels.chats.matrix.as_deref(), d.person) else {
            return Delivery::Skipped("the person has no Matrix user".into());
        };
        match d.message.purpose {
            Purpose::Ask | Purpose::Reminder => self.ask(d, user, person.id).await,
            Purpose::Resolved | Purpose::Progress => self.update(d, user, person.id).await,
            Purpose::Escalate => Delivery::Skipped(ESCALATE_SKIPPED.into()),
            Purpose::PasskeyAdded => Delivery::Skipped(NOTICE_SKIPPED.into()),
        }
    }

    async fn notify_person(&self, n: &Notice<'_>) -> Delivery {
        let Some(user) = n.person.chats.matrix.as_deref() else {
            return Delivery::Skipped(format!("{} has no Matrix user", n.person.name));
        };
        let text = format!("{}\n{}", n.title, n.body);
        let content = render::notice(&text, Some(&n.url), None);
        let id = n.message.id.simple().to_string();
        match self
            .matrix
            .send_to(
                n.outbox,
                user,
                "m.room.message",
                &txn(&[&id, "notice"]),
                &content,
            )
            .await
        {
            Ok((room, event)) => Delivery::Sent(Some(format!("matrix notice {event} in {room}"))),
            Err(d) => d,
        }
    }
}

impl MatrixCourier {
    async fn ask(&self, d: &Delivering<'_>, user: &str, person: Uuid) -> Delivery {
        let shown = ask(d);
        let content = render::content(&shown, None, true);
        let id = d.message.id.simple().to_string();
        let (room, event) = match self
            .matrix
            .send_to(
                d.outbox,
                user,
                "m.room.message",
                &txn(&[&id, "ask"]),
                &content,
            )
            .await
        {
            Ok(sent) => sent,
            Err(delivery) => return delivery,
        };
        let keys = render::keys(&shown);
        // What each reaction answers, before the person can see the reactions to press.
        if !keys.is_empty() {
            let table: Vec<String> = keys.iter().map(|(k, c)| format!("{k} {c}")).collect();
            if let Err(e) = d.outbox.set(&keys_key(&event), &table.join("\n")).await {
                return Delivery::Retry(format!("database: {e}"));
            }
        }
        let post = ChatPost {
            decision: d.decision.id,
            person,
            channel: Channel::Matrix,
            conversation: room.clone(),
            message: event.clone(),
        };
        // Sent already: a retry would find the same event (the transaction id), so record
        // failures are retried.
        if let Err(e) = d.outbox.record_chat_post(&post).await {
            return Delivery::Retry(format!("database: {e}"));
        }
        // The answers as reactions already placed, one tap away. A failure here leaves the
        // ask answerable (the person can react or reply themselves): logged, not retried.
        for (key, _) in &keys {
            let reaction = serde_json::json!({
                "m.relates_to": {"rel_type": "m.annotation", "event_id": event, "key": key}
            });
            if let Err(e) = self
                .matrix
                .api
                .send(
                    &room,
                    "m.reaction",
                    &txn(&[&id, "reaction", key]),
                    &reaction,
                )
                .await
            {
                tracing::warn!(error = %e, %room, "Matrix: could not place an answer's reaction");
                break;
            }
        }
        Delivery::Sent(Some(format!("matrix event {event} in {room}")))
    }

    /// Edits the person's messages of the decision: settled (how to answer dropped), or the
    /// tally so far (kept).
    async fn update(&self, d: &Delivering<'_>, user: &str, person: Uuid) -> Delivery {
        let counting = d.message.purpose == Purpose::Progress;
        let footer = if counting {
            match progress(&d.t(), d.decision) {
                Some(p) => p,
                None => return Delivery::Skipped("no tally to show".into()),
            }
        } else {
            settled(&d.t(), d.decision, d.zone)
        };
        let posts = match d.outbox.chat_posts(d.decision.id, Channel::Matrix).await {
            Ok(posts) => posts,
            Err(e) => return Delivery::Retry(format!("database: {e}")),
        };
        let posts: Vec<ChatPost> = posts.into_iter().filter(|p| p.person == person).collect();
        if posts.is_empty() {
            return Delivery::Skipped("no Matrix message of this decision to update".into());
        }
        let shown = ask(d);
        let new = render::content(&shown, Some(&footer), counting);
        let id = d.message.id.simple().to_string();
        let mut edited = 0;
        for post in &posts {
            let content = render::edit(&post.message, &new);
            // The line shown is part of it: a `progress` message is sent again, under the
            // same id, for each count, and each new count must be a new edit.
            let txn = txn(&[&id, "edit", &post.message, &footer]);
            match self
                .matrix
                .api
                .send(&post.conversation, "m.room.message", &txn, &content)
                .await
            {
                Ok(_) => edited += 1,
                Err(e) if retried(&e) => return e.delivery(),
                // A room the bot was removed from: that message cannot change any more.
                Err(e) => {
                    tracing::warn!(error = %e, room = %post.conversation, user,
                        "Matrix: a message could not be updated")
                }
            }
        }
        if edited == 0 {
            return Delivery::Failed(format!(
                "none of the {} Matrix message(s) could be updated",
                posts.len()
            ));
        }
        Delivery::Sent(Some(format!("{edited} matrix message(s) updated")))
    }
}

fn retried(e: &ApiError) -> bool {
    matches!(e.delivery(), Delivery::Retry(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_ids_are_checked_for_shape() {
        for good in ["@ana:m.example", "@a.b_c=d/e:m.example:8448", "@x:[::1]"] {
            assert!(valid_user_id(good), "{good}");
        }
        for bad in [
            "ana",
            "@ana",
            "@:m.example",
            "ana:m.example",
            "@a na:m.example",
            "@ana:",
        ] {
            assert!(!valid_user_id(bad), "{bad}");
        }
    }

    #[test]
    fn transaction_ids_are_stable_and_distinct() {
        assert_eq!(txn(&["m1", "ask"]), txn(&["m1", "ask"]));
        assert_ne!(txn(&["m1", "ask"]), txn(&["m1", "notice"]));
        assert_ne!(txn(&["m1a", "sk"]), txn(&["m1", "ask"]));
        assert!(
            txn(&["x"])
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.')
        );
    }
}
