//! Which messages a new decision puts into the outbox, and which channels are recorded as
//! skipped (with the reason) because they are not set up.

use time::{Duration, OffsetDateTime};

use super::Service;
use super::outbox::message;
use crate::domain::inbox::{Inbox, InboxChannels};
use crate::domain::outbox::{Channel, MessageStatus, NewMessage, Purpose, Route};
use crate::domain::{Kind, NewDecision, NotificationState, Notify};

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
        // A session's approvals wait a moment for the rest of the burst (worker.rs gathers).
        let ask_at = match &new.spec.approval {
            Some(a) if a.session_id.is_some() => created_at + crate::domain::approval::GATHER,
            _ => created_at,
        };
        let mut ask = |channel: Channel| {
            plan.states
                .push(state(channel, MessageStatus::Pending, None));
            plan.messages.push(NewMessage {
                give_up_at: expires_at,
                ..message(channel.into(), Purpose::Ask, ask_at)
            });
        };
        match new.spec.notify {
            Notify::None => {}
            Notify::Email => {
                let email = channels.email.as_ref();
                if !self.settings().email_enabled {
                    plan.states.push(state(
                        Channel::Email,
                        MessageStatus::Skipped,
                        Some("email is not configured on this server (SAYSO_SMTP_URL); share the web_url yourself".into()),
                    ));
                } else if email.is_none() {
                    plan.states.push(state(
                        Channel::Email,
                        MessageStatus::Skipped,
                        Some(format!(
                            "the inbox {:?} has no email address; set one with `sayso inbox set {} --email ADDR`",
                            inbox.name, inbox.name
                        )),
                    ));
                } else {
                    ask(Channel::Email);
                }
            }
            Notify::Push => {
                // Devices may subscribe until the message goes out: the push channel itself
                // says `skipped` when none has.
                ask(Channel::Push);
                if channels.ntfy_url.is_some() {
                    ask(Channel::Ntfy);
                }
            }
        }
        let ttl = expires_at - created_at;
        // An approval's agent has stopped waiting long before a reminder would come.
        let reminded = new.spec.kind() != Kind::Todo && new.spec.approval.is_none();
        if !plan.messages.is_empty() && reminded && ttl >= REMINDER_MIN_TTL {
            plan.messages.push(NewMessage {
                give_up_at: expires_at,
                ..message(
                    Route::FanOut,
                    Purpose::Reminder,
                    created_at + ttl * REMINDER_AT,
                )
            });
        }
        plan
    }
}

fn state(channel: Channel, status: MessageStatus, detail: Option<String>) -> NotificationState {
    NotificationState {
        channel,
        status,
        detail,
    }
}
