//! The lifecycle rules (docs/API.md) on top of storage: create, read, wait, answer, cancel, expire.
//! Handlers (HTTP, MCP, CLI) call one function here each and map its result.
//!
//! Uses `render`, `wake`, `storage`, `metrics` and `domain` (docs/ARCHITECTURE.md, checked by
//! tests/layers.rs).

mod allowance_uses;
mod allowances;
mod answers;
mod chat;
mod chat_reading;
mod decisions;
mod devices;
mod events;
mod expiry;
mod export;
mod feed;
mod inboxes;
mod notifications;
mod outbox;
mod passkey_notices;
mod passkeys;
mod people;
mod receipts;
mod retention;
mod shown;
mod subscriptions;
pub mod tokens;
mod urgent;
mod usage;
mod vapid;
pub mod view;
mod waiting;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::sync::watch;
use uuid::Uuid;

use crate::domain::{Decision, Issue};
use crate::metrics::Metrics;
use crate::storage::{Store, StoreError};
use crate::wake::Waiters;

pub use allowance_uses::{AllowanceUses, MAX_USES_PAGE, MadeAllowance, SHOWN_USES};
pub use chat::ChatOutcome;
pub use chat_reading::{Reading, SHOWN_CHARS};
pub use decisions::{Created, ListPage, ListQuery};
pub use devices::{DEVICE_COOKIE, SECURE_DEVICE_COOKIE, Viewer};
pub use events::ResolutionFeed;
pub use export::ExportQuery;
pub use feed::{FEED_PAGE, Feed, FeedCursor, Waiting};
pub use inboxes::{ChannelChanges, FirstRun};
pub use notifications::message;
pub use outbox::Outbox;
pub use people::PersonSettings;
pub use receipts::{MAX_RECEIPTS_PAGE, RECEIPT_KEY_SETTING};
pub use tokens::Tokens;
pub use usage::{QuotaView, UsageView};
pub use vapid::{VAPID_SETTING, VapidKey};
pub use view::{AskHandle, DecisionView};

/// Why a service call did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The request is well-formed JSON of the wrong shape; every problem is listed.
    #[error("the request is not valid")]
    Validation(Vec<Issue>),
    #[error("missing or unknown API key")]
    Unauthorized,
    #[error("not found")]
    NotFound,
    /// The decision was already answered, declined, cancelled or expired.
    #[error("the decision is already resolved")]
    AlreadyResolved(Box<Decision>),
    /// A person tried to answer a decision whose time is up.
    #[error("the decision has expired")]
    Expired(Box<Decision>),
    #[error("this Idempotency-Key was already used with another request body")]
    IdempotencyMismatch,
    /// A name is taken (an inbox), said in the message.
    #[error("{0}")]
    Conflict(String),
    /// The inbox's daily quota is used up; it renews at the next UTC midnight.
    #[error("the daily quota of this inbox is used up")]
    QuotaExceeded {
        /// Seconds until the next UTC midnight.
        retry_after: u64,
    },
    /// An answer to a tool approval through its `web_url`, which only shows it: approvals
    /// are answered from the person's feed or notifications, never with what an agent holds.
    #[error("a tool approval is answered from the person's sayso feed or a notification")]
    AnswerElsewhere,
    /// A receipt asked for that is not there yet: the decision is still pending, or its
    /// resolution is not chained yet (worth asking again in a moment).
    #[error("the receipt is not ready")]
    ReceiptNotReady { pending: bool },
    #[error("the database is unavailable")]
    Unavailable,
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ServiceError::NotFound,
            StoreError::Conflict(m) => ServiceError::Conflict(m),
            StoreError::Unavailable(m) => {
                tracing::warn!(cause = %m, "database unavailable");
                ServiceError::Unavailable
            }
            StoreError::Other(m) => ServiceError::Internal(m),
        }
    }
}

impl ServiceError {
    /// A single validation problem.
    pub fn invalid(path: &str, message: impl Into<String>) -> Self {
        ServiceError::Validation(vec![Issue {
            path: path.to_string(),
            message: message.into(),
        }])
    }
}

/// How the service is set up.
#[derive(Debug, Clone)]
pub struct ServiceSettings {
    /// Base of the links sent to people, without a trailing slash.
    pub public_url: String,
    /// The longest an await may park.
    pub max_await: Duration,
    /// How often due decisions are swept into `expired`.
    pub expiry_interval: Duration,
    /// Whether an SMTP server is configured, so email asks are sent rather than skipped.
    pub email_enabled: bool,
    /// Whether a `callback_url` may name a loopback, private or other inner address
    /// (`SAYSO_ALLOW_PRIVATE_WEBHOOKS`); without it such a literal address is refused at create.
    pub allow_private_webhooks: bool,
    /// How long resolved decisions are kept (`SAYSO_RETENTION_DAYS`); `None` keeps them all.
    pub retention: Option<time::Duration>,
    /// The most urgent questions one API key may ask in an hour (`SAYSO_URGENT_PER_HOUR`),
    /// among the keys the operator allows urgent ones at all; 0 for no hourly cap.
    pub urgent_per_hour: u32,
}

/// The service: cheap to clone, shared by every handler.
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    waiters: Arc<Waiters>,
    /// Event streams, keyed by inbox id, woken when a decision of the inbox resolves.
    inbox_waiters: Arc<Waiters>,
    tokens: Tokens,
    settings: ServiceSettings,
    shutdown_tx: watch::Sender<bool>,
    shutdown_rx: watch::Receiver<bool>,
    /// Wakes the outbox worker when a message was written on this replica.
    outbox_kick: tokio::sync::Notify,
    /// The VAPID key pair, read once (every replica shares the stored one).
    vapid: tokio::sync::OnceCell<VapidKey>,
    /// The receipt key, read once (every replica shares the stored one).
    receipt_key: tokio::sync::OnceCell<crate::domain::receipt::ReceiptKey>,
    /// Resolutions made here, for the background chainer (`receipts.rs`).
    chain_queue: receipts::ChainQueue,
    /// The chainer's end of `chain_queue`, until `start_background` takes it.
    chain_inboxes: std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Uuid>>>,
    metrics: Metrics,
    /// The API's views of decisions as last shown, with their rows (`shown.rs`).
    shown: shown::ShownViews,
}

impl Service {
    /// Opens the service on a store: loads the server key, making it on first start.
    /// Nothing runs in the background until `start_background`.
    pub async fn new(
        store: Arc<dyn Store>,
        settings: ServiceSettings,
    ) -> Result<Service, ServiceError> {
        let stored = store
            .setting_or_init("token_key", &Tokens::generate_key_hex())
            .await?;
        let tokens = Tokens::from_key_hex(&stored)
            .ok_or_else(|| ServiceError::Internal("the stored token key is malformed".into()))?;
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let (chain_queue, chain_inboxes) = receipts::chain_queue();
        Ok(Service {
            inner: Arc::new(Inner {
                store,
                waiters: Waiters::new(),
                inbox_waiters: Waiters::new(),
                tokens,
                settings,
                shutdown_tx,
                shutdown_rx,
                outbox_kick: tokio::sync::Notify::new(),
                vapid: tokio::sync::OnceCell::new(),
                receipt_key: tokio::sync::OnceCell::new(),
                chain_queue,
                chain_inboxes: std::sync::Mutex::new(Some(chain_inboxes)),
                metrics: Metrics::new(),
                shown: shown::ShownViews::new(),
            }),
        })
    }

    /// Starts listening for other replicas' resolutions, the expiry sweeper and the receipt
    /// chainer; they stop with `shut_down`.
    pub fn start_background(&self) {
        let svc = self.clone();
        let sink = move |signal| {
            svc.inner.waiters.on_signal(signal);
            svc.wake_event_streams(signal);
        };
        if let Some(task) = self.inner.store.listen(Arc::new(sink)) {
            self.stop_with_shutdown(task);
        }
        let sweeper = tokio::spawn(expiry::sweep(self.clone()));
        self.stop_with_shutdown(sweeper);
        let inboxes = self
            .inner
            .chain_inboxes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(inboxes) = inboxes {
            let chainer = tokio::spawn(receipts::chainer(self.clone(), inboxes));
            self.stop_with_shutdown(chainer);
        }
        if let Some(keep) = self.settings().retention {
            let pruner = tokio::spawn(retention::prune(self.clone(), keep));
            self.stop_with_shutdown(pruner);
        }
    }

    /// Runs `task` (the outbox worker, say) until `shut_down`.
    pub fn spawn_until_shutdown(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.stop_with_shutdown(tokio::spawn(task));
    }

    /// Tells the outbox worker there is something to send.
    pub fn kick_outbox(&self) {
        self.inner.outbox_kick.notify_one();
    }

    /// Resolves when `kick_outbox` is called.
    pub async fn outbox_kicked(&self) {
        self.inner.outbox_kick.notified().await;
    }

    /// Tells parked awaits to return now and stops background work; used on shutdown.
    pub fn shut_down(&self) {
        let _ = self.inner.shutdown_tx.send(true);
        self.inner.waiters.wake_all();
        self.inner.inbox_waiters.wake_all();
    }

    /// Wakes what waits on a decision this replica resolved: its awaits, its inbox's event
    /// streams, and the outbox worker.
    fn resolved_here(&self, d: &Decision) {
        self.inner.metrics.decision_resolved(d.kind(), d.status);
        self.inner.waiters.wake(d.id);
        self.inner.inbox_waiters.wake(d.inbox_id);
        self.kick_outbox();
        self.chain_later(d.inbox_id);
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    pub fn waiters(&self) -> &Arc<Waiters> {
        &self.inner.waiters
    }

    pub fn tokens(&self) -> &Tokens {
        &self.inner.tokens
    }

    pub fn settings(&self) -> &ServiceSettings {
        &self.inner.settings
    }

    /// What this replica counts about itself.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The metrics as Prometheus scrapes them, with the database's states read now. Served
    /// when the database is down too: that is when they are wanted most.
    pub async fn scrape_metrics(&self) -> String {
        match self.inner.store.metrics_snapshot().await {
            Ok(now) => self.inner.metrics.render(Some(&now)),
            Err(error) => {
                tracing::warn!(%error, "metrics: the database did not answer");
                self.inner.metrics.render(None)
            }
        }
    }

    /// The answer link of a decision.
    pub fn web_url(&self, decision: &Decision) -> String {
        format!(
            "{}/d/{}",
            self.inner.settings.public_url,
            self.inner.tokens.answer_token(decision.id)
        )
    }

    /// The link that answers `decision` as `person` through their `channel`. Only the
    /// person's side ever carries it (their feed, a notification, the mail): no API
    /// response does.
    pub fn approve_url(
        &self,
        decision: &Decision,
        channel: crate::domain::PersonChannel,
        person: Uuid,
    ) -> String {
        format!(
            "{}/a/{}",
            self.inner.settings.public_url,
            self.inner
                .tokens
                .approve_token(decision.id, channel, person)
        )
    }

    /// Where `person` answers `decision` from `channel`: their own person link for a tool
    /// approval and for a decision sent to people by name, the answer link for any other.
    pub fn person_url(
        &self,
        decision: &Decision,
        channel: crate::domain::PersonChannel,
        person: Uuid,
    ) -> String {
        if decision.spec.approval.is_some() || decision.spec.routing.is_some() {
            self.approve_url(decision, channel, person)
        } else {
            self.web_url(decision)
        }
    }

    /// Whether the database answers.
    pub async fn ready(&self) -> bool {
        self.inner.store.ping().await.is_ok()
    }

    /// Whether the server is shutting down (waits then end early).
    pub fn is_shutting_down(&self) -> bool {
        *self.inner.shutdown_rx.borrow()
    }

    fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.inner.shutdown_rx.clone()
    }

    fn stop_with_shutdown(&self, task: tokio::task::JoinHandle<()>) {
        let mut rx = self.shutdown_signal();
        tokio::spawn(async move {
            let _ = rx.wait_for(|stop| *stop).await;
            task.abort();
        });
    }
}

/// Now, to the millisecond: the precision both stores keep.
pub fn now() -> OffsetDateTime {
    let t = OffsetDateTime::now_utc();
    t.replace_millisecond(t.millisecond()).unwrap_or(t)
}
