//! What both stores share: the rows they read and each row's conversion into the domain's
//! types (one file per resource below `rows/`, the column kinds the two databases store
//! differently in `rows/columns.rs`), the details their writes store, times to the
//! millisecond, and sqlx errors into `StoreError`.

mod allowance;
mod columns;
mod decision;
mod inbox;
mod outbox;
mod people;

use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::StoreError;
use crate::domain::outbox::{
    MessageResult, MessageStatus, NewMessage, OutboxMessage, Purpose, Route,
};
use crate::domain::{Decision, DecisionSpec, Resolution, Status};
use crate::metrics::PoolState;

pub(super) use allowance::{AllowanceRow, PostRow, ReceiptRow, UseRow};
pub(super) use columns::{At, Id};
pub(super) use decision::{
    DecisionRow, EventRow, ExistingRow, ExpiredRow, NotificationRow, NotifiedRow, OfDecision,
};
pub(super) use inbox::{ChannelsRow, InboxRow, KeyedInboxRow};
pub(super) use outbox::{MessageRow, person_column};
pub(super) use people::{KeyRow, PasskeyRow, PersonRow, PushRow, person_name_taken};

/// The decision a create writes: pending, its times at the stores' millisecond precision.
pub(super) fn pending_decision(row: &super::InsertDecision<'_>) -> Decision {
    Decision {
        id: row.id,
        inbox_id: row.inbox_id,
        status: Status::Pending,
        outcome: None,
        outcome_source: None,
        custom: false,
        remark: None,
        created_at: to_ms_precision(row.created_at),
        expires_at: to_ms_precision(row.expires_at),
        resolved_at: None,
        has_image: row.new.image.is_some(),
        answered_by: None,
        answers: Vec::new(),
        cancel_reason: None,
        spec: stored_spec(&row.new.spec),
    }
}

/// The spec as it is stored: a `default_outcome` of JSON `null` is no default at all (it
/// would read back as `None` anyway).
pub(super) fn stored_spec(spec: &DecisionSpec) -> DecisionSpec {
    let mut spec = spec.clone();
    spec.default_outcome = spec.default_outcome.filter(|v| !v.is_null());
    spec
}

pub(super) fn spec_json(spec: &DecisionSpec) -> Result<Value, StoreError> {
    serde_json::to_value(spec).map_err(|e| StoreError::Other(format!("encoding spec: {e}")))
}

/// The spec as the text SQLite stores, written straight from the struct (no `Value` between).
pub(super) fn spec_text(spec: &DecisionSpec) -> Result<String, StoreError> {
    serde_json::to_string(spec).map_err(|e| StoreError::Other(format!("encoding spec: {e}")))
}

/// The event detail of a resolution: its own detail, plus what was decided.
pub(super) fn resolution_detail(r: &Resolution) -> Value {
    let mut detail = match &r.detail {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        other => Map::from_iter([("detail".to_owned(), other.clone())]),
    };
    let mut add = |key: &str, value: Value| {
        detail.entry(key.to_owned()).or_insert(value);
    };
    if let Some(outcome) = &r.outcome {
        add("outcome", outcome.clone());
    }
    if let Some(source) = r.outcome_source {
        add("outcome_source", Value::from(source.as_str()));
    }
    if r.custom {
        add("custom", Value::Bool(true));
    }
    if let Some(remark) = &r.remark {
        add("remark", Value::from(remark.as_str()));
    }
    if let Some(person) = r.answer.as_ref().and_then(|a| a.person.as_deref()) {
        add("person", Value::from(person));
    }
    if let Some(by) = &r.by {
        add("channel", Value::from(by.channel.as_str()));
        if let Some(device) = by.device_id {
            add("device_id", Value::from(device.to_string()));
        }
    }
    Value::Object(detail)
}

/// The `voted` event of an answer that counts without resolving: who, which way, what.
pub(super) fn vote_detail(a: &crate::domain::people::AnswerRecord) -> Value {
    serde_json::json!({
        "person": a.person,
        "channel": a.channel.as_str(),
        "value": a.value,
        "remark": a.remark,
    })
}

/// An answer as the `answers` column stores it.
pub(super) fn answer_json(a: &crate::domain::people::AnswerRecord) -> Result<Value, StoreError> {
    serde_json::to_value(a).map_err(|e| StoreError::Other(format!("encoding an answer: {e}")))
}

/// The event detail of an expiry.
pub(super) fn expiry_detail(outcome: Option<&Value>) -> Value {
    match outcome {
        Some(outcome) => serde_json::json!({ "outcome": outcome, "outcome_source": "default" }),
        None => Value::Object(Map::new()),
    }
}

/// How long a finished notice (an outbox message about no decision) is kept: swept when the
/// next notices are written.
pub(super) const NOTICE_KEPT: time::Duration = time::Duration::days(30);

/// How long an inbound chat request is remembered as taken (`Store::first_seen`): longer than
/// any platform retries or signs a request for.
pub(super) const SEEN_KEPT: time::Duration = time::Duration::days(1);

/// How long the `resolved` fan-out of a resolution is worth trying.
pub(super) const RESOLVED_GIVE_UP: time::Duration = time::Duration::hours(24);

/// The message a resolution (or expiry) at `now` leaves behind: withdraw the notifications,
/// call the webhook.
pub(super) fn resolved_fan_out(now: OffsetDateTime) -> NewMessage {
    NewMessage {
        route: Route::FanOut,
        purpose: Purpose::Resolved,
        payload: Value::Object(Map::new()),
        not_before: now,
        give_up_at: now + RESOLVED_GIVE_UP,
        person: None,
    }
}

/// When a lease taken at `now` runs out (far in the future for an absurd lease).
pub(super) fn lease_end(now: OffsetDateTime, lease: std::time::Duration) -> OffsetDateTime {
    time::Duration::try_from(lease)
        .ok()
        .and_then(|d| now.checked_add(d))
        .unwrap_or(time::PrimitiveDateTime::MAX.assume_utc())
}

/// The times a finished attempt sets: the next attempt (when it is to be retried, at once if
/// no time was given) and when it was sent.
pub(super) fn finish_times(
    result: &MessageResult,
    now: OffsetDateTime,
) -> (Option<OffsetDateTime>, Option<OffsetDateTime>) {
    match result.status {
        MessageStatus::Pending => (Some(result.retry_at.unwrap_or(now)), None),
        MessageStatus::Sent => (None, Some(now)),
        MessageStatus::Failed | MessageStatus::Skipped => (None, None),
    }
}

/// The detail of the `notified` event an attempt leaves.
pub(super) fn notified_detail(message: &OutboxMessage, result: &MessageResult) -> Value {
    serde_json::json!({
        "channel": message.route,
        "purpose": message.purpose,
        "attempt": message.attempts,
        "status": result.status.as_str(),
        "detail": result.detail,
    })
}

/// Times are kept to the millisecond, in UTC, so both backends give back the same value.
pub(super) fn to_ms_precision(t: OffsetDateTime) -> OffsetDateTime {
    from_millis(millis(t))
}

/// Milliseconds since the Unix epoch (SQLite's time columns).
pub(super) fn millis(t: OffsetDateTime) -> i64 {
    let ms = t.unix_timestamp_nanos().div_euclid(1_000_000);
    i64::try_from(ms).unwrap_or(if ms < 0 { i64::MIN } else { i64::MAX })
}

pub(super) fn from_millis(ms: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap_or(if ms < 0 {
        OffsetDateTime::UNIX_EPOCH
    } else {
        // Out of `time`'s range only for corrupt rows; clamp rather than fail a read.
        time::PrimitiveDateTime::MAX.assume_utc()
    })
}

/// Maps a sqlx error onto the terms the service decides on.
pub(super) fn store_error(e: sqlx::Error) -> StoreError {
    match e {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::WorkerCrashed => StoreError::Unavailable(e.to_string()),
        sqlx::Error::RowNotFound => StoreError::NotFound,
        sqlx::Error::Database(db) => {
            use sqlx::error::ErrorKind;
            match db.kind() {
                ErrorKind::UniqueViolation => StoreError::Conflict(db.message().to_owned()),
                // Every foreign key here points at an inbox or a decision that must exist.
                ErrorKind::ForeignKeyViolation => StoreError::NotFound,
                _ if is_unavailable(db.as_ref()) => StoreError::Unavailable(db.to_string()),
                _ => StoreError::Other(db.to_string()),
            }
        }
        sqlx::Error::Migrate(m) => match *m {
            sqlx::migrate::MigrateError::Execute(e)
            | sqlx::migrate::MigrateError::ExecuteMigration(e, _) => store_error(e),
            other => StoreError::Other(format!("migrations: {other}")),
        },
        other => StoreError::Other(other.to_string()),
    }
}

/// `store_error`, with a broken unique constraint told as `conflict` says (the one a caller
/// can break here, in the caller's words rather than the database's).
pub(super) fn store_error_or(e: sqlx::Error, conflict: impl FnOnce() -> String) -> StoreError {
    match store_error(e) {
        StoreError::Conflict(_) => StoreError::Conflict(conflict()),
        other => other,
    }
}

/// A write by id that changed no row: the row it names is not there.
pub(super) fn changed_any(rows_affected: u64) -> Result<(), StoreError> {
    match rows_affected {
        0 => Err(StoreError::NotFound),
        _ => Ok(()),
    }
}

pub(super) fn migrate_error(e: sqlx::migrate::MigrateError) -> StoreError {
    store_error(sqlx::Error::Migrate(Box::new(e)))
}

/// Database errors that mean "try again later" rather than "this request is wrong".
fn is_unavailable(db: &dyn sqlx::error::DatabaseError) -> bool {
    let code = db.code();
    let code = code.as_deref().unwrap_or("");
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        code.parse::<i32>().is_ok_and(sqlite_code_unavailable)
    } else {
        pg_code_unavailable(code)
    }
}

/// SQLite's busy and locked, once the busy timeout ran out (extended codes included).
fn sqlite_code_unavailable(code: i32) -> bool {
    matches!(code & 0xff, 5 | 6)
}

/// PostgreSQL's connection exceptions, shutdowns and connection limits.
fn pg_code_unavailable(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300")
}

/// Succeeds when the database behind `pool` answers a trivial query: `Store::ping`, the
/// same on both stores.
pub(super) async fn ping_pool<DB: sqlx::Database>(pool: &sqlx::Pool<DB>) -> Result<(), StoreError>
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
{
    sqlx::query::<DB>("SELECT 1")
        .execute(pool)
        .await
        .map_err(store_error)?;
    Ok(())
}

/// How a connection pool stands, for the metrics.
pub(super) fn pool_state<DB: sqlx::Database>(
    name: &'static str,
    pool: &sqlx::Pool<DB>,
) -> PoolState {
    let size = pool.size();
    let idle = u32::try_from(pool.num_idle()).unwrap_or(u32::MAX).min(size);
    PoolState {
        name,
        idle,
        in_use: size - idle,
        max: pool.options().get_max_connections(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_keep_milliseconds_only() {
        let t = time::macros::datetime!(2025-03-04 05:06:07.123_456_789 UTC);
        assert_eq!(
            to_ms_precision(t),
            time::macros::datetime!(2025-03-04 05:06:07.123 UTC)
        );
        let before_epoch = time::macros::datetime!(1969-12-31 23:59:59.999_9 UTC);
        assert_eq!(millis(before_epoch), -1);
        assert_eq!(from_millis(-1), to_ms_precision(before_epoch));
    }

    #[test]
    fn resolution_detail_keeps_its_own_facts_first() {
        let mut r = Resolution::cancel(Some("no longer needed".into()));
        r.remark = Some("later".into());
        let d = resolution_detail(&r);
        assert_eq!(d["reason"], "no longer needed");
        assert_eq!(d["remark"], "later");
        assert!(d.get("outcome").is_none());
    }

    #[test]
    fn busy_and_connection_codes_are_unavailable() {
        assert!(sqlite_code_unavailable(5));
        assert!(sqlite_code_unavailable(517));
        assert!(!sqlite_code_unavailable(19));
        assert!(pg_code_unavailable("08006"));
        assert!(pg_code_unavailable("57P01"));
        assert!(!pg_code_unavailable("23505"));
        assert!(!pg_code_unavailable(""));
    }
}
