//! Decisions: the insert (with its idempotency key and quota), reads, lists, and the
//! conditional updates that resolve and expire them.

use serde_json::Value;
use sqlx::types::Json;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
use time::OffsetDateTime;
use uuid::Uuid;

use super::SqliteStore;
use super::events::insert_event;
use super::outbox::insert_messages;
use super::rows::{DecisionRow, ExistingRow, ExpiredRow, NotifiedRow, id};
use crate::domain::{Decision, EventKind, NotificationState, Resolution, Status};
use crate::storage::rows::{self, from_millis, millis, store_error, to_ms_precision};
use crate::storage::{InsertDecision, Inserted, ListFilter, Resolved, StoreError, Swept};

pub(super) async fn insert_decision(
    store: &SqliteStore,
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
    let idempotency = row.idempotency.map(|i| (i.key, i.request_hash));

    // The quota check, the usage count and the `created` event ride on the INSERT
    // (migrations/sqlite/0004): with nothing else to write, a create is one statement.
    if row.notifications.is_empty() && row.outbox.is_empty() && row.new.image.is_none() {
        let inserted = {
            let mut conn = store.writer.acquire().await.map_err(store_error)?;
            insert_row(&mut conn, &decision, &spec_json, idempotency).await?
        };
        // The writer is free again: `not_inserted` reads through it.
        return match inserted {
            RowInsert::New => Ok(Inserted::New(decision)),
            not_new => not_inserted(store, row.inbox_id, idempotency, not_new).await,
        };
    }

    let mut tx = store.begin_immediate().await?;
    match insert_row(&mut tx, &decision, &spec_json, idempotency).await? {
        RowInsert::New => {}
        not_new => {
            // Dropping the transaction rolls it back.
            drop(tx);
            return not_inserted(store, row.inbox_id, idempotency, not_new).await;
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
        .bind(n.channel)
        .bind(n.status)
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

pub(super) async fn decision(
    store: &SqliteStore,
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
        .fetch_optional(&store.pool)
        .await
        .map_err(store_error)?,
        None => sqlx::query_as::<_, DecisionRow>(concat!(
            "SELECT ",
            decision_columns!(),
            " FROM decisions WHERE id = ?"
        ))
        .bind(id(decision))
        .fetch_optional(&store.pool)
        .await
        .map_err(store_error)?,
    };
    found.map(Decision::try_from).transpose()
}

pub(super) async fn projects(
    store: &SqliteStore,
    inbox_id: Uuid,
) -> Result<Vec<String>, StoreError> {
    sqlx::query_scalar(
        "SELECT DISTINCT project FROM decisions \
         WHERE inbox_id = ? AND project IS NOT NULL ORDER BY project LIMIT 100",
    )
    .bind(id(inbox_id))
    .fetch_all(&store.pool)
    .await
    .map_err(store_error)
}

pub(super) async fn list_decisions(
    store: &SqliteStore,
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
        .fetch_all(&store.pool)
        .await
        .map_err(store_error)?
        .into_iter()
        .map(Decision::try_from)
        .collect()
}

pub(super) async fn resolve(
    store: &SqliteStore,
    decision: Uuid,
    resolution: &Resolution,
    now: OffsetDateTime,
) -> Result<Resolved, StoreError> {
    check_resolution(resolution)?;
    let now = to_ms_precision(now);
    let mut tx = store.begin_immediate().await?;
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

pub(super) async fn expire(
    store: &SqliteStore,
    decision: Uuid,
    now: OffsetDateTime,
) -> Result<Resolved, StoreError> {
    let mut tx = store.begin_immediate().await?;
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
    insert_event(
        &mut tx,
        decision,
        won.expires_at,
        EventKind::Expired,
        &detail,
    )
    .await?;
    insert_messages(&mut tx, decision, &[rows::resolved_fan_out(now)], now).await?;
    tx.commit().await.map_err(store_error)?;
    Ok(Resolved::Won(won))
}

pub(super) async fn expire_due(
    store: &SqliteStore,
    now: OffsetDateTime,
    limit: u32,
) -> Result<Vec<Swept>, StoreError> {
    let mut tx = store.begin_immediate().await?;
    let mut expired = sqlx::query_as::<_, ExpiredRow>(
        "UPDATE decisions SET status = 'expired', outcome = default_outcome, \
         outcome_source = CASE WHEN default_outcome IS NULL THEN NULL ELSE 'default' END, \
         resolved_at = expires_at \
         WHERE id IN (SELECT id FROM decisions WHERE status = 'pending' AND expires_at <= ? \
                      ORDER BY expires_at LIMIT ?) \
         RETURNING id, kind, expires_at, outcome",
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
            EventKind::Expired,
            &detail,
        )
        .await?;
        insert_messages(&mut tx, r.id.into_uuid(), &fan_out, now).await?;
    }
    tx.commit().await.map_err(store_error)?;
    Ok(expired
        .into_iter()
        .map(|r| Swept {
            id: r.id.into_uuid(),
            kind: r.kind,
        })
        .collect())
}

pub(super) async fn decision_for_key(
    store: &SqliteStore,
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
    .fetch_optional(&store.pool)
    .await
    .map_err(store_error)?;
    let Some(row) = found else { return Ok(None) };
    let notifications = row.notifications.0.into_iter().map(Into::into).collect();
    Ok(Some((row.decision.try_into()?, notifications)))
}

pub(super) async fn image(
    store: &SqliteStore,
    decision: Uuid,
) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    sqlx::query_as::<_, (String, Vec<u8>)>(
        "SELECT content_type, bytes FROM decision_images WHERE decision_id = ?",
    )
    .bind(id(decision))
    .fetch_optional(&store.pool)
    .await
    .map_err(store_error)
}

/// Why a decision was not inserted: the decision already made under its idempotency key
/// (even when the quota is now used up, a repeat gets it back), else the quota.
async fn not_inserted(
    store: &SqliteStore,
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
        .fetch_optional(&store.writer)
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
