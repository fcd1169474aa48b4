//! The notice of a passkey added: it goes to the person on every channel they have (their
//! subscribed devices, their ntfy topic, their email), whatever their quiet hours, so a
//! passkey they did not add themselves does not go unseen. It is an outbox message about no
//! decision; `notify/notice.rs` words it.

use serde_json::json;
use time::format_description::well_known::Rfc3339;

use super::devices::Viewer;
use super::{Service, message, now};
use crate::domain::outbox::{Channel, NewMessage, Purpose, Route};
use crate::domain::webauthn::StoredPasskey;

/// How long a passkey notice is worth trying to deliver.
const NOTICE_GIVE_UP: time::Duration = time::Duration::hours(24);

impl Service {
    /// Puts the notice of `added` into the outbox for the viewer's person. A failure is
    /// logged: the passkey is added by then.
    pub(super) async fn announce_passkey(&self, viewer: &Viewer, added: &StoredPasskey) {
        let person = &viewer.person;
        let at = now();
        let payload = json!({
            "person": person.name,
            "inbox": viewer.inbox.name,
            "passkey": added.credential_id,
            "added_at": added.added_at.format(&Rfc3339).unwrap_or_default(),
            "user_agent": added.user_agent,
        });
        let mut routes = vec![Route::Push];
        if person.ntfy_url.is_some() {
            routes.push(Route::Ntfy);
        }
        if self.settings().email_enabled && person.email.is_some() {
            routes.push(Route::Email);
        }
        // Each chat the person is on; one not set up on this server is skipped, saying so.
        for chat in [Channel::Slack, Channel::Matrix, Channel::Telegram] {
            if person.chats.on(chat).is_some() {
                routes.push(chat.into());
            }
        }
        let messages: Vec<NewMessage> = routes
            .into_iter()
            .map(|route| NewMessage {
                payload: payload.clone(),
                give_up_at: at + NOTICE_GIVE_UP,
                person: Some(person.id),
                ..message(route, Purpose::PasskeyAdded, at)
            })
            .collect();
        match self.store().enqueue_notices(&messages, at).await {
            Ok(()) => self.kick_outbox(),
            Err(e) => tracing::error!(
                error = %e, person = %person.name,
                "the notice of a passkey added could not be written"
            ),
        }
    }
}
