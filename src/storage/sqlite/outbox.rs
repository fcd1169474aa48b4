//! The outbox: messages written with their cause, claimed with leases, finished with
//! their `notified` event.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::SqliteConnection;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::SqliteStore;
use super::rows::id;
use crate::domain::EventKind;
use crate::domain::outbox::{MessageResult, NewMessage, OutboxMessage};
use crate::storage::rows::{self, MessageRow, millis, store_error};
use crate::storage::{Messages, StoreError};

/// Adds outbox messages for a decision; one with the same channel, purpose and person
/// already there stays as it is.
pub(super) async fn insert_messages(
    conn: &mut SqliteConnection,
    decision: Uuid,
    messages: &[NewMessage],
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    insert_rows(conn, Some(decision), messages, now).await
}

/// Adds notices: outbox messages about no decision. They never meet the conflict clause:
/// `outbox_once` holds NULL decision ids as distinct.
pub(super) async fn insert_notices(
    conn: &mut SqliteConnection,
    messages: &[NewMessage],
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    insert_rows(conn, None, messages, now).await
}

async fn insert_rows(
    conn: &mut SqliteConnection,
    decision: Option<Uuid>,
    messages: &[NewMessage],
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    for m in messages {
        sqlx::query(concat!(
            "INSERT INTO outbox (id, decision_id, channel, purpose, payload, created_at, \
             next_attempt_at, give_up_at, person) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            crate::storage::outbox_on_conflict!()
        ))
        .bind(id(Uuid::now_v7()))
        .bind(decision.map(id))
        .bind(m.route)
        .bind(m.purpose)
        .bind(Json(&m.payload))
        .bind(millis(now))
        .bind(millis(m.not_before))
        .bind(millis(m.give_up_at))
        .bind(rows::person_column(m.person))
        .execute(&mut *conn)
        .await
        .map_err(store_error)?;
    }
    Ok(())
}

#[async_trait]
impl Messages for SqliteStore {
    async fn enqueue(
        &self,
        decision_id: Uuid,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        insert_messages(&mut tx, decision_id, messages, now).await?;
        tx.commit().await.map_err(store_error)
    }

    async fn claim_messages(
        &self,
        now: OffsetDateTime,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<OutboxMessage>, StoreError> {
        let mut tx = self.begin_write().await?;
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
        let mut tx = self.begin_write().await?;
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
        // A notice about no decision has no notification state, audit trail or follow-ups.
        if message.decision_id.is_nil() {
            return tx.commit().await.map_err(store_error);
        }
        if let Some(channel) = message.route.channel() {
            sqlx::query(
                "INSERT INTO notifications (decision_id, channel, status, detail, updated_at) \
                 VALUES (?, ?, ?, ?, ?) \
                 ON CONFLICT (decision_id, channel) DO UPDATE SET status = excluded.status, \
                 detail = excluded.detail, updated_at = excluded.updated_at",
            )
            .bind(id(message.decision_id))
            .bind(channel)
            .bind(result.status.as_str())
            .bind(&result.detail)
            .bind(millis(now))
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
        }
        let detail = rows::notified_detail(message, result);
        SqliteStore::insert_event(
            &mut tx,
            message.decision_id,
            now,
            EventKind::Notified,
            &detail,
        )
        .await?;
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
}
