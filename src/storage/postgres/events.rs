//! The audit trail read across decisions on PostgreSQL: an inbox's resolutions in event-id order,
//! and the events and notification states of a page of decisions. One decision's are in
//! `sql/events.rs`.

use async_trait::async_trait;
use uuid::Uuid;

use super::PgStore;
use crate::domain::{DecisionEvent, NotificationState};
use crate::storage::rows::{EventRow, NotificationRow, OfDecision, store_error};
use crate::storage::{EventLists, StoreError};

#[async_trait]
impl EventLists for PgStore {
    async fn events_of(&self, ids: &[Uuid]) -> Result<Vec<(Uuid, DecisionEvent)>, StoreError> {
        let rows = sqlx::query_as::<_, OfDecision<EventRow>>(
            "SELECT decision_id, at, kind, detail FROM decision_events \
             WHERE decision_id = ANY($1) ORDER BY decision_id, at, id",
        )
        .bind(ids)
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(OfDecision::into_pair).collect())
    }

    async fn notifications_of(
        &self,
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, NotificationState)>, StoreError> {
        let rows = sqlx::query_as::<_, OfDecision<NotificationRow>>(
            "SELECT decision_id, channel, status, detail FROM notifications \
             WHERE decision_id = ANY($1) ORDER BY decision_id, channel",
        )
        .bind(ids)
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(OfDecision::into_pair).collect())
    }

    /// Resolution events get their ids under a per-inbox lock held to commit (see
    /// `resolution_locks!`), so within an inbox ids become visible in increasing order.
    async fn resolutions_since(
        &self,
        inbox: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Uuid)>, StoreError> {
        sqlx::query_as(
            "SELECT e.id, e.decision_id FROM decision_events e \
             JOIN decisions d ON d.id = e.decision_id \
             WHERE e.id > $1 AND e.kind IN ('answered', 'declined', 'cancelled', 'expired') \
               AND d.inbox_id = $2 \
             ORDER BY e.id LIMIT $3",
        )
        .bind(after)
        .bind(inbox)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)
    }
}
