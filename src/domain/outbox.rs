//! What the outbox holds: a message for one channel and one person (or a fan-out to all of
//! an inbox's channels), why it is sent, and how its delivery went.

use time::OffsetDateTime;
use uuid::Uuid;

use super::words::words;

/// A way of telling the person, or an agent's endpoint, about a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Channel {
    Email,
    Push,
    Ntfy,
    Webhook,
    /// The decision's completion callback: the request that resumes a durable workflow.
    Completion,
    Slack,
    Matrix,
    Telegram,
}

words!(Channel {
    Email => "email",
    Push => "push",
    Ntfy => "ntfy",
    Webhook => "webhook",
    Completion => "completion",
    Slack => "slack",
    Matrix => "matrix",
    Telegram => "telegram",
});

impl Channel {
    /// The chats (docs/CHANNELS.md): their messages are edited in place as the decision
    /// moves on, so they also get a `progress` message.
    pub fn is_chat(self) -> bool {
        matches!(self, Channel::Slack | Channel::Matrix | Channel::Telegram)
    }
}

/// Where an outbox message goes: one channel, or every channel the inbox has (`*`), which
/// the worker expands when the message's time comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    Email,
    Push,
    Ntfy,
    Webhook,
    Completion,
    Slack,
    Matrix,
    Telegram,
    FanOut,
}

words!(Route {
    Email => "email",
    Push => "push",
    Ntfy => "ntfy",
    Webhook => "webhook",
    Completion => "completion",
    Slack => "slack",
    Matrix => "matrix",
    Telegram => "telegram",
    FanOut => "*",
});

impl Route {
    /// The one channel this message goes to; `None` for a fan-out.
    pub fn channel(self) -> Option<Channel> {
        match self {
            Route::Email => Some(Channel::Email),
            Route::Push => Some(Channel::Push),
            Route::Ntfy => Some(Channel::Ntfy),
            Route::Webhook => Some(Channel::Webhook),
            Route::Completion => Some(Channel::Completion),
            Route::Slack => Some(Channel::Slack),
            Route::Matrix => Some(Channel::Matrix),
            Route::Telegram => Some(Channel::Telegram),
            Route::FanOut => None,
        }
    }
}

impl From<Channel> for Route {
    fn from(c: Channel) -> Self {
        match c {
            Channel::Email => Route::Email,
            Channel::Push => Route::Push,
            Channel::Ntfy => Route::Ntfy,
            Channel::Webhook => Route::Webhook,
            Channel::Completion => Route::Completion,
            Channel::Slack => Route::Slack,
            Channel::Matrix => Route::Matrix,
            Channel::Telegram => Route::Telegram,
        }
    }
}

/// Why a message is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// A new decision waits for the person.
    Ask,
    /// It still waits, at its `remind_at`.
    Reminder,
    /// It was resolved (answered, declined, expired or cancelled).
    Resolved,
    /// Its escalation time came: if still pending, it goes to more people (a fan-out the
    /// worker turns into asks to the escalation's targets).
    Escalate,
    /// A notice about no decision: a passkey was added to the person (`payload`: `person`,
    /// `inbox`, `passkey`, `added_at`, `user_agent`), so that one they did not add is seen.
    PasskeyAdded,
    /// An answer counted towards a rule of several people without resolving the decision,
    /// or its escalation: a fan-out to the chats that asked, which edit their message to show
    /// the tally and who else is asked now.
    Progress,
}

words!(Purpose {
    Ask => "ask",
    Reminder => "reminder",
    Resolved => "resolved",
    Escalate => "escalate",
    PasskeyAdded => "passkey_added",
    Progress => "progress",
});

/// The state of an outbox message, and of a decision's notification on one channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum MessageStatus {
    /// Waiting for its (next) attempt.
    Pending,
    Sent,
    /// Given up on.
    Failed,
    /// Nothing to send (channel not configured, decision resolved first, …).
    Skipped,
}

words!(MessageStatus {
    Pending => "pending",
    Sent => "sent",
    Failed => "failed",
    Skipped => "skipped",
});

/// A message to put into the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub route: Route,
    pub purpose: Purpose,
    pub payload: serde_json::Value,
    /// Not sent before this moment.
    pub not_before: OffsetDateTime,
    /// Marked failed when still unsent at this moment.
    pub give_up_at: OffsetDateTime,
    /// The person it goes to; `None` for the agent's webhook, a fan-out, and messages to
    /// the inbox's own person written before people (stored as '').
    pub person: Option<Uuid>,
}

/// A message in the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxMessage {
    pub id: Uuid,
    /// The decision it is about; the nil id for a notice about none (`PasskeyAdded`).
    pub decision_id: Uuid,
    pub route: Route,
    pub purpose: Purpose,
    pub payload: serde_json::Value,
    pub status: MessageStatus,
    /// Attempts made so far, counting the one a claim starts.
    pub attempts: u32,
    pub created_at: OffsetDateTime,
    pub give_up_at: OffsetDateTime,
    pub last_error: Option<String>,
    /// The person it goes to (see `NewMessage::person`).
    pub person: Option<Uuid>,
}

/// How an attempt at a message ended.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageResult {
    /// `Pending` to try again at `retry_at`.
    pub status: MessageStatus,
    pub retry_at: Option<OffsetDateTime>,
    /// What happened, for the event log and `notifications` (an error, a reason to skip).
    pub detail: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        for r in Route::ALL {
            assert_eq!(Route::parse(r.as_str()), Some(r));
            assert_eq!(r.channel().map(Route::from), r.channel().map(|_| r));
        }
        for c in Channel::ALL {
            assert_eq!(Route::from(c).channel(), Some(c));
        }
        assert_eq!(Route::parse("*"), Some(Route::FanOut));
        assert_eq!(Purpose::parse("Ask"), None);
        assert_eq!(
            serde_json::to_string(&MessageStatus::Skipped).unwrap(),
            "\"skipped\""
        );
        let bad = serde_json::from_str::<Channel>("\"sms\"").unwrap_err();
        assert!(bad.to_string().contains("sms"), "{bad}");
    }
}
