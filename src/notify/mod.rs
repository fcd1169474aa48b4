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

/// The outbox worker with every channel this server is configured for.
pub fn build_worker(
    args: &crate::config::ServeArgs,
    public_url: &str,
) -> anyhow::Result<worker::Worker> {
    let _ = public_url;
    let channels: Vec<Arc<dyn Channel>> = Vec::new();
    let settings = worker::WorkerSettings {
        retry_base: Duration::from_millis(args.outbox_retry_base_ms.max(1)),
        ..worker::WorkerSettings::default()
    };
    Ok(worker::Worker::new(channels, settings))
}
