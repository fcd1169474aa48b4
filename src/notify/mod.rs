//! The outgoing side (docs/NOTIFICATIONS.md): every message goes through the durable outbox in the
//! database; the worker claims due messages and hands each to its channel.
//!
//! Purposes: `ask` (a new decision), `reminder` (80 % of the TTL passed, still pending),
//! `resolved` (the decision is answered, declined, cancelled or expired: the webhook and the
//! completion callback fire,
//! the mail thread gets a short note, a push or ntfy notification is withdrawn or updated),
//! `escalate` (its escalation time came: asks to the escalation's targets), and
//! `passkey_added`, a notice to a person about no decision (notice.rs).
//! Messages go to people: an ask to each person asked, on each of their channels. Fan-out
//! messages (channel `*`) are expanded by the worker into one message per channel and
//! person.
//!
//! Uses `service` (its `Outbox`), `render`, `storage`'s budget types and `domain`; never `http`
//! or `mcp` (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod chat;
pub mod email;
pub mod http_client;
pub mod notice;
pub mod ntfy;
pub mod outbound;
mod people;
pub mod push;
pub mod webhook;
pub mod worker;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rand::Rng;

use crate::domain::Decision;
use crate::domain::inbox::{Inbox, InboxChannels};
use crate::domain::outbox::{Channel, MessageResult, MessageStatus, OutboxMessage};
use crate::service::{DecisionView, Outbox, now};

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

/// Everything a channel may need to deliver one message.
pub struct Delivering<'a> {
    pub message: &'a OutboxMessage,
    pub decision: &'a Decision,
    /// The decision as the API shows it: the webhook's body.
    pub view: &'a DecisionView,
    pub inbox: &'a Inbox,
    /// The person the message goes to (the message's, or the inbox's own when it names
    /// none).
    pub person: Option<&'a crate::domain::people::Person>,
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
    async fn notify_person(&self, n: &notice::Notice<'_>) -> Delivery {
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

/// How the notification side is set up; `app` makes it from the command line.
#[derive(Debug, Clone)]
pub struct NotifySettings {
    /// SMTP server URL; email is off without one.
    pub smtp_url: Option<String>,
    /// The From of notification mail, and the VAPID contact.
    pub mail_from: String,
    /// Deliver webhooks to loopback and private addresses (home set-ups, tests).
    pub allow_private_webhooks: bool,
    /// The first retry of a failed message waits this long, doubling up to an hour.
    pub retry_base: Duration,
    /// How long a worker holds a message it is sending.
    pub lease: Duration,
    /// Asks and reminders one person gets on one channel per `budget_window`
    /// (`SAYSO_NOTIFY_PER_MINUTE`); 0 for no budget.
    pub notify_per_minute: u32,
    /// The span that budget is counted over: a minute (shorter in tests).
    pub budget_window: Duration,
    /// Slack, Matrix and Telegram, those that are on.
    pub chats: chat::ChatSettings,
}

impl Default for NotifySettings {
    fn default() -> Self {
        NotifySettings {
            smtp_url: None,
            mail_from: "sayso <sayso@localhost>".into(),
            allow_private_webhooks: false,
            retry_base: Duration::from_secs(5),
            lease: Duration::from_secs(120),
            notify_per_minute: 3,
            budget_window: Duration::from_secs(60),
            chats: chat::ChatSettings::default(),
        }
    }
}

/// Why the notification side cannot start.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// The SMTP URL or the From address is unusable; the message says how.
    #[error("SAYSO_SMTP_URL / SAYSO_MAIL_FROM: {0}")]
    Email(String),
}

/// The outbox worker with every channel this server is configured for: email when an SMTP
/// server is set, and always Web Push, ntfy and webhooks (each skips an inbox that has not
/// set it up, saying why).
pub fn build_worker(settings: &NotifySettings, public_url: &str) -> Result<Worker, NotifyError> {
    let mut channels: Vec<Arc<dyn Courier>> = vec![
        Arc::new(push::WebPushChannel::new(
            push_subject(&settings.mail_from, public_url),
            settings.allow_private_webhooks,
        )),
        Arc::new(ntfy::NtfyChannel::new()),
        Arc::new(webhook::WebhookChannel::new(
            settings.allow_private_webhooks,
        )),
        Arc::new(webhook::WebhookChannel::completion(
            settings.allow_private_webhooks,
        )),
    ];
    if let Some(smtp_url) = &settings.smtp_url {
        let email =
            email::EmailChannel::new(smtp_url, &settings.mail_from).map_err(NotifyError::Email)?;
        channels.push(Arc::new(email));
    }
    if let Some(s) = &settings.chats.slack {
        channels.push(Arc::new(chat::slack::SlackCourier::new(s)));
    }
    if let Some(t) = &settings.chats.telegram {
        channels.push(Arc::new(chat::telegram::TelegramCourier::new(t)));
    }
    if let Some(m) = &settings.chats.matrix {
        let bot = chat::matrix::Matrix::shared(m);
        channels.push(Arc::new(chat::matrix::MatrixCourier::new(bot)));
    }
    let pacing = WorkerSettings {
        retry_base: settings.retry_base.max(Duration::from_millis(1)),
        lease: settings.lease.max(Duration::from_secs(1)),
        budget: (settings.notify_per_minute > 0).then(|| crate::storage::BudgetRule {
            per_window: settings.notify_per_minute,
            window: settings.budget_window.max(Duration::from_millis(100)),
        }),
        ..WorkerSettings::default()
    };
    Ok(Worker::new(channels, pacing))
}

/// The VAPID `sub`: the mail address people can write to, else the public URL.
fn push_subject(mail_from: &str, public_url: &str) -> String {
    let address = mail_from
        .rsplit_once('<')
        .map(|(_, a)| a.trim_end_matches('>'))
        .unwrap_or(mail_from)
        .trim();
    if address.contains('@') && !address.ends_with("@localhost") {
        format!("mailto:{address}")
    } else {
        public_url.to_string()
    }
}

/// How the worker paces itself.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// The first retry waits this long; each later one twice as long, up to `retry_cap`.
    pub retry_base: Duration,
    pub retry_cap: Duration,
    /// How often to look for due messages when nothing wakes the worker.
    pub poll_interval: Duration,
    /// How long a claim holds a message before another worker may take it.
    pub lease: Duration,
    /// Messages claimed per round.
    pub batch: u32,
    /// Deliveries in flight at once.
    pub concurrency: usize,
    /// Each person's notification budget per channel (people.rs); `None` for none.
    pub budget: Option<crate::storage::BudgetRule>,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        WorkerSettings {
            retry_base: Duration::from_secs(5),
            retry_cap: Duration::from_secs(3600),
            poll_interval: Duration::from_secs(1),
            lease: Duration::from_secs(120),
            batch: 50,
            concurrency: 8,
            budget: None,
        }
    }
}

/// The couriers by channel, and how to pace them.
pub struct Worker {
    couriers: HashMap<Channel, Arc<dyn Courier>>,
    settings: WorkerSettings,
}

impl Worker {
    pub fn new(couriers: Vec<Arc<dyn Courier>>, settings: WorkerSettings) -> Self {
        Worker {
            couriers: couriers.into_iter().map(|c| (c.channel(), c)).collect(),
            settings,
        }
    }

    /// Try again later with exponential backoff and jitter, or give up once past the
    /// message's deadline.
    fn retry(&self, m: &OutboxMessage, error: String) -> MessageResult {
        let exp = m.attempts.saturating_sub(1).min(20);
        let base = self
            .settings
            .retry_base
            .saturating_mul(1 << exp)
            .min(self.settings.retry_cap);
        let jitter = rand::rng().random_range(0.75..1.25);
        let wait = base.mul_f64(jitter);
        let retry_at = now() + wait;
        if retry_at > m.give_up_at {
            return done(
                MessageStatus::Failed,
                &format!("gave up after {} attempts: {error}", m.attempts),
            );
        }
        MessageResult {
            status: MessageStatus::Pending,
            retry_at: Some(retry_at),
            detail: Some(error),
        }
    }
}

fn done(status: MessageStatus, detail: &str) -> MessageResult {
    MessageResult {
        status,
        retry_at: None,
        detail: Some(detail.to_string()),
    }
}
