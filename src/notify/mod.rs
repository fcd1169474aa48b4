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
//! Its own channels (email, Web Push, ntfy, webhooks) and the chats (`chat`) each deliver
//! through the `courier::Courier` contract.
//!
//! Uses `chat`, `courier`, `service` (its `Outbox`), `render`, `storage`'s budget types and
//! `domain`; never `http` or `mcp` (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod email;
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

use rand::Rng;

use crate::chat;
use crate::courier::Courier;
use crate::domain::outbox::{Channel, MessageResult, MessageStatus, OutboxMessage};
use crate::service::now;

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
