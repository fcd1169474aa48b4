//! Decisions: reads, lists, and the conditional updates that expire them, each `NOTIFY`ing
//! the other replicas (creates.rs writes them, resolves.rs resolves them).

use async_trait::async_trait;
use sqlx::{Postgres, QueryBuilder};
use time::OffsetDateTime;
use uuid::Uuid;

use super::PgStore;
use super::outbox::{resolved_fan_out, sql_uuid_v7};
use crate::domain::{Decision, Kind};
use crate::storage::rows::{self, DecisionRow, NotifiedRow, store_error, to_ms_precision};
use crate::storage::{Decisions, KeyedRead, ListFilter, Resolved, StoreError, Swept};

#[async_trait]
impl Decisions for PgStore {
    /// Read in batches (decision_reads.rs).
    async fn decision(
        &self,
        inbox_id: Option<Uuid>,
        id: Uuid,
    ) -> Result<Option<Decision>, StoreError> {
        self.decision_reads.decision(inbox_id, id).await
    }

    async fn projects(&self, inbox_id: Uuid) -> Result<Vec<String>, StoreError> {
        // Each project is one seek of `decisions_projects` past the one before, so the cost is
        // the number of projects, not of decisions (a DISTINCT read every one of them). The
        // outer LIMIT stops the recursion: PostgreSQL computes only the rows fetched.
        sqlx::query_scalar(
            "WITH RECURSIVE p(project) AS ( \
               SELECT (SELECT project FROM decisions WHERE inbox_id = $1 AND project IS NOT NULL \
                       ORDER BY project LIMIT 1) \
               UNION ALL \
               SELECT (SELECT d.project FROM decisions AS d \
                       WHERE d.inbox_id = $1 AND d.project > p.project ORDER BY d.project LIMIT 1) \
               FROM p WHERE p.project IS NOT NULL) \
             SELECT project FROM p WHERE project IS NOT NULL LIMIT 100",
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
        read_decisions(q, self).await
    }

    async fn pending_page(
        &self,
        inbox_id: Uuid,
        project: Option<&str>,
        after: Option<(OffsetDateTime, Uuid)>,
        limit: u32,
    ) -> Result<Vec<Decision>, StoreError> {
        let mut q = QueryBuilder::<Postgres>::new(concat!(
            "SELECT ",
            decision_columns!(),
            " FROM decisions WHERE status = 'pending' AND inbox_id = "
        ));
        q.push_bind(inbox_id);
        if let Some(project) = project {
            q.push(" AND project = ").push_bind(project.to_string());
        }
        // A row comparison, which PostgreSQL uses as one range of the index.
        if let Some((expires_at, after_id)) = after {
            q.push(" AND (expires_at, id) > (")
                .push_bind(expires_at)
                .push(", ")
                .push_bind(after_id)
                .push(")");
        }
        q.push(" ORDER BY expires_at, id LIMIT ")
            .push_bind(i64::from(limit));
        read_decisions(q, self).await
    }

    async fn count_pending(
        &self,
        inbox_id: Uuid,
        project: Option<&str>,
        now: OffsetDateTime,
        cap: u32,
    ) -> Result<u64, StoreError> {
        let mut q = QueryBuilder::<Postgres>::new(
            "SELECT COUNT(*) FROM (SELECT 1 FROM decisions WHERE status = 'pending' AND inbox_id = ",
        );
        q.push_bind(inbox_id);
        if let Some(project) = project {
            q.push(" AND project = ").push_bind(project.to_string());
        }
        q.push(" AND expires_at > ").push_bind(now);
        // Ordered by the index's own order: without it the planner reads the table from its
        // start for a LIMIT it expects to meet soon (120 ms at a million rows, against 7).
        q.push(" ORDER BY expires_at LIMIT ")
            .push_bind(i64::from(cap))
            .push(") AS capped");
        let n: i64 = q
            .build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(n.max(0) as u64)
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
            None => current(self, id).await,
        }
    }

    async fn expire_due(&self, now: OffsetDateTime, limit: u32) -> Result<Vec<Swept>, StoreError> {
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
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|(id, kind, _)| Swept { id, kind })
            .collect())
    }

    async fn decision_for_key(
        &self,
        key_hash: &str,
        id: Uuid,
        _known: Option<&[u8]>,
    ) -> Result<Option<KeyedRead>, StoreError> {
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
        // Rows are not compared here: a read through PostgreSQL is decoded every time.
        Ok(Some(KeyedRead::Read {
            decision: Box::new(row.decision.try_into()?),
            notifications: row.notifications.0.into_iter().map(Into::into).collect(),
            row: None,
        }))
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
}

/// The decisions a list query reads (one built over `decision_columns!`), in its order.
async fn read_decisions(
    mut q: QueryBuilder<Postgres>,
    store: &PgStore,
) -> Result<Vec<Decision>, StoreError> {
    q.build_query_as::<DecisionRow>()
        .fetch_all(&store.pool)
        .await
        .map_err(store_error)?
        .into_iter()
        .map(Decision::try_from)
        .collect()
}

/// The decision already holding the row's idempotency key, if any.
pub(super) async fn current(store: &PgStore, id: Uuid) -> Result<Resolved, StoreError> {
    match store.decision_reads.decision(None, id).await? {
        Some(d) => Ok(Resolved::Lost(d)),
        None => Err(StoreError::NotFound),
    }
}
