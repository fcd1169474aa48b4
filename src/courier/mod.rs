//! The contract between the outbox worker and the channels it sends through
//! (docs/NOTIFICATIONS.md): a `Courier` delivers one message (`Delivering`) or a notice to a
//! person (`Notice`) and says how it went (`Delivery`); the words a channel skips with; and
//! what the HTTP channels share (`http_client`). `notify`'s own channels (email, Web Push,
//! ntfy, webhooks) and the chats (`chat`) implement it; the worker in `notify` calls it.
//!
//! Uses `service` (its `Outbox` and `DecisionView`), `render` and `domain`; never `notify`
//! or `chat`, which both stand on it (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod http_client;

use async_trait::async_trait;

use crate::domain::Decision;
use crate::domain::inbox::{Inbox, InboxChannels};
use crate::domain::outbox::{Channel, OutboxMessage};
use crate::domain::people::Person;
use crate::service::{DecisionView, Outbox};

/// How one attempt to deliver a message ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Delivered; the detail says where or how, for the audit trail.
    Sent(Option<String>),
    /// Not delivered this time, worth trying again (network error, 5xx, 429, SMTP 4xx).
    Retry(String),
    /// Never deliverable (refused address, 4xx that will not change, 410 Gone).
    Failed(String),
    /// Nothing to send, and that is fine (channel not set up, nothing to withdraw).
    Skipped(String),
}

/// Why a channel has nothing to send for an `escalate` message (the worker turns those into
/// asks; one never reaches a channel).
pub const ESCALATE_SKIPPED: &str = "an escalation is sent as asks to its people";

/// The payload mark of an escalation's asks: the worker writes it and gathers no burst into
/// such an ask; a chat heads it "Escalated to you".
pub const ESCALATION: &str = "escalation";

/// Everything a channel may need to deliver one message.
pub struct Delivering<'a> {
    pub message: &'a OutboxMessage,
    pub decision: &'a Decision,
    /// The decision as the API shows it: the webhook's body.
    pub view: &'a DecisionView,
    pub inbox: &'a Inbox,
    /// The person the message goes to (the message's, or the inbox's own when it names
    /// none).
    pub person: Option<&'a Person>,
    /// That person's email and ntfy topic, and the inbox's webhook secret.
    pub channels: &'a InboxChannels,
    /// The zone every time the message states is in: the person's (render/zone.rs).
    pub zone: &'a crate::render::Zone,
    /// Where the person answers from this channel: a tool approval's approval link for the
    /// channel (never shown to an API key), else the decision's answer link.
    pub web_url: &'a str,
    /// The service's public base URL, without a trailing slash.
    pub public_url: &'a str,
    /// What a channel may read and write besides the message (push subscriptions, keys).
    pub outbox: &'a Outbox,
}

impl Delivering<'_> {
    /// The language of the person the message goes to (English when they chose none).
    pub fn t(&self) -> crate::render::T {
        crate::render::T::new(self.person.and_then(|p| p.lang).unwrap_or_default())
    }

    /// How many more pending approvals of the same agent session this ask stands for (the
    /// worker gathers a burst into one notification); 0 for any other message.
    pub fn gathered(&self) -> u64 {
        self.message.payload["gathered"].as_u64().unwrap_or(0)
    }

    /// How many more asks and reminders the person's notification budget held back that
    /// this one stands for (people.rs); 0 for most.
    pub fn waiting(&self) -> u64 {
        self.message.payload["waiting"].as_u64().unwrap_or(0)
    }
}

/// What delivers the messages of one channel: email, Web Push, ntfy, a webhook.
#[async_trait]
pub trait Courier: Send + Sync {
    /// The channel whose messages this courier delivers.
    fn channel(&self) -> Channel;

    /// Delivers one message. Called at least once per message: a crash between delivery and
    /// its record repeats it, so deliveries carry stable ids (Message-ID, webhook-id, tag).
    async fn deliver(&self, d: &Delivering<'_>) -> Delivery;

    /// Delivers a notice about no decision to its person (a passkey was added to them). A
    /// channel that reaches no person (the webhook) has none to send.
    async fn notify_person(&self, n: &Notice<'_>) -> Delivery {
        let _ = n;
        Delivery::Skipped(format!("{} carries no notices to a person", self.channel()))
    }
}

/// Why a channel that cannot edit what it sent skips a `progress` message (the worker sends
/// those to the chats alone).
pub const PROGRESS_SKIPPED: &str = "only a chat shows a tally in progress";

/// Why a channel skips a notice handed to it as a decision's message (the worker sends
/// notices through `Courier::notify_person`; one never reaches `deliver`).
pub const NOTICE_SKIPPED: &str = "a notice about no decision is sent to its person alone";

/// A notice as a channel sends it.
pub struct Notice<'a> {
    pub message: &'a OutboxMessage,
    /// Whom it goes to: their own email address, ntfy topic and devices.
    pub person: &'a Person,
    pub title: String,
    pub body: String,
    /// Where a tap leads: the person's feed on a bound device.
    pub url: String,
    /// What a channel may read and write besides the notice (push subscriptions, keys).
    pub outbox: &'a Outbox,
}
