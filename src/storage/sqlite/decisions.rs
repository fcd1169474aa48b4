//! Decisions: reads, lists, and the conditional updates that expire them (creates.rs writes
//! them, resolves.rs resolves them).

use async_trait::async_trait;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
use time::OffsetDateTime;
use uuid::Uuid;

use super::outbox::insert_messages;
use super::rows::id;
use super::{SqliteStore, readers};
use crate::domain::{Decision, EventKind};
use crate::storage::rows::{self, DecisionRow, ExpiredRow, NotifiedRow, millis, store_error};
use crate::storage::{Decisions, KeyedRead, ListFilter, Resolved, StoreError, Swept};

#[async_trait]
impl Decisions for SqliteStore {
    async fn decision(
        &self,
        inbox_id: Option<Uuid>,
        decision: Uuid,
    ) -> Result<Option<Decision>, StoreError> {
        const BY_ID: &str = concat!(
            "SELECT ",
            decision_columns!(),
            " FROM decisions WHERE id = ?"
        );
        const IN_INBOX: &str = concat!(
            "SELECT ",
            decision_columns!(),
            " FROM decisions WHERE id = ? AND inbox_id = ?"
        );
        if let Some(readers) = &self.readers {
            let (mut text, mut inbox_text) = (Uuid::encode_buffer(), Uuid::encode_buffer());
            let decision = &*decision.hyphenated().encode_lower(&mut text);
            return match inbox_id {
                Some(inbox) => {
                    let inbox = &*inbox.hyphenated().encode_lower(&mut inbox_text);
                    readers.read_optional(IN_INBOX, [decision, inbox], readers::decision)
                }
                None => readers.read_optional(BY_ID, [decision], readers::decision),
            };
        }
        let found = match inbox_id {
            Some(inbox) => sqlx::query_as::<_, DecisionRow>(IN_INBOX)
                .bind(id(decision))
                .bind(id(inbox))
                .fetch_optional(&self.pool)
                .await
                .map_err(store_error)?,
            None => sqlx::query_as::<_, DecisionRow>(BY_ID)
                .bind(id(decision))
                .fetch_optional(&self.pool)
                .await
                .map_err(store_error)?,
        };
        found.map(Decision::try_from).transpose()
    }

    async fn projects(&self, inbox_id: Uuid) -> Result<Vec<String>, StoreError> {
        // Each project is one seek of `decisions_projects` past the one before, so the cost is
        // the number of projects, not of decisions (a DISTINCT read every one of them).
        sqlx::query_scalar(
            "WITH RECURSIVE p(project) AS ( \
               SELECT (SELECT project FROM decisions WHERE inbox_id = ?1 AND project IS NOT NULL \
                       ORDER BY project LIMIT 1) \
               UNION ALL \
               SELECT (SELECT d.project FROM decisions AS d \
                       WHERE d.inbox_id = ?1 AND d.project > p.project ORDER BY d.project LIMIT 1) \
               FROM p WHERE p.project IS NOT NULL LIMIT 101) \
             SELECT project FROM p WHERE project IS NOT NULL LIMIT 100",
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
        read_decisions(q, self).await
    }

    async fn pending_page(
        &self,
        inbox_id: Uuid,
        project: Option<&str>,
        after: Option<(OffsetDateTime, Uuid)>,
        limit: u32,
    ) -> Result<Vec<Decision>, StoreError> {
        let mut q = QueryBuilder::<Sqlite>::new(concat!(
            "SELECT ",
            decision_columns!(),
            " FROM decisions WHERE status = 'pending' AND inbox_id = "
        ));
        q.push_bind(id(inbox_id));
        if let Some(project) = project {
            q.push(" AND project = ").push_bind(project.to_string());
        }
        // A row value, which SQLite turns into one range of the index.
        if let Some((expires_at, after_id)) = after {
            q.push(" AND (expires_at, id) > (")
                .push_bind(millis(expires_at))
                .push(", ")
                .push_bind(id(after_id))
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
        let mut q = QueryBuilder::<Sqlite>::new(
            "SELECT COUNT(*) FROM (SELECT 1 FROM decisions WHERE status = 'pending' AND inbox_id = ",
        );
        q.push_bind(id(inbox_id));
        if let Some(project) = project {
            q.push(" AND project = ").push_bind(project.to_string());
        }
        q.push(" AND expires_at > ").push_bind(millis(now));
        q.push(" LIMIT ").push_bind(i64::from(cap)).push(")");
        let n: i64 = q
            .build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(n.max(0) as u64)
    }

    async fn expire(&self, decision: Uuid, now: OffsetDateTime) -> Result<Resolved, StoreError> {
        let mut tx = self.begin_write().await?;
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
        SqliteStore::insert_event(
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

    async fn expire_due(&self, now: OffsetDateTime, limit: u32) -> Result<Vec<Swept>, StoreError> {
        let mut tx = self.begin_write().await?;
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
            let detail = rows::expiry_detail(r.outcome.as_ref());
            SqliteStore::insert_event(&mut tx, r.id.0, r.expires_at.0, EventKind::Expired, &detail)
                .await?;
            insert_messages(&mut tx, r.id.0, &fan_out, now).await?;
        }
        tx.commit().await.map_err(store_error)?;
        Ok(expired
            .into_iter()
            .map(|r| Swept {
                id: r.id.0,
                kind: r.kind,
            })
            .collect())
    }

    async fn decision_for_key(
        &self,
        key_hash: &str,
        decision: Uuid,
        known: Option<&[u8]>,
    ) -> Result<Option<KeyedRead>, StoreError> {
        const SQL: &str = concat!(
            "SELECT ",
            decision_columns!(),
            ", (SELECT json_group_array(json_object('channel', channel, 'status', status, \
             'detail', detail)) FROM (SELECT channel, status, detail FROM notifications \
             WHERE decision_id = decisions.id ORDER BY channel)) AS notifications \
             FROM decisions WHERE id = ? AND inbox_id = \
             (SELECT inbox_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL)"
        );
        if let Some(readers) = &self.readers {
            let mut text = Uuid::encode_buffer();
            let decision = &*decision.hyphenated().encode_lower(&mut text);
            return readers.read_optional(SQL, [decision, key_hash], |row| {
                readers::notified_decision_unless(row, known)
            });
        }
        let found = sqlx::query_as::<_, NotifiedRow>(SQL)
            .bind(id(decision))
            .bind(key_hash)
            .fetch_optional(&self.pool)
            .await
            .map_err(store_error)?;
        let Some(row) = found else { return Ok(None) };
        // Without the readers (a database in memory), rows are decoded every time.
        Ok(Some(KeyedRead::Read {
            decision: Box::new(row.decision.try_into()?),
            notifications: row.notifications.0.into_iter().map(Into::into).collect(),
            row: None,
        }))
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
}

/// The decisions a list query reads (one built over `decision_columns!`), in its order.
async fn read_decisions(
    mut q: QueryBuilder<Sqlite>,
    store: &SqliteStore,
) -> Result<Vec<Decision>, StoreError> {
    q.build_query_as::<DecisionRow>()
        .fetch_all(&store.pool)
        .await
        .map_err(store_error)?
        .into_iter()
        .map(Decision::try_from)
        .collect()
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
