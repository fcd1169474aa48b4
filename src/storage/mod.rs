//! Persistence: one `Store` trait (store.rs, in parts named for what they hold), a SQLite and
//! a PostgreSQL implementation, chosen by the database URL's scheme. The SQL both databases
//! run alike is written once (sql/); each store's folder holds what differs. Only this
//! module knows sqlx.

/// The columns a create writes, in the order its VALUES give them.
macro_rules! insert_columns {
    () => {
        "id, inbox_id, kind, question, project, spec, default_outcome, status, custom, \
         created_at, expires_at, idempotency_key, request_hash, has_image"
    };
}

// The columns each shared row type (`rows/`) reads, in macros so queries stay
// `&'static str`.

/// `InboxRow`'s, from `inboxes` aliased `i`.
macro_rules! inbox_columns {
    () => {
        "i.id, i.name, i.created_at, i.email, i.ntfy_url, i.ntfy_token, i.webhook_secret"
    };
}

/// `DecisionRow`'s.
macro_rules! decision_columns {
    () => {
        "id, inbox_id, spec, status, outcome, outcome_source, custom, remark, created_at, \
         expires_at, resolved_at, has_image, answered_via, answered_device, answers, cancel_reason"
    };
}

/// `MessageRow`'s.
macro_rules! message_columns {
    () => {
        "id, decision_id, channel, purpose, payload, status, attempts, created_at, \
         next_attempt_at, give_up_at, last_error, person"
    };
}

/// `PersonRow`'s, from `people` aliased `p`.
macro_rules! person_columns {
    () => {
        "p.id, p.inbox_id, p.name, p.email, p.ntfy_url, p.ntfy_token, p.slack_user, \
         p.matrix_user, p.telegram_chat, p.quiet_hours, p.quiet_tz, p.lang, p.created_at"
    };
}

/// `AllowanceRow`'s.
macro_rules! allowance_columns {
    () => {
        "id, inbox_id, decision_id, person_id, person, channel, harness, project, tool_name, \
         rule, session_id, created_at, until"
    };
}

/// `ReceiptRow`'s, which a receipt also writes in this order.
macro_rules! receipt_columns {
    () => {
        "inbox_id, seq, decision_id, event_id, receipt, signature, sha256"
    };
}

mod batching;

/// What an outbox insert does with a message already there for the same decision, channel,
/// purpose and person: keeps it (enqueueing is idempotent), except a `progress` message
/// already sent, which is sent again, so each counted answer of a rule of several reaches
/// the chats (its courier shows the tally as it stands then). The same SQL on both stores.
macro_rules! outbox_on_conflict {
    () => {
        " ON CONFLICT (decision_id, channel, purpose, person) DO UPDATE SET \
         status = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at, \
         give_up_at = excluded.give_up_at, claimed_until = NULL \
         WHERE outbox.purpose = 'progress' AND outbox.status <> 'pending'"
    };
}
pub(crate) use outbox_on_conflict;
mod changes;
mod postgres;
mod presence;
mod rows;
mod sql;
mod sqlite;
mod store;
mod types;
mod words;

use std::sync::Arc;

pub use crate::domain::webauthn::StoredPasskey;

pub use postgres::PgStore;
pub use presence::{Presence, presence, without_password};
pub use sqlite::SqliteStore;
pub use store::*;
pub use types::*;

/// Opens the database named by `url` and applies its migrations: `sqlite:` or
/// `postgres:`/`postgresql:`; anything else is refused with a message naming the scheme.
pub async fn connect(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    let scheme = url.split_once(':').map(|(s, _)| s).unwrap_or("");
    match scheme {
        "sqlite" => Ok(Arc::new(SqliteStore::connect(url).await?)),
        "postgres" | "postgresql" => Ok(Arc::new(PgStore::connect(url).await?)),
        _ => Err(StoreError::Other(format!(
            "unknown database scheme {scheme:?} in SAYSO_DATABASE_URL: use sqlite://PATH or postgres://…"
        ))),
    }
}
