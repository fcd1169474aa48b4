//! The outgoing side (DESIGN.md §5): every message goes through the durable outbox in the
//! database; the worker claims due messages and hands each to its channel.
//!
//! Purposes: `ask` (a new decision), `reminder` (80 % of the TTL passed, still pending),
//! `resolved` (the decision is answered, declined, cancelled or expired: the webhook fires,
//! the mail thread gets a short note, a push or ntfy notification is withdrawn or updated).
//! Fan-out messages (channel `*`) are expanded by the worker into one message per channel.

pub mod email;
pub mod http_client;
pub mod ntfy;
pub mod push;
pub mod webhook;
pub mod worker;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::domain::Decision;
use crate::service::DecisionView;
use crate::storage::{Inbox, InboxChannels, OutboxMessage, Store};

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

/// Everything a channel may need to deliver one message.
pub struct Delivering<'a> {
    pub message: &'a OutboxMessage,
    pub decision: &'a Decision,
    /// The decision as the API shows it: the webhook's body.
    pub view: &'a DecisionView,
    pub inbox: &'a Inbox,
    pub channels: &'a InboxChannels,
    /// The decision's answer link.
    pub web_url: &'a str,
    /// The service's public base URL, without a trailing slash.
    pub public_url: &'a str,
    pub store: &'a dyn Store,
}

/// One way of reaching someone: email, Web Push, ntfy, a webhook.
#[async_trait]
pub trait Channel: Send + Sync {
    /// The `channel` name of the messages this channel delivers.
    fn name(&self) -> &'static str;

    /// Delivers one message. Called at least once per message: a crash between delivery and
    /// its record repeats it, so deliveries carry stable ids (Message-ID, webhook-id, tag).
    async fn deliver(&self, d: &Delivering<'_>) -> Delivery;
}

/// The outbox worker with every channel this server is configured for: email when an SMTP
/// server is set, and always Web Push, ntfy and webhooks (each skips an inbox that has not
/// set it up, saying why).
pub fn build_worker(
    args: &crate::config::ServeArgs,
    public_url: &str,
) -> anyhow::Result<worker::Worker> {
    let mut channels: Vec<Arc<dyn Channel>> = vec![
        Arc::new(push::WebPushChannel::new(push_subject(
            &args.mail_from,
            public_url,
        ))),
        Arc::new(ntfy::NtfyChannel::new()),
        Arc::new(webhook::WebhookChannel::new(args.allow_private_webhooks)),
    ];
    if let Some(smtp_url) = &args.smtp_url {
        let email = email::EmailChannel::new(smtp_url, &args.mail_from)
            .map_err(|e| anyhow::anyhow!("SAYSO_SMTP_URL / SAYSO_MAIL_FROM: {e}"))?;
        channels.push(Arc::new(email));
    }
    let settings = worker::WorkerSettings {
        retry_base: Duration::from_millis(args.outbox_retry_base_ms.max(1)),
        lease: Duration::from_secs(args.outbox_lease_s.max(1)),
        ..worker::WorkerSettings::default()
    };
    Ok(worker::Worker::new(channels, settings))
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
