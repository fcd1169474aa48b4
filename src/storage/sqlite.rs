//! The SQLite store: the embedded default, one process writing one file.
//!
//! Ids are stored as lowercase hyphenated text (whose order is the UUID's byte order),
//! times as integer milliseconds since the epoch, JSON as text. Writes that read first run
//! in `BEGIN IMMEDIATE` transactions, so two writers never deadlock upgrading a read lock.

mod usage;

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::types::Json;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
use time::OffsetDateTime;
use uuid::Uuid;
use uuid::fmt::Hyphenated;

use super::rows::{
    self, ChannelsRow, DecisionColumns, MessageColumns, from_millis, millis, store_error,
    to_ms_precision,
};
use super::{
    Inbox, InboxChannels, InsertDecision, Inserted, KeysToRevoke, ListFilter, MessageResult,
    NewMessage, OutboxMessage, PushSubscription, Resolved, SignalSink, Store, StoreError, Usage,
};
use crate::domain::{Decision, DecisionEvent, NotificationState, Resolution, Status};

/// The columns `DecisionRow` reads, in a macro so queries stay `&'static str`.
macro_rules! decision_columns {
    () => {
        "id, inbox_id, spec, status, outcome, outcome_source, custom, remark, \
         created_at, expires_at, resolved_at, has_image"
    };
}

/// The columns `MessageRow` reads.
macro_rules! message_columns {
    () => {
        "id, decision_id, channel, purpose, payload, status, attempts, created_at, \
         next_attempt_at, give_up_at, last_error"
    };
}

/// A store on one SQLite file.
///
/// SQLite lets one writer in at a time and makes the others wait in its busy handler, which
/// sleeps in steps of milliseconds. Every write therefore goes through `writer`, a pool of one
/// connection, so writers queue in the process (in order, without sleeping) and SQLite never
/// sees two. Reads use `pool`; in WAL mode they never wait for the writer.
pub struct SqliteStore {
    pool: SqlitePool,
    writer: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if missing) the database at `url` — `sqlite://PATH`, or
    /// `sqlite::memory:` for a database that lives as long as the store — and migrates it.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Other(format!("database URL {url:?}: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        // One connection that never closes: the writer, and for a memory database (each
        // connection to which is its own database) the reader too.
        let single = || {
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .acquire_timeout(Duration::from_secs(10))
        };
        let writer = single()
            .connect_with(options.clone())
            .await
            .map_err(store_error)?;
        sqlx::migrate!("migrations/sqlite")
            .run(&writer)
            .await
            .map_err(rows::migrate_error)?;
        let pool = if in_memory {
            writer.clone()
        } else {
            SqlitePoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(options.read_only(true))
                .await
                .map_err(store_error)?
        };
        Ok(SqliteStore { pool, writer })
    }

    async fn begin_immediate(&self) -> Result<sqlx::Transaction<'static, Sqlite>, StoreError> {
        self.writer
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(store_error)
    }
}

impl SqliteStore {
    /// Why a decision was not inserted: the decision already made under its idempotency key
    /// (even when the quota is now used up, a repeat gets it back), else the quota.
    async fn not_inserted(
        &self,
        inbox_id: Uuid,
        idempotency: Option<(&str, &str)>,
        why: RowInsert,
    ) -> Result<Inserted, StoreError> {
        let existing = match idempotency {
            Some((key, _)) => sqlx::query_as::<_, ExistingRow>(concat!(
                "SELECT ",
                decision_columns!(),
                ", request_hash FROM decisions WHERE inbox_id = ? AND idempotency_key = ?"
            ))
            .bind(id(inbox_id))
            .bind(key)
            .fetch_optional(&self.writer)
            .await
            .map_err(store_error)?,
            None => None,
        };
        match (existing, why) {
            (Some(existing), _) => Ok(Inserted::Existing {
                decision: existing.decision.try_into()?,
                request_hash: existing.request_hash.unwrap_or_default(),
            }),
            (None, RowInsert::OverQuota) => Ok(Inserted::QuotaExceeded),
            (None, _) => Err(StoreError::Other(
                "idempotency conflict without a row".into(),
            )),
        }
    }
}

fn id(u: Uuid) -> Hyphenated {
    u.hyphenated()
}

#[derive(sqlx::FromRow)]
struct InboxRow {
    id: Hyphenated,
    name: String,
    created_at: i64,
    #[sqlx(flatten)]
    channels: ChannelsRow,
}

impl From<InboxRow> for Inbox {
    fn from(r: InboxRow) -> Self {
        Inbox {
            id: r.id.into_uuid(),
            name: r.name,
            created_at: from_millis(r.created_at),
            channels: r.channels.into(),
        }
    }
}

#[derive(sqlx::FromRow)]
struct DecisionRow {
    id: Hyphenated,
    inbox_id: Hyphenated,
    spec: Json<Value>,
    status: String,
    outcome: Option<Json<Value>>,
    outcome_source: Option<String>,
    custom: bool,
    remark: Option<String>,
    created_at: i64,
    expires_at: i64,
    resolved_at: Option<i64>,
    has_image: bool,
}

impl TryFrom<DecisionRow> for Decision {
    type Error = StoreError;

    fn try_from(r: DecisionRow) -> Result<Self, StoreError> {
        Decision::try_from(DecisionColumns {
            id: r.id.into_uuid(),
            inbox_id: r.inbox_id.into_uuid(),
            spec: r.spec.0,
            status: r.status,
            outcome: r.outcome.map(|j| j.0),
            outcome_source: r.outcome_source,
            custom: r.custom,
            remark: r.remark,
            created_at: from_millis(r.created_at),
            expires_at: from_millis(r.expires_at),
            resolved_at: r.resolved_at.map(from_millis),
            has_image: r.has_image,
        })
    }
}

#[derive(sqlx::FromRow)]
struct NotifiedRow {
    #[sqlx(flatten)]
    decision: DecisionRow,
    notifications: Json<Vec<rows::NotificationJson>>,
}

#[derive(sqlx::FromRow)]
struct ExistingRow {
    #[sqlx(flatten)]
    decision: DecisionRow,
    request_hash: Option<String>,
}

#[derive(sqlx::FromRow)]
struct ExpiredRow {
    id: Hyphenated,
    expires_at: i64,
    outcome: Option<Json<Value>>,
}

#[derive(sqlx::FromRow)]
struct EventRow {
    at: i64,
    kind: String,
    detail: Json<Value>,
}

#[derive(sqlx::FromRow)]
struct NotificationRow {
    channel: String,
    status: String,
    detail: Option<String>,
}

#[derive(sqlx::FromRow)]
struct MessageRow {
    id: Hyphenated,
    decision_id: Hyphenated,
    channel: String,
    purpose: String,
    payload: Json<Value>,
    status: String,
    attempts: i64,
    created_at: i64,
    next_attempt_at: i64,
    give_up_at: i64,
    last_error: Option<String>,
}

impl TryFrom<MessageRow> for OutboxMessage {
    type Error = StoreError;

    fn try_from(r: MessageRow) -> Result<Self, StoreError> {
        OutboxMessage::try_from(MessageColumns {
            id: r.id.into_uuid(),
            decision_id: r.decision_id.into_uuid(),
            channel: r.channel,
            purpose: r.purpose,
            payload: r.payload.0,
            status: r.status,
            attempts: r.attempts,
            created_at: from_millis(r.created_at),
            give_up_at: from_millis(r.give_up_at),
            last_error: r.last_error,
        })
    }
}

#[derive(sqlx::FromRow)]
struct PushRow {
    endpoint: String,
    p256dh: String,
    auth: String,
}

/// Adds outbox messages for a decision; one with the same channel and purpose already there
/// stays as it is.
async fn insert_messages(
    conn: &mut SqliteConnection,
    decision: Uuid,
    messages: &[NewMessage],
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    for m in messages {
        sqlx::query(
            "INSERT INTO outbox (id, decision_id, channel, purpose, payload, created_at, \
             next_attempt_at, give_up_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (decision_id, channel, purpose) DO NOTHING",
        )
        .bind(id(Uuid::now_v7()))
        .bind(id(decision))
        .bind(&m.channel)
        .bind(&m.purpose)
        .bind(Json(&m.payload))
        .bind(millis(now))
        .bind(millis(m.not_before))
        .bind(millis(m.give_up_at))
        .execute(&mut *conn)
        .await
        .map_err(store_error)?;
    }
    Ok(())
}

async fn insert_event(
    conn: &mut SqliteConnection,
    decision: Uuid,
    at: OffsetDateTime,
    kind: &str,
    detail: &Value,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO decision_events (decision_id, at, kind, detail) VALUES (?, ?, ?, ?)")
        .bind(id(decision))
        .bind(millis(at))
        .bind(kind)
        .bind(Json(detail))
        .execute(conn)
        .await
        .map_err(store_error)?;
    Ok(())
}

/// What the INSERT of a new decision did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowInsert {
    New,
    /// Nothing: its idempotency key is taken in the inbox.
    KeyTaken,
    /// Refused by the daily quota (which a repeated idempotency key may also meet first).
    OverQuota,
}

/// The message of the quota trigger's `RAISE` (migrations/sqlite/0004).
const QUOTA_EXCEEDED: &str = "sayso: daily quota exceeded";

/// Inserts the decision row; its triggers check the quota, count the create and keep its
/// `created` event.
async fn insert_row(
    conn: &mut SqliteConnection,
    decision: &Decision,
    spec_json: &Value,
    idempotency: Option<(&str, &str)>,
) -> Result<RowInsert, StoreError> {
    let done = sqlx::query(
        "INSERT INTO decisions (id, inbox_id, kind, question, project, spec, \
         default_outcome, status, custom, created_at, expires_at, idempotency_key, \
         request_hash, has_image) \
         VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?) \
         ON CONFLICT (inbox_id, idempotency_key) WHERE idempotency_key IS NOT NULL \
         DO NOTHING",
    )
    .bind(id(decision.id))
    .bind(id(decision.inbox_id))
    .bind(decision.kind().as_str())
    .bind(&decision.spec.question)
    .bind(&decision.spec.project)
    .bind(Json(spec_json))
    .bind(decision.spec.default_outcome.as_ref().map(Json))
    .bind(millis(decision.created_at))
    .bind(millis(decision.expires_at))
    .bind(idempotency.map(|(key, _)| key))
    .bind(idempotency.map(|(_, hash)| hash))
    .bind(decision.has_image)
    .execute(conn)
    .await;
    match done {
        Ok(r) if r.rows_affected() == 0 => Ok(RowInsert::KeyTaken),
        Ok(_) => Ok(RowInsert::New),
        Err(sqlx::Error::Database(db)) if db.message() == QUOTA_EXCEEDED => {
            Ok(RowInsert::OverQuota)
        }
        Err(e) => Err(store_error(e)),
    }
}

async fn decision_by_id(
    conn: &mut SqliteConnection,
    decision: Uuid,
) -> Result<Option<Decision>, StoreError> {
    sqlx::query_as::<_, DecisionRow>(concat!(
        "SELECT ",
        decision_columns!(),
        " FROM decisions WHERE id = ?"
    ))
    .bind(id(decision))
    .fetch_optional(conn)
    .await
    .map_err(store_error)?
    .map(Decision::try_from)
    .transpose()
}

/// The current state of a decision a conditional update did not change.
async fn lost(conn: &mut SqliteConnection, decision: Uuid) -> Result<Resolved, StoreError> {
    match decision_by_id(conn, decision).await? {
        Some(d) => Ok(Resolved::Lost(d)),
        None => Err(StoreError::NotFound),
    }
}

fn check_resolution(r: &Resolution) -> Result<(), StoreError> {
    match r.status {
        Status::Answered | Status::Declined | Status::Cancelled => Ok(()),
        other => Err(StoreError::Other(format!(
            "a resolution cannot make a decision {}",
            other.as_str()
        ))),
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn setting_or_init(&self, name: &str, candidate: &str) -> Result<String, StoreError> {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(candidate)
        .execute(&self.writer)
        .await
        .map_err(store_error)?;
        sqlx::query_scalar("SELECT value FROM settings WHERE name = ?")
            .bind(name)
            .fetch_one(&self.writer)
            .await
            .map_err(store_error)
    }

    async fn create_inbox(
        &self,
        name: &str,
        email: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<Inbox, StoreError> {
        let inbox = Inbox {
            id: Uuid::now_v7(),
            name: name.to_owned(),
            created_at: to_ms_precision(now),
            channels: InboxChannels {
                email: email.map(str::to_owned),
                ..InboxChannels::default()
            },
        };
        sqlx::query("INSERT INTO inboxes (id, name, email, created_at) VALUES (?, ?, ?, ?)")
            .bind(id(inbox.id))
            .bind(name)
            .bind(email)
            .bind(millis(inbox.created_at))
            .execute(&self.writer)
            .await
            .map_err(|e| match store_error(e) {
                StoreError::Conflict(_) => {
                    StoreError::Conflict(format!("an inbox named {name:?} already exists"))
                }
                other => other,
            })?;
        Ok(inbox)
    }

    async fn inbox_by_name(&self, name: &str) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM inboxes i WHERE i.name = ?"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await
        .map(|r| r.map(Inbox::from))
        .map_err(store_error)
    }

    async fn inbox_by_id(&self, inbox: Uuid) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM inboxes i WHERE i.id = ?"
        ))
        .bind(id(inbox))
        .fetch_optional(&self.pool)
        .await
        .map(|r| r.map(Inbox::from))
        .map_err(store_error)
    }

    async fn count_inboxes(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT COUNT(*) FROM inboxes")
            .fetch_one(&self.pool)
            .await
            .map_err(store_error)
    }

    async fn create_api_key(
        &self,
        inbox_id: Uuid,
        key_hash: &str,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO api_keys (id, inbox_id, key_hash, created_at) VALUES (?, ?, ?, ?)",
        )
        .bind(id(Uuid::now_v7()))
        .bind(id(inbox_id))
        .bind(key_hash)
        .bind(millis(now))
        .execute(&self.writer)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn inbox_for_key(&self, key_hash: &str) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM api_keys k JOIN inboxes i ON i.id = k.inbox_id \
                 WHERE k.key_hash = ? AND k.revoked_at IS NULL"
        ))
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await
        .map(|r| r.map(Inbox::from))
        .map_err(store_error)
    }

    async fn revoke_api_keys(
        &self,
        which: KeysToRevoke<'_>,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        let query = match which {
            KeysToRevoke::Hash(hash) => sqlx::query(
                "UPDATE api_keys SET revoked_at = ? WHERE key_hash = ? AND revoked_at IS NULL",
            )
            .bind(millis(now))
            .bind(hash.to_owned()),
            KeysToRevoke::AllOf(inbox) => sqlx::query(
                "UPDATE api_keys SET revoked_at = ? WHERE inbox_id = ? AND revoked_at IS NULL",
            )
            .bind(millis(now))
            .bind(id(inbox).to_string()),
        };
        query
            .execute(&self.writer)
            .await
            .map(|r| r.rows_affected())
            .map_err(store_error)
    }

    async fn insert_decision(&self, row: InsertDecision<'_>) -> Result<Inserted, StoreError> {
        let spec = rows::stored_spec(&row.new.spec);
        let decision = Decision {
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
            spec,
        };
        let spec_json = rows::spec_json(&decision.spec)?;
        let idempotency = row.idempotency.map(|i| (i.key, i.request_hash));

        // The quota check, the usage count and the `created` event ride on the INSERT
        // (migrations/sqlite/0004): with nothing else to write, a create is one statement.
        if row.notifications.is_empty() && row.outbox.is_empty() && row.new.image.is_none() {
            let inserted = {
                let mut conn = self.writer.acquire().await.map_err(store_error)?;
                insert_row(&mut conn, &decision, &spec_json, idempotency).await?
            };
            // The writer is free again: `not_inserted` reads through it.
            return match inserted {
                RowInsert::New => Ok(Inserted::New(decision)),
                not_new => self.not_inserted(row.inbox_id, idempotency, not_new).await,
            };
        }

        let mut tx = self.begin_immediate().await?;
        match insert_row(&mut tx, &decision, &spec_json, idempotency).await? {
            RowInsert::New => {}
            not_new => {
                // Dropping the transaction rolls it back.
                drop(tx);
                return self.not_inserted(row.inbox_id, idempotency, not_new).await;
            }
        }
        if let Some(image) = &row.new.image {
            sqlx::query(
                "INSERT INTO decision_images (decision_id, content_type, bytes) VALUES (?, ?, ?)",
            )
            .bind(id(decision.id))
            .bind(image.content_type)
            .bind(&image.bytes)
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
        }
        for n in &row.notifications {
            sqlx::query(
                "INSERT INTO notifications (decision_id, channel, status, detail, updated_at) \
                 VALUES (?, ?, ?, ?, ?)",
            )
            .bind(id(decision.id))
            .bind(&n.channel)
            .bind(&n.status)
            .bind(&n.detail)
            .bind(millis(decision.created_at))
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
        }
        insert_messages(&mut tx, decision.id, &row.outbox, decision.created_at).await?;
        tx.commit().await.map_err(store_error)?;
        Ok(Inserted::New(decision))
    }

    async fn decision(
        &self,
        inbox_id: Option<Uuid>,
        decision: Uuid,
    ) -> Result<Option<Decision>, StoreError> {
        let found = match inbox_id {
            Some(inbox) => sqlx::query_as::<_, DecisionRow>(concat!(
                "SELECT ",
                decision_columns!(),
                " FROM decisions WHERE id = ? AND inbox_id = ?"
            ))
            .bind(id(decision))
            .bind(id(inbox))
            .fetch_optional(&self.pool)
            .await
            .map_err(store_error)?,
            None => sqlx::query_as::<_, DecisionRow>(concat!(
                "SELECT ",
                decision_columns!(),
                " FROM decisions WHERE id = ?"
            ))
            .bind(id(decision))
            .fetch_optional(&self.pool)
            .await
            .map_err(store_error)?,
        };
        found.map(Decision::try_from).transpose()
    }

    async fn resolutions_since(
        &self,
        inbox_id: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Uuid)>, StoreError> {
        usage::resolutions_since(&self.pool, inbox_id, after, limit).await
    }

    async fn usage(&self, inbox_id: Uuid, today: time::Date) -> Result<Usage, StoreError> {
        usage::usage(&self.pool, inbox_id, today).await
    }

    async fn set_daily_quota(&self, inbox_id: Uuid, quota: Option<i64>) -> Result<(), StoreError> {
        usage::set_daily_quota(&self.writer, inbox_id, quota).await
    }

    async fn projects(&self, inbox_id: Uuid) -> Result<Vec<String>, StoreError> {
        sqlx::query_scalar(
            "SELECT DISTINCT project FROM decisions \
             WHERE inbox_id = ? AND project IS NOT NULL ORDER BY project LIMIT 100",
        )
        .bind(id(inbox_id))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)
    }

    async fn list_decisions(
        &self,
        inbox_id: Uuid,
        filter: &ListFilter,
    ) -> Result<Vec<Decision>, StoreError> {
        let mut q = QueryBuilder::<Sqlite>::new(concat!(
            "SELECT ",
            decision_columns!(),
            " FROM decisions WHERE inbox_id = "
        ));
        q.push_bind(id(inbox_id));
        if let Some(status) = filter.status {
            q.push(" AND status = ").push_bind(status.as_str());
        }
        if let Some(kind) = filter.kind {
            q.push(" AND kind = ").push_bind(kind.as_str());
        }
        if let Some(project) = &filter.project {
            q.push(" AND project = ").push_bind(project.clone());
        }
        if let Some(before) = filter.before {
            q.push(" AND id < ").push_bind(id(before));
        }
        q.push(" ORDER BY id DESC LIMIT ")
            .push_bind(i64::from(filter.limit));
        q.build_query_as::<DecisionRow>()
            .fetch_all(&self.pool)
            .await
            .map_err(store_error)?
            .into_iter()
            .map(Decision::try_from)
            .collect()
    }

    async fn resolve(
        &self,
        decision: Uuid,
        resolution: &Resolution,
        now: OffsetDateTime,
    ) -> Result<Resolved, StoreError> {
        check_resolution(resolution)?;
        let now = to_ms_precision(now);
        let mut tx = self.begin_immediate().await?;
        let won = sqlx::query_as::<_, DecisionRow>(concat!(
            "UPDATE decisions SET status = ?, outcome = ?, outcome_source = ?, custom = ?, \
             remark = ?, resolved_at = ? \
             WHERE id = ? AND status = 'pending' AND expires_at > ? RETURNING ",
            decision_columns!()
        ))
        .bind(resolution.status.as_str())
        .bind(resolution.outcome.as_ref().map(Json))
        .bind(resolution.outcome_source.map(|s| s.as_str()))
        .bind(resolution.custom)
        .bind(&resolution.remark)
        .bind(millis(now))
        .bind(id(decision))
        .bind(millis(now))
        .fetch_optional(&mut *tx)
        .await
        .map_err(store_error)?;
        let Some(won) = won else {
            return lost(&mut tx, decision).await;
        };
        let detail = rows::resolution_detail(resolution);
        insert_event(&mut tx, decision, now, resolution.event_kind(), &detail).await?;
        insert_messages(&mut tx, decision, &[rows::resolved_fan_out(now)], now).await?;
        tx.commit().await.map_err(store_error)?;
        Ok(Resolved::Won(won.try_into()?))
    }

    async fn expire(&self, decision: Uuid, now: OffsetDateTime) -> Result<Resolved, StoreError> {
        let mut tx = self.begin_immediate().await?;
        let won = sqlx::query_as::<_, DecisionRow>(concat!(
            "UPDATE decisions SET status = 'expired', outcome = default_outcome, \
             outcome_source = CASE WHEN default_outcome IS NULL THEN NULL ELSE 'default' END, \
             resolved_at = expires_at \
             WHERE id = ? AND status = 'pending' AND expires_at <= ? RETURNING ",
            decision_columns!()
        ))
        .bind(id(decision))
        .bind(millis(now))
        .fetch_optional(&mut *tx)
        .await
        .map_err(store_error)?;
        let Some(won) = won else {
            return lost(&mut tx, decision).await;
        };
        let won = Decision::try_from(won)?;
        let detail = rows::expiry_detail(won.outcome.as_ref());
        insert_event(&mut tx, decision, won.expires_at, "expired", &detail).await?;
        insert_messages(&mut tx, decision, &[rows::resolved_fan_out(now)], now).await?;
        tx.commit().await.map_err(store_error)?;
        Ok(Resolved::Won(won))
    }

    async fn expire_due(&self, now: OffsetDateTime, limit: u32) -> Result<Vec<Uuid>, StoreError> {
        let mut tx = self.begin_immediate().await?;
        let mut expired = sqlx::query_as::<_, ExpiredRow>(
            "UPDATE decisions SET status = 'expired', outcome = default_outcome, \
             outcome_source = CASE WHEN default_outcome IS NULL THEN NULL ELSE 'default' END, \
             resolved_at = expires_at \
             WHERE id IN (SELECT id FROM decisions WHERE status = 'pending' AND expires_at <= ? \
                          ORDER BY expires_at LIMIT ?) \
             RETURNING id, expires_at, outcome",
        )
        .bind(millis(now))
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await
        .map_err(store_error)?;
        expired.sort_by_key(|r| (r.expires_at, r.id));
        let fan_out = [rows::resolved_fan_out(now)];
        for r in &expired {
            let detail = rows::expiry_detail(r.outcome.as_ref().map(|j| &j.0));
            insert_event(
                &mut tx,
                r.id.into_uuid(),
                from_millis(r.expires_at),
                "expired",
                &detail,
            )
            .await?;
            insert_messages(&mut tx, r.id.into_uuid(), &fan_out, now).await?;
        }
        tx.commit().await.map_err(store_error)?;
        Ok(expired.into_iter().map(|r| r.id.into_uuid()).collect())
    }

    async fn record_event(
        &self,
        decision: Uuid,
        kind: &str,
        detail: &Value,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut conn = self.writer.acquire().await.map_err(store_error)?;
        insert_event(&mut conn, decision, now, kind, detail).await
    }

    async fn events(&self, decision: Uuid) -> Result<Vec<DecisionEvent>, StoreError> {
        let rows = sqlx::query_as::<_, EventRow>(
            "SELECT at, kind, detail FROM decision_events WHERE decision_id = ? ORDER BY at, id",
        )
        .bind(id(decision))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|r| DecisionEvent {
                at: from_millis(r.at),
                kind: r.kind,
                detail: r.detail.0,
            })
            .collect())
    }

    async fn notifications(&self, decision: Uuid) -> Result<Vec<NotificationState>, StoreError> {
        let rows = sqlx::query_as::<_, NotificationRow>(
            "SELECT channel, status, detail FROM notifications WHERE decision_id = ? \
             ORDER BY channel",
        )
        .bind(id(decision))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|r| NotificationState {
                channel: r.channel,
                status: r.status,
                detail: r.detail,
            })
            .collect())
    }

    async fn decision_for_key(
        &self,
        key_hash: &str,
        decision: Uuid,
    ) -> Result<Option<(Decision, Vec<NotificationState>)>, StoreError> {
        let found = sqlx::query_as::<_, NotifiedRow>(concat!(
            "SELECT ",
            decision_columns!(),
            ", (SELECT json_group_array(json_object('channel', channel, 'status', status, \
             'detail', detail)) FROM (SELECT channel, status, detail FROM notifications \
             WHERE decision_id = decisions.id ORDER BY channel)) AS notifications \
             FROM decisions WHERE id = ? AND inbox_id = \
             (SELECT inbox_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL)"
        ))
        .bind(id(decision))
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?;
        let Some(row) = found else { return Ok(None) };
        let notifications = row.notifications.0.into_iter().map(Into::into).collect();
        Ok(Some((row.decision.try_into()?, notifications)))
    }

    async fn image(&self, decision: Uuid) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        sqlx::query_as::<_, (String, Vec<u8>)>(
            "SELECT content_type, bytes FROM decision_images WHERE decision_id = ?",
        )
        .bind(id(decision))
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)
    }

    async fn inbox_channels(&self, inbox_id: Uuid) -> Result<InboxChannels, StoreError> {
        let row = sqlx::query_as::<_, ChannelsRow>(
            "SELECT email, ntfy_url, ntfy_token, webhook_secret FROM inboxes WHERE id = ?",
        )
        .bind(id(inbox_id))
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?
        .ok_or(StoreError::NotFound)?;
        Ok(row.into())
    }

    async fn set_inbox_channels(
        &self,
        inbox_id: Uuid,
        channels: &InboxChannels,
    ) -> Result<(), StoreError> {
        let updated = sqlx::query(
            "UPDATE inboxes SET email = ?, ntfy_url = ?, ntfy_token = ?, webhook_secret = ? \
             WHERE id = ?",
        )
        .bind(&channels.email)
        .bind(&channels.ntfy_url)
        .bind(&channels.ntfy_token)
        .bind(&channels.webhook_secret)
        .bind(id(inbox_id))
        .execute(&self.writer)
        .await
        .map_err(store_error)?
        .rows_affected();
        if updated == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn add_push_subscription(
        &self,
        inbox_id: Uuid,
        sub: &PushSubscription,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO push_subscriptions (endpoint, inbox_id, p256dh, auth, created_at) \
             VALUES (?, ?, ?, ?, ?) \
             ON CONFLICT (endpoint) DO UPDATE SET inbox_id = excluded.inbox_id, \
             p256dh = excluded.p256dh, auth = excluded.auth, created_at = excluded.created_at",
        )
        .bind(&sub.endpoint)
        .bind(id(inbox_id))
        .bind(&sub.p256dh)
        .bind(&sub.auth)
        .bind(millis(now))
        .execute(&self.writer)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn push_subscriptions(
        &self,
        inbox_id: Uuid,
    ) -> Result<Vec<PushSubscription>, StoreError> {
        let rows = sqlx::query_as::<_, PushRow>(
            "SELECT endpoint, p256dh, auth FROM push_subscriptions WHERE inbox_id = ? \
             ORDER BY created_at, endpoint",
        )
        .bind(id(inbox_id))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|r| PushSubscription {
                endpoint: r.endpoint,
                p256dh: r.p256dh,
                auth: r.auth,
            })
            .collect())
    }

    async fn remove_push_subscription(&self, endpoint: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM push_subscriptions WHERE endpoint = ?")
            .bind(endpoint)
            .execute(&self.writer)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn enqueue(
        &self,
        decision_id: Uuid,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_immediate().await?;
        insert_messages(&mut tx, decision_id, messages, now).await?;
        tx.commit().await.map_err(store_error)
    }

    async fn claim_messages(
        &self,
        now: OffsetDateTime,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<OutboxMessage>, StoreError> {
        let mut tx = self.begin_immediate().await?;
        let mut claimed = sqlx::query_as::<_, MessageRow>(concat!(
            "UPDATE outbox SET claimed_until = ?, attempts = attempts + 1 \
             WHERE id IN (SELECT id FROM outbox WHERE status = 'pending' \
                            AND next_attempt_at <= ? \
                            AND (claimed_until IS NULL OR claimed_until <= ?) \
                          ORDER BY next_attempt_at LIMIT ?) \
             RETURNING ",
            message_columns!()
        ))
        .bind(millis(rows::lease_end(now, lease)))
        .bind(millis(now))
        .bind(millis(now))
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await
        .map_err(store_error)?;
        tx.commit().await.map_err(store_error)?;
        claimed.sort_by_key(|r| (r.next_attempt_at, r.id));
        claimed.into_iter().map(OutboxMessage::try_from).collect()
    }

    async fn finish_message(
        &self,
        message: &OutboxMessage,
        result: &MessageResult,
        follow_ups: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let (next_attempt_at, sent_at) = rows::finish_times(result, now);
        let mut tx = self.begin_immediate().await?;
        // Only a message its claim left pending: a late duplicate leaves a final state alone.
        let updated = sqlx::query(
            "UPDATE outbox SET status = ?, next_attempt_at = COALESCE(?, next_attempt_at), \
             claimed_until = NULL, sent_at = COALESCE(?, sent_at), last_error = ? \
             WHERE id = ? AND status = 'pending'",
        )
        .bind(result.status.as_str())
        .bind(next_attempt_at.map(millis))
        .bind(sent_at.map(millis))
        .bind(&result.detail)
        .bind(id(message.id))
        .execute(&mut *tx)
        .await
        .map_err(store_error)?
        .rows_affected();
        if updated == 0 {
            return Ok(());
        }
        if message.channel != rows::FAN_OUT {
            sqlx::query(
                "INSERT INTO notifications (decision_id, channel, status, detail, updated_at) \
                 VALUES (?, ?, ?, ?, ?) \
                 ON CONFLICT (decision_id, channel) DO UPDATE SET status = excluded.status, \
                 detail = excluded.detail, updated_at = excluded.updated_at",
            )
            .bind(id(message.decision_id))
            .bind(&message.channel)
            .bind(result.status.as_str())
            .bind(&result.detail)
            .bind(millis(now))
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
        }
        let detail = rows::notified_detail(message, result);
        insert_event(&mut tx, message.decision_id, now, "notified", &detail).await?;
        insert_messages(&mut tx, message.decision_id, follow_ups, now).await?;
        tx.commit().await.map_err(store_error)
    }

    async fn messages(&self, decision_id: Uuid) -> Result<Vec<OutboxMessage>, StoreError> {
        sqlx::query_as::<_, MessageRow>(concat!(
            "SELECT ",
            message_columns!(),
            " FROM outbox WHERE decision_id = ? ORDER BY created_at, id"
        ))
        .bind(id(decision_id))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?
        .into_iter()
        .map(OutboxMessage::try_from)
        .collect()
    }

    fn listen(&self, _sink: SignalSink) -> Option<tokio::task::JoinHandle<()>> {
        None
    }
}
