//! Which messages a new decision puts into the outbox, and which channels are recorded as
//! skipped (with the reason) because they are not set up.

use time::{Duration, OffsetDateTime};

use super::Service;
use super::outbox::message;
use crate::domain::{Kind, NewDecision, NotificationState, Notify};
use crate::storage::{Inbox, InboxChannels, NewMessage};

/// A pending decision re-notifies once this share of its TTL has passed…
const REMINDER_AT: f64 = 0.8;
/// …when its TTL is at least this long.
const REMINDER_MIN_TTL: Duration = Duration::minutes(10);

/// The notification states and outbox messages of a new decision.
pub struct Plan {
    pub states: Vec<NotificationState>,
    pub messages: Vec<NewMessage>,
}

impl Service {
    pub(super) fn plan_notifications(
        &self,
        inbox: &Inbox,
        channels: &InboxChannels,
        new: &NewDecision,
        created_at: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> Plan {
        let mut plan = Plan {
            states: Vec::new(),
            messages: Vec::new(),
        };
        let mut ask = |channel: &str| {
            plan.states.push(state(channel, "pending", None));
            plan.messages.push(NewMessage {
                give_up_at: expires_at,
                ..message(channel, "ask", created_at)
            });
        };
        match new.spec.notify {
            Notify::None => {}
            Notify::Email => {
                let email = channels.email.as_ref();
                if !self.settings().email_enabled {
                    plan.states.push(state(
                        "email",
                        "skipped",
                        Some("email is not configured on this server (SAYSO_SMTP_URL); share the web_url yourself".into()),
                    ));
                } else if email.is_none() {
                    plan.states.push(state(
                        "email",
                        "skipped",
                        Some(format!(
                            "the inbox {:?} has no email address; set one with `sayso inbox set {} --email ADDR`",
                            inbox.name, inbox.name
                        )),
                    ));
                } else {
                    ask("email");
                }
            }
            Notify::Push => {
                // Devices may subscribe until the message goes out: the push channel itself
                // says `skipped` when none has.
                ask("push");
                if channels.ntfy_url.is_some() {
                    ask("ntfy");
                }
            }
        }
        let ttl = expires_at - created_at;
        if !plan.messages.is_empty() && new.spec.kind() != Kind::Todo && ttl >= REMINDER_MIN_TTL {
            plan.messages.push(NewMessage {
                give_up_at: expires_at,
                ..message("*", "reminder", created_at + ttl * REMINDER_AT)
            });
        }
        plan
    }
}

fn state(channel: &str, status: &str, detail: Option<String>) -> NotificationState {
    NotificationState {
        channel: channel.to_string(),
        status: status.to_string(),
        detail,
    }
}
