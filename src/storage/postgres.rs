//! The PostgreSQL store: for production, where several replicas share one database.
//!
//! Each write is one statement where it can be (data-modifying CTEs), so it is one round
//! trip and one transaction. Resolutions `NOTIFY` the channel `sayso_resolved` with the
//! decision's id, which `listen` turns into signals for the waiters of every replica.

mod channels;
mod listen;
mod outbox;
mod usage;

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::types::Json;
use sqlx::{Connection, Postgres, QueryBuilder};
use time::OffsetDateTime;
use uuid::Uuid;

use super::rows::{self, DecisionColumns, store_error, to_ms_precision};
use super::{
    CREATE_ACTIONS, Inbox, InboxChannels, InsertDecision, Inserted, KeysToRevoke, ListFilter,
    MessageResult, NewMessage, OutboxMessage, PushSubscription, Resolved, SignalSink, Store,
    StoreError, Usage,
};
use crate::domain::{Decision, DecisionEvent, NotificationState, Resolution, Status};
use outbox::{MessageArrays, insert_outbox, resolved_fan_out, sql_uuid_v7, unnest_messages};

/// The columns `DecisionRow` reads, in a macro so queries stay `&'static str`.
macro_rules! decision_columns {
    () => {
        "id, inbox_id, spec, status, outcome, outcome_source, custom, remark, \
         created_at, expires_at, resolved_at, has_image"
    };
}

/// The `SET` list that expires a pending decision: its default, if any, becomes the outcome,
/// and it is resolved at the moment its time ran out.
macro_rules! expire_set {
    () => {
        "status = 'expired', outcome = default_outcome, \
         outcome_source = CASE WHEN default_outcome IS NULL THEN NULL ELSE 'default' END, \
         resolved_at = expires_at"
    };
}

/// Takes, in a fixed order, the per-inbox lock under which resolution events get their ids,
/// for the inboxes of the rows of `upd`. Held to commit, it makes the ids of one inbox's
/// resolutions visible in increasing order, which `resolutions_since` readers rely on: a
/// bigserial alone can commit 11 before 10.
macro_rules! resolution_locks {
    () => {
        "lk AS (SELECT COUNT(*) AS n FROM ( \
           SELECT pg_advisory_xact_lock(1447, k) FROM ( \
             SELECT DISTINCT hashtext(inbox_id::text) AS k FROM upd ORDER BY k) s) l)"
    };
}

/// Inserts the `expired` events of the rows of `upd` (with the same detail as
/// `rows::expiry_detail`), under `resolution_locks!`.
macro_rules! expired_events {
    () => {
        concat!(
            resolution_locks!(),
            ", ev AS (INSERT INTO decision_events (decision_id, at, kind, detail) \
             SELECT id, expires_at, 'expired', \
             CASE WHEN outcome IS NULL THEN '{}'::jsonb \
             ELSE jsonb_build_object('outcome', outcome, 'outcome_source', 'default') END \
             FROM upd, lk)"
        )
    };
}

/// How long a request waits for a database connection before it is `Unavailable` (503).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// A store on a PostgreSQL database.
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to `url` (`postgres://…`) and migrates the database. An unreachable server
    /// is `Unavailable` within a few seconds, here and on every later call.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let options: PgConnectOptions = url.parse().map_err(store_error)?;
        // One connection of its own first, so an unreachable server is reported with its
        // cause (refused, unknown host, starting up) rather than as the pool's timeout.
        match tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&options)).await {
            Ok(Ok(conn)) => {
                let _ = conn.close().await;
            }
            Ok(Err(e)) => return Err(store_error(e)),
            Err(_) => {
                return Err(StoreError::Unavailable(format!(
                    "no answer from the database within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )));
            }
        }
        let pool = PgPoolOptions::new()
            .max_connections(10)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(store_error)?;
        sqlx::migrate!("migrations/postgres")
            .run(&pool)
            .await
            .map_err(rows::migrate_error)?;
        Ok(PgStore { pool })
    }

    /// The decision already holding the row's idempotency key, if any.
    async fn existing(&self, row: &InsertDecision<'_>) -> Result<Option<Inserted>, StoreError> {
        let Some(idempotency) = row.idempotency else {
            return Ok(None);
        };
        let Some(existing) = sqlx::query_as::<_, ExistingRow>(concat!(
            "SELECT ",
            decision_columns!(),
            ", request_hash FROM decisions WHERE inbox_id = $1 AND idempotency_key = $2"
        ))
        .bind(row.inbox_id)
        .bind(idempotency.key)
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?
        else {
            return Ok(None);
        };
        Ok(Some(Inserted::Existing {
            decision: existing.decision.try_into()?,
            request_hash: existing.request_hash.unwrap_or_default(),
        }))
    }

    async fn current(&self, id: Uuid) -> Result<Resolved, StoreError> {
        match self.decision(None, id).await? {
            Some(d) => Ok(Resolved::Lost(d)),
            None => Err(StoreError::NotFound),
        }
    }
}

/// What one run of the insert statement did.
struct InsertOutcome {
    inserted: bool,
    /// The inbox has a daily quota (so, when called with a charge, nothing was written).
    has_quota: bool,
}

/// One statement: the decision, and only if it was inserted (the idempotency key is new) its
/// image, `created` event, notification states and outbox messages. With `charge` (the day
/// and the usage row to count on) it writes nothing for an inbox that has a quota, and
/// counts the create otherwise; without, it inserts whatever the quota and counts nothing
/// (the caller has counted under the quota's lock).
async fn insert_statement<'e>(
    ex: impl sqlx::PgExecutor<'e>,
    decision: &Decision,
    spec_json: &Value,
    row: &InsertDecision<'_>,
    charge: Option<(time::Date, i32)>,
) -> Result<InsertOutcome, StoreError> {
    let channels: Vec<&str> = row
        .notifications
        .iter()
        .map(|n| n.channel.as_str())
        .collect();
    let statuses: Vec<&str> = row
        .notifications
        .iter()
        .map(|n| n.status.as_str())
        .collect();
    let details: Vec<Option<&str>> = row
        .notifications
        .iter()
        .map(|n| n.detail.as_deref())
        .collect();
    let outbox = MessageArrays::new(&row.outbox);
    let (inserted, has_quota): (i64, bool) = sqlx::query_as(concat!(
        "WITH q AS (SELECT daily_quota IS NOT NULL AS has_quota FROM inboxes WHERE id = $2), \
         d AS ( \
           INSERT INTO decisions (id, inbox_id, kind, question, project, spec, \
             default_outcome, status, custom, created_at, expires_at, idempotency_key, \
             request_hash, has_image) \
           SELECT $1, $2, $3, $4, $5, $6, $7, 'pending', false, $8, $9, $10, $11, $12 \
           WHERE NOT $24 OR NOT COALESCE((SELECT has_quota FROM q), false) \
           ON CONFLICT (inbox_id, idempotency_key) WHERE idempotency_key IS NOT NULL \
           DO NOTHING RETURNING id), \
         img AS ( \
           INSERT INTO decision_images (decision_id, content_type, bytes) \
           SELECT id, $13, $14 FROM d WHERE $14::bytea IS NOT NULL), \
         ev AS ( \
           INSERT INTO decision_events (decision_id, at, kind, detail) \
           SELECT id, $8, 'created', '{}'::jsonb FROM d), \
         n AS ( \
           INSERT INTO notifications (decision_id, channel, status, detail, updated_at) \
           SELECT d.id, x.channel, x.status, x.detail, $8 \
           FROM d, unnest($15::text[], $16::text[], $17::text[]) AS x(channel, status, detail)), \
         u AS ( \
           INSERT INTO usage_daily (inbox_id, day, shard, actions, creates) \
           SELECT $2, $25, $26, $27, 1 FROM d WHERE $24 \
           ON CONFLICT (inbox_id, day, shard) DO UPDATE \
           SET actions = usage_daily.actions + EXCLUDED.actions, \
               creates = usage_daily.creates + 1), \
         ob AS (",
        insert_outbox!(),
        "SELECT x.id, d.id, x.channel, x.purpose, x.payload, $8, x.not_before, \
             x.give_up_at FROM d, ",
        unnest_messages!("$18", "$19", "$20", "$21", "$22", "$23"),
        " ON CONFLICT (decision_id, channel, purpose) DO NOTHING) \
         SELECT (SELECT COUNT(*) FROM d), COALESCE((SELECT has_quota FROM q), false)"
    ))
    .bind(decision.id)
    .bind(decision.inbox_id)
    .bind(decision.kind().as_str())
    .bind(&decision.spec.question)
    .bind(&decision.spec.project)
    .bind(Json(spec_json))
    .bind(decision.spec.default_outcome.as_ref().map(Json))
    .bind(decision.created_at)
    .bind(decision.expires_at)
    .bind(row.idempotency.map(|i| i.key))
    .bind(row.idempotency.map(|i| i.request_hash))
    .bind(decision.has_image)
    .bind(row.new.image.as_ref().map(|i| i.content_type))
    .bind(row.new.image.as_ref().map(|i| i.bytes.as_slice()))
    .bind(channels)
    .bind(statuses)
    .bind(details)
    .bind(outbox.ids)
    .bind(outbox.channels)
    .bind(outbox.purposes)
    .bind(outbox.payloads)
    .bind(outbox.not_before)
    .bind(outbox.give_up_at)
    .bind(charge.is_some())
    .bind(charge.map(|(day, _)| day))
    .bind(charge.map(|(_, shard)| shard).unwrap_or(0))
    .bind(CREATE_ACTIONS)
    .fetch_one(ex)
    .await
    .map_err(store_error)?;
    Ok(InsertOutcome {
        inserted: inserted > 0,
        has_quota,
    })
}

#[derive(sqlx::FromRow)]
struct InboxRow {
    id: Uuid,
    name: String,
    created_at: OffsetDateTime,
    #[sqlx(flatten)]
    channels: rows::ChannelsRow,
}

impl From<InboxRow> for Inbox {
    fn from(r: InboxRow) -> Self {
        Inbox {
            id: r.id,
            name: r.name,
            created_at: r.created_at,
            channels: r.channels.into(),
        }
    }
}

#[derive(sqlx::FromRow)]
struct DecisionRow {
    id: Uuid,
    inbox_id: Uuid,
    spec: Json<Value>,
    status: String,
    outcome: Option<Json<Value>>,
    outcome_source: Option<String>,
    custom: bool,
    remark: Option<String>,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    resolved_at: Option<OffsetDateTime>,
    has_image: bool,
}

impl TryFrom<DecisionRow> for Decision {
    type Error = StoreError;

    fn try_from(r: DecisionRow) -> Result<Self, StoreError> {
        Decision::try_from(DecisionColumns {
            id: r.id,
            inbox_id: r.inbox_id,
            spec: r.spec.0,
            status: r.status,
            outcome: r.outcome.map(|j| j.0),
            outcome_source: r.outcome_source,
            custom: r.custom,
            remark: r.remark,
            created_at: r.created_at,
            expires_at: r.expires_at,
            resolved_at: r.resolved_at,
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
struct EventRow {
    at: OffsetDateTime,
    kind: String,
    detail: Json<Value>,
}

#[derive(sqlx::FromRow)]
struct NotifiedRow {
    #[sqlx(flatten)]
    decision: DecisionRow,
    notifications: Json<Vec<rows::NotificationJson>>,
}

#[derive(sqlx::FromRow)]
struct NotificationRow {
    channel: String,
    status: String,
    detail: Option<String>,
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
impl Store for PgStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn setting_or_init(&self, name: &str, candidate: &str) -> Result<String, StoreError> {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(candidate)
        .execute(&self.pool)
        .await
        .map_err(store_error)?;
        sqlx::query_scalar("SELECT value FROM settings WHERE name = $1")
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
            created_at: to_ms_precision(now),
            channels: InboxChannels {
                email: email.map(str::to_owned),
                ..InboxChannels::default()
            },
        };
        sqlx::query("INSERT INTO inboxes (id, name, email, created_at) VALUES ($1, $2, $3, $4)")
            .bind(inbox.id)
            .bind(name)
            .bind(email)
            .bind(inbox.created_at)
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
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM inboxes i WHERE i.name = $1"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await
        .map(|r| r.map(Inbox::from))
        .map_err(store_error)
    }

    async fn inbox_by_id(&self, id: Uuid) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM inboxes i WHERE i.id = $1"
        ))
        .bind(id)
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
            "INSERT INTO api_keys (id, inbox_id, key_hash, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(Uuid::now_v7())
        .bind(inbox_id)
        .bind(key_hash)
        .bind(to_ms_precision(now))
        .execute(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn revoke_api_keys(
        &self,
        which: KeysToRevoke<'_>,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        let query = match which {
            KeysToRevoke::Hash(hash) => sqlx::query(
                "UPDATE api_keys SET revoked_at = $1 WHERE key_hash = $2 AND revoked_at IS NULL",
            )
            .bind(to_ms_precision(now))
            .bind(hash.to_owned()),
            KeysToRevoke::AllOf(inbox) => sqlx::query(
                "UPDATE api_keys SET revoked_at = $1 WHERE inbox_id = $2 AND revoked_at IS NULL",
            )
            .bind(to_ms_precision(now))
            .bind(inbox),
        };
        query
            .execute(&self.pool)
            .await
            .map(|r| r.rows_affected())
            .map_err(store_error)
    }

    async fn inbox_for_key(&self, key_hash: &str) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM api_keys k JOIN inboxes i ON i.id = k.inbox_id \
                 WHERE k.key_hash = $1 AND k.revoked_at IS NULL"
        ))
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
        let day = decision.created_at.to_offset(time::UtcOffset::UTC).date();
        // An inbox without a quota counts on one of several rows, so its concurrent creates
        // do not queue on one row lock; one with a quota takes the exact path below.
        let shard = (decision.id.as_u128() & 7) as i32;
        let first =
            insert_statement(&self.pool, &decision, &spec_json, &row, Some((day, shard))).await?;
        if first.inserted {
            return Ok(Inserted::New(decision));
        }
        if first.has_quota {
            let mut tx = self.pool.begin().await.map_err(store_error)?;
            if !usage::charge_with_quota(&mut tx, row.inbox_id, day).await? {
                drop(tx);
                return match self.existing(&row).await? {
                    Some(existing) => Ok(existing),
                    None => Ok(Inserted::QuotaExceeded),
                };
            }
            let again = insert_statement(&mut *tx, &decision, &spec_json, &row, None).await?;
            if again.inserted {
                tx.commit().await.map_err(store_error)?;
                return Ok(Inserted::New(decision));
            }
            // A replay: dropping the transaction takes the charge back.
        }
        self.existing(&row)
            .await?
            .ok_or_else(|| StoreError::Other("idempotency conflict without a row".into()))
    }

    async fn decision(
        &self,
        inbox_id: Option<Uuid>,
        id: Uuid,
    ) -> Result<Option<Decision>, StoreError> {
        sqlx::query_as::<_, DecisionRow>(concat!(
            "SELECT ",
            decision_columns!(),
            " FROM decisions WHERE id = $1 AND ($2::uuid IS NULL OR inbox_id = $2)"
        ))
        .bind(id)
        .bind(inbox_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?
        .map(Decision::try_from)
        .transpose()
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
        usage::set_daily_quota(&self.pool, inbox_id, quota).await
    }

    async fn projects(&self, inbox_id: Uuid) -> Result<Vec<String>, StoreError> {
        sqlx::query_scalar(
            "SELECT DISTINCT project FROM decisions \
             WHERE inbox_id = $1 AND project IS NOT NULL ORDER BY project LIMIT 100",
        )
        .bind(inbox_id)
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)
    }

    async fn list_decisions(
        &self,
        inbox_id: Uuid,
        filter: &ListFilter,
    ) -> Result<Vec<Decision>, StoreError> {
        let mut q = QueryBuilder::<Postgres>::new(concat!(
            "SELECT ",
            decision_columns!(),
            " FROM decisions WHERE inbox_id = "
        ));
        q.push_bind(inbox_id);
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
            q.push(" AND id < ").push_bind(before);
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
        id: Uuid,
        resolution: &Resolution,
        now: OffsetDateTime,
    ) -> Result<Resolved, StoreError> {
        check_resolution(resolution)?;
        let now = to_ms_precision(now);
        let detail = rows::resolution_detail(resolution);
        // Under concurrent updates the row lock makes the loser re-check `status`, so exactly
        // one statement updates the row.
        let won = sqlx::query_as::<_, DecisionRow>(concat!(
            "WITH upd AS ( \
               UPDATE decisions SET status = $2, outcome = $3, outcome_source = $4, \
                 custom = $5, remark = $6, resolved_at = $7 \
               WHERE id = $1 AND status = 'pending' AND expires_at > $7 \
               RETURNING ",
            decision_columns!(),
            "), ",
            resolution_locks!(),
            ", ev AS ( \
               INSERT INTO decision_events (decision_id, at, kind, detail) \
               SELECT id, $7, $8, $9 FROM upd, lk), ",
            resolved_fan_out!("$10", "$7", "$11"),
            " SELECT ",
            decision_columns!(),
            ", pg_notify('sayso_resolved', id::text) IS NULL AS notified FROM upd"
        ))
        .bind(id)
        .bind(resolution.status.as_str())
        .bind(resolution.outcome.as_ref().map(Json))
        .bind(resolution.outcome_source.map(|s| s.as_str()))
        .bind(resolution.custom)
        .bind(&resolution.remark)
        .bind(now)
        .bind(resolution.event_kind())
        .bind(Json(&detail))
        .bind(Uuid::now_v7())
        .bind(now + rows::RESOLVED_GIVE_UP)
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?;
        match won {
            Some(won) => Ok(Resolved::Won(won.try_into()?)),
            None => self.current(id).await,
        }
    }

    async fn expire(&self, id: Uuid, now: OffsetDateTime) -> Result<Resolved, StoreError> {
        let now = to_ms_precision(now);
        let won = sqlx::query_as::<_, DecisionRow>(concat!(
            "WITH upd AS ( \
               UPDATE decisions SET ",
            expire_set!(),
            " WHERE id = $1 AND status = 'pending' AND expires_at <= $2 RETURNING ",
            decision_columns!(),
            "), ",
            expired_events!(),
            ", ",
            resolved_fan_out!("$3", "$2", "$4"),
            " SELECT ",
            decision_columns!(),
            ", pg_notify('sayso_resolved', id::text) IS NULL AS notified FROM upd"
        ))
        .bind(id)
        .bind(now)
        .bind(Uuid::now_v7())
        .bind(now + rows::RESOLVED_GIVE_UP)
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?;
        match won {
            Some(won) => Ok(Resolved::Won(won.try_into()?)),
            None => self.current(id).await,
        }
    }

    async fn expire_due(&self, now: OffsetDateTime, limit: u32) -> Result<Vec<Uuid>, StoreError> {
        let now = to_ms_precision(now);
        // Replicas running this at once skip each other's locked rows instead of waiting. The
        // fan-outs' ids are made in SQL, one per expired row.
        let rows: Vec<(Uuid, bool)> = sqlx::query_as(concat!(
            "WITH due AS ( \
               SELECT id FROM decisions WHERE status = 'pending' AND expires_at <= $1 \
               ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED), \
             upd AS ( \
               UPDATE decisions SET ",
            expire_set!(),
            " WHERE id IN (SELECT id FROM due) AND status = 'pending' \
               RETURNING id, inbox_id, expires_at, outcome), ",
            expired_events!(),
            ", ",
            resolved_fan_out!(sql_uuid_v7!(), "$1", "$3"),
            " SELECT id, pg_notify('sayso_resolved', id::text) IS NULL AS notified FROM upd \
              ORDER BY expires_at, id"
        ))
        .bind(now)
        .bind(i64::from(limit))
        .bind(now + rows::RESOLVED_GIVE_UP)
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(|(id, _)| id).collect())
    }

    async fn record_event(
        &self,
        id: Uuid,
        kind: &str,
        detail: &Value,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO decision_events (decision_id, at, kind, detail) VALUES ($1, $2, $3, $4)",
        )
        .bind(id)
        .bind(to_ms_precision(now))
        .bind(kind)
        .bind(Json(detail))
        .execute(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn events(&self, id: Uuid) -> Result<Vec<DecisionEvent>, StoreError> {
        let rows = sqlx::query_as::<_, EventRow>(
            "SELECT at, kind, detail FROM decision_events WHERE decision_id = $1 ORDER BY at, id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|r| DecisionEvent {
                at: r.at,
                kind: r.kind,
                detail: r.detail.0,
            })
            .collect())
    }

    async fn notifications(&self, id: Uuid) -> Result<Vec<NotificationState>, StoreError> {
        let rows = sqlx::query_as::<_, NotificationRow>(
            "SELECT channel, status, detail FROM notifications WHERE decision_id = $1 \
             ORDER BY channel",
        )
        .bind(id)
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
        id: Uuid,
    ) -> Result<Option<(Decision, Vec<NotificationState>)>, StoreError> {
        let found = sqlx::query_as::<_, NotifiedRow>(concat!(
            "SELECT ",
            decision_columns!(),
            ", (SELECT coalesce(json_agg(json_build_object('channel', n.channel, \
             'status', n.status, 'detail', n.detail) ORDER BY n.channel), '[]'::json) \
             FROM notifications n WHERE n.decision_id = decisions.id) AS notifications \
             FROM decisions WHERE id = $1 AND inbox_id = \
             (SELECT inbox_id FROM api_keys WHERE key_hash = $2 AND revoked_at IS NULL)"
        ))
        .bind(id)
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?;
        let Some(row) = found else { return Ok(None) };
        let notifications = row.notifications.0.into_iter().map(Into::into).collect();
        Ok(Some((row.decision.try_into()?, notifications)))
    }

    async fn image(&self, id: Uuid) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        sqlx::query_as::<_, (String, Vec<u8>)>(
            "SELECT content_type, bytes FROM decision_images WHERE decision_id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)
    }

    async fn inbox_channels(&self, inbox_id: Uuid) -> Result<InboxChannels, StoreError> {
        channels::inbox_channels(&self.pool, inbox_id).await
    }

    async fn set_inbox_channels(
        &self,
        inbox_id: Uuid,
        channels: &InboxChannels,
    ) -> Result<(), StoreError> {
        channels::set_inbox_channels(&self.pool, inbox_id, channels).await
    }

    async fn add_push_subscription(
        &self,
        inbox_id: Uuid,
        sub: &PushSubscription,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        channels::add_push_subscription(&self.pool, inbox_id, sub, now).await
    }

    async fn push_subscriptions(
        &self,
        inbox_id: Uuid,
    ) -> Result<Vec<PushSubscription>, StoreError> {
        channels::push_subscriptions(&self.pool, inbox_id).await
    }

    async fn remove_push_subscription(&self, endpoint: &str) -> Result<(), StoreError> {
        channels::remove_push_subscription(&self.pool, endpoint).await
    }

    async fn enqueue(
        &self,
        decision_id: Uuid,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        outbox::enqueue(&self.pool, decision_id, messages, now).await
    }

    async fn claim_messages(
        &self,
        now: OffsetDateTime,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<OutboxMessage>, StoreError> {
        outbox::claim_messages(&self.pool, now, lease, limit).await
    }

    async fn finish_message(
        &self,
        message: &OutboxMessage,
        result: &MessageResult,
        follow_ups: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        outbox::finish_message(&self.pool, message, result, follow_ups, now).await
    }

    async fn messages(&self, decision_id: Uuid) -> Result<Vec<OutboxMessage>, StoreError> {
        outbox::messages(&self.pool, decision_id).await
    }

    fn listen(&self, sink: SignalSink) -> Option<tokio::task::JoinHandle<()>> {
        Some(tokio::spawn(listen::run(self.pool.clone(), sink)))
    }
}
