//! The audit trail of one decision: its events and notification states.

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::{DecisionEvent, EventKind, NotificationState};
use crate::storage::rows::{At, EventRow, Id, NotificationRow, store_error, to_ms_precision};
use crate::storage::{Events, StoreError};

for_both_stores! {
    impl Backend {
        /// Writes one event of `decision`, on a connection of the caller's (a transaction's,
        /// when the event goes with other writes).
        pub(in crate::storage) async fn insert_event(
            conn: &mut <Db as sqlx::Database>::Connection,
            decision: Uuid,
            at: OffsetDateTime,
            kind: EventKind,
            detail: &Value,
        ) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO decision_events (decision_id, at, kind, detail) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(Id(decision))
            .bind(At(to_ms_precision(at)))
            .bind(kind)
            .bind(Json(detail))
            .execute(conn)
            .await
            .map_err(store_error)?;
            Ok(())
        }
    }

    #[async_trait]
    impl Events for Backend {
        async fn record_event(
            &self,
            decision: Uuid,
            kind: EventKind,
            detail: &Value,
            now: OffsetDateTime,
        ) -> Result<(), StoreError> {
            let mut conn = self.writes().acquire().await.map_err(store_error)?;
            Backend::insert_event(&mut conn, decision, now, kind, detail).await
        }

        async fn events(&self, decision: Uuid) -> Result<Vec<DecisionEvent>, StoreError> {
            let rows = sqlx::query_as::<_, EventRow>(
                "SELECT at, kind, detail FROM decision_events WHERE decision_id = $1 \
                 ORDER BY at, id",
            )
            .bind(Id(decision))
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?;
            Ok(rows.into_iter().map(DecisionEvent::from).collect())
        }

        async fn notifications(
            &self,
            decision: Uuid,
        ) -> Result<Vec<NotificationState>, StoreError> {
            let rows = sqlx::query_as::<_, NotificationRow>(
                "SELECT channel, status, detail FROM notifications WHERE decision_id = $1 \
                 ORDER BY channel",
            )
            .bind(Id(decision))
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?;
            Ok(rows.into_iter().map(NotificationState::from).collect())
        }
    }
}
