//! What both stores share: turning stored columns into domain values, times to the
//! millisecond, and sqlx errors into `StoreError`.

use serde_json::{Map, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use super::StoreError;
use crate::domain::outbox::{
    Channel, MessageResult, MessageStatus, NewMessage, OutboxMessage, Purpose, Route,
};
use crate::domain::{
    AnswerChannel, AnsweredBy, CancelReason, Decision, DecisionSpec, OutcomeSource, Resolution,
    Status,
};
use crate::metrics::PoolState;

/// The columns of a decision, once each backend has decoded its own types. Its JSON columns
/// come as sqlx decodes them (`Value`) or as the text SQLite stores (`&str`, read without
/// sqlx), parsed once into the domain's types either way.
pub(super) struct DecisionColumns<J = Value> {
    pub id: Uuid,
    pub inbox_id: Uuid,
    pub spec: J,
    pub status: Status,
    pub outcome: Option<Value>,
    pub outcome_source: Option<OutcomeSource>,
    pub custom: bool,
    pub remark: Option<String>,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub resolved_at: Option<OffsetDateTime>,
    pub has_image: bool,
    pub answered_via: Option<String>,
    pub answered_device: Option<Uuid>,
    /// The JSON array of `AnswerRecord`s.
    pub answers: J,
    pub cancel_reason: Option<String>,
}

/// A stored JSON column, parsed into what it holds.
pub(super) trait StoredJson {
    fn parse<T: serde::de::DeserializeOwned>(self) -> serde_json::Result<T>;
}

impl StoredJson for Value {
    fn parse<T: serde::de::DeserializeOwned>(self) -> serde_json::Result<T> {
        serde_json::from_value(self)
    }
}

impl StoredJson for &str {
    fn parse<T: serde::de::DeserializeOwned>(self) -> serde_json::Result<T> {
        serde_json::from_str(self)
    }
}

impl<J: StoredJson> TryFrom<DecisionColumns<J>> for Decision {
    type Error = StoreError;

    fn try_from(c: DecisionColumns<J>) -> Result<Self, StoreError> {
        let spec: DecisionSpec = c
            .spec
            .parse()
            .map_err(|e| StoreError::Other(format!("decision {}: stored spec: {e}", c.id)))?;
        let answered_by = match c.answered_via.as_deref() {
            None => None,
            Some(via) => Some(AnsweredBy::new(
                AnswerChannel::parse(via).ok_or_else(|| {
                    StoreError::Other(format!("decision {}: stored answered_via {via:?}", c.id))
                })?,
                c.answered_device,
            )),
        };
        let answers = c
            .answers
            .parse()
            .map_err(|e| StoreError::Other(format!("decision {}: stored answers: {e}", c.id)))?;
        let cancel_reason = match c.cancel_reason.as_deref() {
            None => None,
            Some(r) => Some(CancelReason::parse(r).ok_or_else(|| {
                StoreError::Other(format!("decision {}: stored cancel_reason {r:?}", c.id))
            })?),
        };
        Ok(Decision {
            answers,
            id: c.id,
            inbox_id: c.inbox_id,
            spec,
            status: c.status,
            outcome: c.outcome,
            outcome_source: c.outcome_source,
            custom: c.custom,
            remark: c.remark,
            created_at: c.created_at,
            expires_at: c.expires_at,
            resolved_at: c.resolved_at,
            has_image: c.has_image,
            answered_by,
            cancel_reason,
        })
    }
}

/// The spec as it is stored: a `default_outcome` of JSON `null` is no default at all (it
/// would read back as `None` anyway).
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

/// The columns of an outbox message, once each backend has decoded its own types.
pub(super) struct MessageColumns {
    pub id: Uuid,
    pub decision_id: Uuid,
    pub route: Route,
    pub purpose: Purpose,
    pub payload: Value,
    pub status: MessageStatus,
    pub attempts: i64,
    pub created_at: OffsetDateTime,
    pub give_up_at: OffsetDateTime,
    pub last_error: Option<String>,
    /// The `person` column: a hyphenated id, or '' for none.
    pub person: String,
}

impl TryFrom<MessageColumns> for OutboxMessage {
    type Error = StoreError;

    fn try_from(c: MessageColumns) -> Result<Self, StoreError> {
        let attempts = u32::try_from(c.attempts)
            .map_err(|_| StoreError::Other(format!("message {}: attempts {}", c.id, c.attempts)))?;
        Ok(OutboxMessage {
            id: c.id,
            decision_id: c.decision_id,
            route: c.route,
            purpose: c.purpose,
            payload: c.payload,
            status: c.status,
            attempts,
            created_at: c.created_at,
            give_up_at: c.give_up_at,
            last_error: c.last_error,
            person: person_of_column(&c.person)
                .map_err(|e| StoreError::Other(format!("message {}: person: {e}", c.id)))?,
        })
    }
}

/// An outbox message's `person` column: the person's hyphenated id, or '' for none.
pub(super) fn person_column(person: Option<Uuid>) -> String {
    person
        .map(|p| p.hyphenated().to_string())
        .unwrap_or_default()
}

fn person_of_column(text: &str) -> Result<Option<Uuid>, uuid::Error> {
    if text.is_empty() {
        Ok(None)
    } else {
        Uuid::parse_str(text).map(Some)
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

/// A notification state as the stores aggregate it into JSON next to its decision.
#[derive(Debug, serde::Deserialize)]
pub(super) struct NotificationJson {
    channel: Channel,
    status: MessageStatus,
    detail: Option<String>,
}

impl From<NotificationJson> for crate::domain::NotificationState {
    fn from(n: NotificationJson) -> Self {
        crate::domain::NotificationState {
            channel: n.channel,
            status: n.status,
            detail: n.detail,
        }
    }
}

/// An inbox's channel settings as both stores keep them: four nullable text columns.
#[derive(Debug, sqlx::FromRow)]
pub(super) struct ChannelsRow {
    email: Option<String>,
    ntfy_url: Option<String>,
    ntfy_token: Option<String>,
    webhook_secret: Option<String>,
}

impl From<ChannelsRow> for super::InboxChannels {
    fn from(r: ChannelsRow) -> Self {
        super::InboxChannels {
            email: r.email,
            ntfy_url: r.ntfy_url,
            ntfy_token: r.ntfy_token,
            webhook_secret: r.webhook_secret,
            chats: Default::default(),
        }
    }
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

/// The columns of a person, once each backend has decoded its own types.
pub(super) struct PersonColumns {
    pub id: Uuid,
    pub inbox_id: Uuid,
    pub name: String,
    pub email: Option<String>,
    pub ntfy_url: Option<String>,
    pub ntfy_token: Option<String>,
    pub slack_user: Option<String>,
    pub matrix_user: Option<String>,
    pub telegram_chat: Option<String>,
    pub quiet_hours: Option<String>,
    /// The person's zone, with or without quiet hours (the column is named for the quiet
    /// hours, which were the first to have one).
    pub quiet_tz: Option<String>,
    pub lang: Option<String>,
    pub created_at: OffsetDateTime,
}

impl PersonColumns {
    /// The stored form of a person's quiet hours and zone: the window, and the zone.
    pub fn quiet_of(p: &crate::domain::people::Person) -> (Option<String>, Option<String>) {
        (p.quiet.as_ref().map(|q| q.window()), p.tz.clone())
    }
}

impl TryFrom<PersonColumns> for crate::domain::people::Person {
    type Error = StoreError;

    fn try_from(c: PersonColumns) -> Result<Self, StoreError> {
        let quiet = match &c.quiet_hours {
            None => None,
            Some(window) => Some(
                crate::domain::quiet::QuietHours::parse(window, c.quiet_tz.as_deref())
                    .map_err(|e| StoreError::Other(format!("person {}: {e}", c.name)))?,
            ),
        };
        Ok(crate::domain::people::Person {
            id: c.id,
            inbox_id: c.inbox_id,
            name: c.name,
            email: c.email,
            ntfy_url: c.ntfy_url,
            ntfy_token: c.ntfy_token,
            chats: crate::domain::people::ChatUsers {
                slack: c.slack_user,
                matrix: c.matrix_user,
                telegram: c.telegram_chat,
            },
            tz: c.quiet_tz,
            quiet,
            // A language no longer spoken falls back to the browser's, never an error.
            lang: c.lang.as_deref().and_then(crate::domain::lang::Lang::parse),
            created_at: c.created_at,
        })
    }
}
