//! What limits one API key and a flood of asks: how many urgent questions a key asked in
//! the last hour, and each person's notification budget per channel.
//! Every counting write runs in one `BEGIN IMMEDIATE` transaction on the one writer, so no
//! two of them ever see the same count.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::SqliteStore;
use super::rows::id;
use crate::domain::outbox::OutboxMessage;
use crate::storage::rows::{from_millis, millis, person_column, store_error};
use crate::storage::{Budget, BudgetRule, Limits, StoreError, UrgentUse};

/// The span the urgent cap counts over.
const HOUR: time::Duration = time::Duration::hours(1);

#[async_trait]
impl Limits for SqliteStore {
    async fn use_urgent(
        &self,
        key_id: Uuid,
        now: OffsetDateTime,
        per_hour: Option<u32>,
    ) -> Result<UrgentUse, StoreError> {
        let mut tx = self.begin_write().await?;
        let allowed: Option<bool> =
            sqlx::query_scalar("SELECT urgent FROM api_keys WHERE id = ? AND revoked_at IS NULL")
                .bind(id(key_id))
                .fetch_optional(&mut *tx)
                .await
                .map_err(store_error)?;
        if allowed != Some(true) {
            return Ok(UrgentUse::NotAllowed);
        }
        let Some(cap) = per_hour else {
            return Ok(UrgentUse::Granted);
        };
        sqlx::query("DELETE FROM urgent_uses WHERE key_id = ? AND at <= ?")
            .bind(id(key_id))
            .bind(millis(now - HOUR))
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
        let (used, oldest): (i64, Option<i64>) =
            sqlx::query_as("SELECT COUNT(*), MIN(at) FROM urgent_uses WHERE key_id = ?")
                .bind(id(key_id))
                .fetch_one(&mut *tx)
                .await
                .map_err(store_error)?;
        if used >= i64::from(cap) {
            let until = oldest.map_or(now, from_millis) + HOUR;
            return Ok(UrgentUse::Spent { until });
        }
        sqlx::query("INSERT INTO urgent_uses (key_id, at) VALUES (?, ?)")
            .bind(id(key_id))
            .bind(millis(now))
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
        tx.commit().await.map_err(store_error)?;
        Ok(UrgentUse::Granted)
    }

    async fn count_notification(
        &self,
        message: &OutboxMessage,
        now: OffsetDateTime,
        rule: BudgetRule,
    ) -> Result<Budget, StoreError> {
        let Some(person) = message.person.filter(|_| rule.per_window > 0) else {
            return Ok(Budget::Granted { waiting: 0 });
        };
        let (person, channel) = (person_column(Some(person)), message.route.as_str());
        let window = time::Duration::try_from(rule.window).unwrap_or(time::Duration::MINUTE);
        let mut tx = self.begin_write().await?;
        let found: Option<(Option<i64>, Option<i64>, Option<i64>)> = sqlx::query_as(
            "SELECT counted_at, held_at, json_extract(payload, '$.waiting') FROM outbox WHERE id = ?",
        )
        .bind(id(message.id))
        .fetch_optional(&mut *tx)
        .await
        .map_err(store_error)?;
        // Gone (its decision deleted): whatever is done with it, nothing is recorded.
        let Some((counted_at, held_at, waiting)) = found else {
            return Ok(Budget::Granted { waiting: 0 });
        };
        if counted_at.is_some() {
            let waiting = waiting.and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
            return Ok(Budget::Granted { waiting });
        }
        if let Some(held_at) = held_at {
            let gathered_by: Option<i64> = sqlx::query_scalar(
                "SELECT MIN(counted_at) FROM outbox WHERE person = ? AND channel = ? \
                 AND counted_at > ?",
            )
            .bind(&person)
            .bind(channel)
            .bind(held_at)
            .fetch_one(&mut *tx)
            .await
            .map_err(store_error)?;
            if let Some(at) = gathered_by {
                return Ok(Budget::Covered {
                    at: from_millis(at),
                });
            }
        }
        let (counted, oldest): (i64, Option<i64>) = sqlx::query_as(
            "SELECT COUNT(*), MIN(counted_at) FROM outbox WHERE person = ? AND channel = ? \
             AND counted_at > ?",
        )
        .bind(&person)
        .bind(channel)
        .bind(millis(now - window))
        .fetch_one(&mut *tx)
        .await
        .map_err(store_error)?;
        if counted >= i64::from(rule.per_window) {
            sqlx::query("UPDATE outbox SET held_at = COALESCE(held_at, ?) WHERE id = ?")
                .bind(millis(now))
                .bind(id(message.id))
                .execute(&mut *tx)
                .await
                .map_err(store_error)?;
            tx.commit().await.map_err(store_error)?;
            let until = oldest.map_or(now, from_millis) + window;
            return Ok(Budget::Spent { until });
        }
        // The held messages of still pending decisions this one now stands for.
        let waiting: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM outbox o JOIN decisions d ON d.id = o.decision_id \
             WHERE o.person = ? AND o.channel = ? AND o.held_at IS NOT NULL \
             AND o.status = 'pending' AND o.id <> ? AND d.status = 'pending'",
        )
        .bind(&person)
        .bind(channel)
        .bind(id(message.id))
        .fetch_one(&mut *tx)
        .await
        .map_err(store_error)?;
        sqlx::query(
            "UPDATE outbox SET counted_at = ?, \
             payload = CASE WHEN ? > 0 THEN json_set(payload, '$.waiting', ?) ELSE payload END \
             WHERE id = ?",
        )
        .bind(millis(now))
        .bind(waiting)
        .bind(waiting)
        .bind(id(message.id))
        .execute(&mut *tx)
        .await
        .map_err(store_error)?;
        tx.commit().await.map_err(store_error)?;
        Ok(Budget::Granted {
            waiting: u64::try_from(waiting).unwrap_or(0),
        })
    }
}
