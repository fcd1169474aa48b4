//! What the `Store` trait's methods take and return: its errors, the rows a create writes, and
//! the answers of reads and writes, in the service's terms.

use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::outbox::NewMessage;
use crate::domain::{Decision, Kind, NewDecision, NotificationState, Status};

/// What can go wrong in storage, in the terms the service needs to decide on.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    /// A uniqueness rule was broken (an inbox name taken, …).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database cannot be reached right now; worth retrying.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    #[error("storage error: {0}")]
    Other(String),
}

impl StoreError {
    /// The same error for another request that shared the failed work (a group of creates).
    pub fn for_another(&self) -> StoreError {
        match self {
            StoreError::NotFound => StoreError::NotFound,
            StoreError::Conflict(m) => StoreError::Conflict(m.clone()),
            StoreError::Unavailable(m) => StoreError::Unavailable(m.clone()),
            StoreError::Other(m) => StoreError::Other(m.clone()),
        }
    }
}

/// Which API keys a revocation stops.
#[derive(Debug, Clone, Copy)]
pub enum KeysToRevoke<'a> {
    /// The key with this hash.
    Hash(&'a str),
    /// Every key of the inbox.
    AllOf(Uuid),
}

/// Which API key a change names: by its id (`sayso key list`), or by the hash of the key.
#[derive(Debug, Clone, Copy)]
pub enum KeyRef<'a> {
    Id(Uuid),
    Hash(&'a str),
}

/// An API key as `sayso key list` shows it; the key itself is never kept, only its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyListing {
    pub id: Uuid,
    pub created_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
    /// Whether its questions may be `urgent`.
    pub urgent: bool,
}

/// What became of a key's urgent question (`Store::use_urgent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrgentUse {
    /// Counted: it may ring through quiet hours.
    Granted,
    /// The operator has not allowed this key urgent questions (or it is revoked).
    NotAllowed,
    /// The key has asked its most urgent questions of the last hour; the next may be
    /// urgent at `until`.
    Spent { until: OffsetDateTime },
}

/// A person's notification budget on each channel: at most `per_window` asks and reminders
/// in any `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetRule {
    pub per_window: u32,
    pub window: std::time::Duration,
}

/// What a person's notification budget made of a message (`Store::count_notification`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// Send it; it stands for `waiting` more messages the budget held, which it gathers.
    Granted { waiting: u64 },
    /// It was held, and a notification sent at `at` (after it was held) gathered it.
    Covered { at: OffsetDateTime },
    /// The budget is spent: hold it until `until`, when a place frees.
    Spent { until: OffsetDateTime },
}

/// A decision to insert, with its idempotency key and initial notification states.
#[derive(Debug, Clone)]
pub struct InsertDecision<'a> {
    pub id: Uuid,
    pub inbox_id: Uuid,
    pub new: &'a NewDecision,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub idempotency: Option<Idempotency<'a>>,
    pub notifications: Vec<NotificationState>,
    /// Outgoing messages written in the same transaction (the ask on each channel, the
    /// reminder).
    pub outbox: Vec<NewMessage>,
}

/// An `Idempotency-Key` and the hash of the request body it came with.
#[derive(Debug, Clone, Copy)]
pub struct Idempotency<'a> {
    pub key: &'a str,
    pub request_hash: &'a str,
}

/// The result of an insert.
#[derive(Debug)]
pub enum Inserted {
    /// A new decision was stored (with its `created` event).
    New(Decision),
    /// The inbox already has a decision under this idempotency key; nothing was written.
    Existing {
        decision: Decision,
        request_hash: String,
    },
    /// The inbox's daily quota has no room for another create today; nothing was written.
    QuotaExceeded,
}

/// What a create costs, in actions.
pub const CREATE_ACTIONS: i64 = 2;

/// The result of a conditional resolution.
#[derive(Debug)]
pub enum Resolved {
    /// This call resolved the decision; it is returned in its new state.
    Won(Decision),
    /// Someone else got there first, or (for an answer) its time was up: the decision as it
    /// is now, which may still be `pending` with `expires_at` in the past.
    Lost(Decision),
}

/// What a keyed read of a decision found (`Store::decision_for_key`).
#[derive(Debug)]
pub enum KeyedRead {
    /// The row is byte for byte the one the caller already knew: nothing was decoded.
    Unchanged,
    /// The decision with its notification states, and the exact bytes of the row they were
    /// decoded from where the store can give them (SQLite does; PostgreSQL does not).
    Read {
        decision: Box<Decision>,
        notifications: Vec<NotificationState>,
        row: Option<Vec<u8>>,
    },
}

/// Filters and paging for a list; newest first.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub status: Option<Status>,
    pub kind: Option<Kind>,
    pub project: Option<String>,
    pub limit: u32,
    /// Only decisions with an id below this one (the cursor).
    pub before: Option<Uuid>,
}

/// Something another replica did, heard over the database (PostgreSQL `LISTEN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// This decision was resolved somewhere.
    Resolved(Uuid),
    /// The listener lost its connection and is back: signals may have been missed.
    Reconnected,
}

/// A decision the expiry sweep expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    pub id: Uuid,
    pub kind: Kind,
}

/// A receipt as kept: its place in its inbox's chain, the resolution event it is for, and
/// the signed object as the text it was signed as (`domain::receipt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReceipt {
    pub inbox_id: Uuid,
    pub seq: i64,
    pub decision_id: Uuid,
    pub event_id: i64,
    pub receipt: String,
    pub signature: String,
    pub sha256: String,
}
