//! The audit trail read across decisions on SQLite: an inbox's resolutions in event-id order,
//! and the events and notification states of a page of decisions. One decision's are in
//! `sql/events.rs`.

use async_trait::async_trait;
use serde_json::Value;
use uuid::Uuid;
use uuid::fmt::Hyphenated;

use super::SqliteStore;
use super::rows::id;
use crate::domain::{DecisionEvent, NotificationState};
use crate::storage::rows::{EventRow, NotificationRow, OfDecision, store_error};
use crate::storage::{EventLists, StoreError};

#[async_trait]
impl EventLists for SqliteStore {
    async fn events_of(&self, ids: &[Uuid]) -> Result<Vec<(Uuid, DecisionEvent)>, StoreError> {
        // Each id is looked up in decision_events_decision; the order is the index's own.
        let rows = sqlx::query_as::<_, OfDecision<EventRow>>(
            "SELECT decision_id, at, kind, detail FROM decision_events \
             WHERE decision_id IN (SELECT value FROM json_each(?)) ORDER BY decision_id, at, id",
        )
        .bind(id_array(ids))
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
             WHERE decision_id IN (SELECT value FROM json_each(?)) ORDER BY decision_id, channel",
        )
        .bind(id_array(ids))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(OfDecision::into_pair).collect())
    }

    /// One writer at a time commits, in `BEGIN IMMEDIATE` order, so event ids are visible in the
    /// order they were given out. The kinds are written as the partial index
    /// `decision_events_resolutions` writes them (migration 0009), or SQLite would not use it.
    async fn resolutions_since(
        &self,
        inbox: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Uuid)>, StoreError> {
        let rows: Vec<(i64, Hyphenated)> = sqlx::query_as(
            "SELECT e.id, e.decision_id FROM decision_events e \
             JOIN decisions d ON d.id = e.decision_id \
             WHERE e.id > ? \
               AND (e.kind = 'answered' OR e.kind = 'declined' OR e.kind = 'cancelled' \
                    OR e.kind = 'expired') \
               AND d.inbox_id = ? \
             ORDER BY e.id LIMIT ?",
        )
        .bind(after)
        .bind(id(inbox))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|(event, decision)| (event, decision.into_uuid()))
            .collect())
    }
}

/// The ids as the JSON array `json_each` reads: the list is one bound parameter, however long.
pub(super) fn id_array(ids: &[Uuid]) -> String {
    Value::from(ids.iter().map(|u| u.to_string()).collect::<Vec<_>>()).to_string()
}
