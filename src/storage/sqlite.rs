//! The SQLite store: the embedded default, one process writing one file.
//!
//! Ids are stored as lowercase hyphenated text (whose order is the UUID's byte order),
//! times as integer milliseconds since the epoch, JSON as text. Writes that read first run
//! in `BEGIN IMMEDIATE` transactions, so two writers never deadlock upgrading a read lock.

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

use super::rows::{self, DecisionColumns, from_millis, millis, store_error, to_ms_precision};
use super::{Inbox, InsertDecision, Inserted, ListFilter, Resolved, SignalSink, Store, StoreError};
use crate::domain::{Decision, DecisionEvent, NotificationState, Resolution, Status};

/// The columns `DecisionRow` reads, in a macro so queries stay `&'static str`.
macro_rules! decision_columns {
    () => {
        "id, inbox_id, spec, status, outcome, outcome_source, custom, remark, \
         created_at, expires_at, resolved_at, has_image"
    };
}

/// A store on one SQLite file.
pub struct SqliteStore {
    pool: SqlitePool,
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
        let pool = if in_memory {
            // Each connection to a memory database is its own database unless the cache is
            // shared, and a shared cache fails fast on locks instead of waiting: keep one
            // connection, forever.
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
        } else {
            SqlitePoolOptions::new().max_connections(8)
        }
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .map_err(store_error)?;
        sqlx::migrate!("migrations/sqlite")
            .run(&pool)
            .await
            .map_err(rows::migrate_error)?;
        Ok(SqliteStore { pool })
    }

    async fn begin_immediate(&self) -> Result<sqlx::Transaction<'static, Sqlite>, StoreError> {
        self.pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(store_error)
    }
}

fn id(u: Uuid) -> Hyphenated {
    u.hyphenated()
}

#[derive(sqlx::FromRow)]
struct InboxRow {
    id: Hyphenated,
    name: String,
    email: Option<String>,
    created_at: i64,
}

impl From<InboxRow> for Inbox {
    fn from(r: InboxRow) -> Self {
        Inbox {
            id: r.id.into_uuid(),
            name: r.name,
            email: r.email,
            created_at: from_millis(r.created_at),
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
        .execute(&self.pool)
        .await
        .map_err(store_error)?;
        sqlx::query_scalar("SELECT value FROM settings WHERE name = ?")
            .bind(name)
            .fetch_one(&self.pool)
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
            email: email.map(str::to_owned),
            created_at: to_ms_precision(now),
        };
        sqlx::query("INSERT INTO inboxes (id, name, email, created_at) VALUES (?, ?, ?, ?)")
            .bind(id(inbox.id))
            .bind(name)
            .bind(email)
            .bind(millis(inbox.created_at))
            .execute(&self.pool)
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
        sqlx::query_as::<_, InboxRow>(
            "SELECT id, name, email, created_at FROM inboxes WHERE name = ?",
        )
        .bind(name)
        .fetch_optional(&self.pool)
        .await
        .map(|r| r.map(Inbox::from))
        .map_err(store_error)
    }

    async fn inbox_by_id(&self, inbox: Uuid) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(
            "SELECT id, name, email, created_at FROM inboxes WHERE id = ?",
        )
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
        .execute(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn inbox_for_key(&self, key_hash: &str) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(
            "SELECT i.id, i.name, i.email, i.created_at FROM api_keys k \
             JOIN inboxes i ON i.id = k.inbox_id \
             WHERE k.key_hash = ? AND k.revoked_at IS NULL",
        )
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await
        .map(|r| r.map(Inbox::from))
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
        let mut tx = self.begin_immediate().await?;
        let inserted = sqlx::query(
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
        .bind(Json(&spec_json))
        .bind(decision.spec.default_outcome.as_ref().map(Json))
        .bind(millis(decision.created_at))
        .bind(millis(decision.expires_at))
        .bind(row.idempotency.map(|i| i.key))
        .bind(row.idempotency.map(|i| i.request_hash))
        .bind(decision.has_image)
        .execute(&mut *tx)
        .await
        .map_err(store_error)?
        .rows_affected();

        if inserted == 0 {
            // Only the idempotency index is ignored on conflict, so there is a key.
            let key = row.idempotency.map(|i| i.key).unwrap_or_default();
            let existing = sqlx::query_as::<_, ExistingRow>(concat!(
                "SELECT ",
                decision_columns!(),
                ", request_hash FROM decisions WHERE inbox_id = ? AND idempotency_key = ?"
            ))
            .bind(id(row.inbox_id))
            .bind(key)
            .fetch_optional(&mut *tx)
            .await
            .map_err(store_error)?
            .ok_or_else(|| StoreError::Other("idempotency conflict without a row".into()))?;
            return Ok(Inserted::Existing {
                decision: existing.decision.try_into()?,
                request_hash: existing.request_hash.unwrap_or_default(),
            });
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
        insert_event(
            &mut tx,
            decision.id,
            decision.created_at,
            "created",
            &serde_json::json!({}),
        )
        .await?;
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
        let mut conn = self.pool.acquire().await.map_err(store_error)?;
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

    async fn image(&self, decision: Uuid) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        sqlx::query_as::<_, (String, Vec<u8>)>(
            "SELECT content_type, bytes FROM decision_images WHERE decision_id = ?",
        )
        .bind(id(decision))
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)
    }

    fn listen(&self, _sink: SignalSink) -> Option<tokio::task::JoinHandle<()>> {
        None
    }
}
