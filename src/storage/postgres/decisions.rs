//! Decisions: the insert (one statement with its idempotency key, quota, events,
//! notification states and outbox), reads, lists, and the conditional updates that resolve
//! and expire them, each `NOTIFY`ing the other replicas.

use serde_json::Value;
use sqlx::types::Json;
use sqlx::{Postgres, QueryBuilder};
use time::OffsetDateTime;
use uuid::Uuid;

use super::outbox::{MessageArrays, insert_outbox, resolved_fan_out, sql_uuid_v7, unnest_messages};
use super::rows::{DecisionRow, ExistingRow, NotifiedRow};
use super::{PgStore, usage};
use crate::domain::{Decision, Kind, NotificationState, Resolution, Status};
use crate::storage::rows::{self, store_error, to_ms_precision};
use crate::storage::{
    CREATE_ACTIONS, InsertDecision, Inserted, ListFilter, Resolved, StoreError, Swept,
};

pub(super) async fn insert_decision(
    store: &PgStore,
    row: InsertDecision<'_>,
) -> Result<Inserted, StoreError> {
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
        insert_statement(&store.pool, &decision, &spec_json, &row, Some((day, shard))).await?;
    if first.inserted {
        return Ok(Inserted::New(decision));
    }
    if first.has_quota {
        let mut tx = store.pool.begin().await.map_err(store_error)?;
        if !usage::charge_with_quota(&mut tx, row.inbox_id, day).await? {
            drop(tx);
            return match existing(store, &row).await? {
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
    existing(store, &row)
        .await?
        .ok_or_else(|| StoreError::Other("idempotency conflict without a row".into()))
}

pub(super) async fn decision(
    store: &PgStore,
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
    .fetch_optional(&store.pool)
    .await
    .map_err(store_error)?
    .map(Decision::try_from)
    .transpose()
}

pub(super) async fn projects(store: &PgStore, inbox_id: Uuid) -> Result<Vec<String>, StoreError> {
    sqlx::query_scalar(
        "SELECT DISTINCT project FROM decisions \
         WHERE inbox_id = $1 AND project IS NOT NULL ORDER BY project LIMIT 100",
    )
    .bind(inbox_id)
    .fetch_all(&store.pool)
    .await
    .map_err(store_error)
}

pub(super) async fn list_decisions(
    store: &PgStore,
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
        .fetch_all(&store.pool)
        .await
        .map_err(store_error)?
        .into_iter()
        .map(Decision::try_from)
        .collect()
}

pub(super) async fn resolve(
    store: &PgStore,
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
    .fetch_optional(&store.pool)
    .await
    .map_err(store_error)?;
    match won {
        Some(won) => Ok(Resolved::Won(won.try_into()?)),
        None => current(store, id).await,
    }
}

pub(super) async fn expire(
    store: &PgStore,
    id: Uuid,
    now: OffsetDateTime,
) -> Result<Resolved, StoreError> {
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
    .fetch_optional(&store.pool)
    .await
    .map_err(store_error)?;
    match won {
        Some(won) => Ok(Resolved::Won(won.try_into()?)),
        None => current(store, id).await,
    }
}

pub(super) async fn expire_due(
    store: &PgStore,
    now: OffsetDateTime,
    limit: u32,
) -> Result<Vec<Swept>, StoreError> {
    let now = to_ms_precision(now);
    // Replicas running this at once skip each other's locked rows instead of waiting. The
    // fan-outs' ids are made in SQL, one per expired row.
    let rows: Vec<(Uuid, Kind, bool)> = sqlx::query_as(concat!(
        "WITH due AS ( \
           SELECT id FROM decisions WHERE status = 'pending' AND expires_at <= $1 \
           ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED), \
         upd AS ( \
           UPDATE decisions SET ",
        expire_set!(),
        " WHERE id IN (SELECT id FROM due) AND status = 'pending' \
           RETURNING id, kind, inbox_id, expires_at, outcome), ",
        expired_events!(),
        ", ",
        resolved_fan_out!(sql_uuid_v7!(), "$1", "$3"),
        " SELECT id, kind, pg_notify('sayso_resolved', id::text) IS NULL AS notified FROM upd \
          ORDER BY expires_at, id"
    ))
    .bind(now)
    .bind(i64::from(limit))
    .bind(now + rows::RESOLVED_GIVE_UP)
    .fetch_all(&store.pool)
    .await
    .map_err(store_error)?;
    Ok(rows
        .into_iter()
        .map(|(id, kind, _)| Swept { id, kind })
        .collect())
}

pub(super) async fn decision_for_key(
    store: &PgStore,
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
    .fetch_optional(&store.pool)
    .await
    .map_err(store_error)?;
    let Some(row) = found else { return Ok(None) };
    let notifications = row.notifications.0.into_iter().map(Into::into).collect();
    Ok(Some((row.decision.try_into()?, notifications)))
}

pub(super) async fn image(
    store: &PgStore,
    id: Uuid,
) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    sqlx::query_as::<_, (String, Vec<u8>)>(
        "SELECT content_type, bytes FROM decision_images WHERE decision_id = $1",
    )
    .bind(id)
    .fetch_optional(&store.pool)
    .await
    .map_err(store_error)
}

/// The decision already holding the row's idempotency key, if any.
pub(super) async fn existing(
    store: &PgStore,
    row: &InsertDecision<'_>,
) -> Result<Option<Inserted>, StoreError> {
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
    .fetch_optional(&store.pool)
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

pub(super) async fn current(store: &PgStore, id: Uuid) -> Result<Resolved, StoreError> {
    match decision(store, None, id).await? {
        Some(d) => Ok(Resolved::Lost(d)),
        None => Err(StoreError::NotFound),
    }
}

/// What one run of the insert statement did.
pub(super) struct InsertOutcome {
    inserted: bool,
    /// The inbox has a daily quota (so, when called with a charge, nothing was written).
    has_quota: bool,
}

/// One statement: the decision, and only if it was inserted (the idempotency key is new) its
/// image, `created` event, notification states and outbox messages. With `charge` (the day
/// and the usage row to count on) it writes nothing for an inbox that has a quota, and
/// counts the create otherwise; without, it inserts whatever the quota and counts nothing
/// (the caller has counted under the quota's lock).
pub(super) async fn insert_statement<'e>(
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

pub(super) fn check_resolution(r: &Resolution) -> Result<(), StoreError> {
    match r.status {
        Status::Answered | Status::Declined | Status::Cancelled => Ok(()),
        other => Err(StoreError::Other(format!(
            "a resolution cannot make a decision {}",
            other.as_str()
        ))),
    }
}
