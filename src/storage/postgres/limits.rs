//! What limits one API key and a flood of asks: how many urgent questions a key asked in
//! the last hour, and each person's notification budget per channel.
//! Every counting write is one transaction under a lock (the key's row; an advisory lock
//! per person and channel), taken before anything is counted: replicas counting at once
//! wait for each other, and each counts what the one before it committed.

use async_trait::async_trait;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::PgStore;
use crate::domain::outbox::OutboxMessage;
use crate::storage::rows::{person_column, store_error, to_ms_precision};
use crate::storage::{Budget, BudgetRule, Limits, StoreError, UrgentUse};

/// The span the urgent cap counts over.
const HOUR: time::Duration = time::Duration::hours(1);

/// The advisory lock class of notification budgets (1447 is the resolution ids').
const BUDGET_LOCK: i32 = 1448;

/// A message's place in its person's budget.
#[derive(sqlx::FromRow)]
struct BudgetRow {
    counted_at: Option<OffsetDateTime>,
    held_at: Option<OffsetDateTime>,
    /// The held messages it was counted standing for.
    waiting: Option<Json<i64>>,
}

#[async_trait]
impl Limits for PgStore {
    async fn use_urgent(
        &self,
        key_id: Uuid,
        now: OffsetDateTime,
        per_hour: Option<u32>,
    ) -> Result<UrgentUse, StoreError> {
        let now = to_ms_precision(now);
        let mut tx = self.pool.begin().await.map_err(store_error)?;
        let allowed: Option<bool> = sqlx::query_scalar(
            "SELECT urgent FROM api_keys WHERE id = $1 AND revoked_at IS NULL FOR UPDATE",
        )
        .bind(key_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(store_error)?;
        if allowed != Some(true) {
            return Ok(UrgentUse::NotAllowed);
        }
        let Some(cap) = per_hour else {
            return Ok(UrgentUse::Granted);
        };
        sqlx::query("DELETE FROM urgent_uses WHERE key_id = $1 AND at <= $2")
            .bind(key_id)
            .bind(now - HOUR)
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
        let (used, oldest): (i64, Option<OffsetDateTime>) =
            sqlx::query_as("SELECT COUNT(*), MIN(at) FROM urgent_uses WHERE key_id = $1")
                .bind(key_id)
                .fetch_one(&mut *tx)
                .await
                .map_err(store_error)?;
        if used >= i64::from(cap) {
            let until = oldest.unwrap_or(now) + HOUR;
            return Ok(UrgentUse::Spent { until });
        }
        sqlx::query("INSERT INTO urgent_uses (key_id, at) VALUES ($1, $2)")
            .bind(key_id)
            .bind(now)
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
        let now = to_ms_precision(now);
        let mut tx = self.pool.begin().await.map_err(store_error)?;
        sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2 || ':' || $3))")
            .bind(BUDGET_LOCK)
            .bind(&person)
            .bind(channel)
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
        let found = sqlx::query_as::<_, BudgetRow>(
            "SELECT counted_at, held_at, payload -> 'waiting' AS waiting FROM outbox WHERE id = $1",
        )
        .bind(message.id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(store_error)?;
        // Gone (its decision deleted): whatever is done with it, nothing is recorded.
        let Some(BudgetRow {
            counted_at,
            held_at,
            waiting,
        }) = found
        else {
            return Ok(Budget::Granted { waiting: 0 });
        };
        if counted_at.is_some() {
            let waiting = waiting.and_then(|n| u64::try_from(n.0).ok()).unwrap_or(0);
            return Ok(Budget::Granted { waiting });
        }
        if let Some(held_at) = held_at {
            let gathered_by: Option<OffsetDateTime> = sqlx::query_scalar(
                "SELECT MIN(counted_at) FROM outbox WHERE person = $1 AND channel = $2 \
                 AND counted_at > $3",
            )
            .bind(&person)
            .bind(channel)
            .bind(held_at)
            .fetch_one(&mut *tx)
            .await
            .map_err(store_error)?;
            if let Some(at) = gathered_by {
                return Ok(Budget::Covered { at });
            }
        }
        let (counted, oldest): (i64, Option<OffsetDateTime>) = sqlx::query_as(
            "SELECT COUNT(*), MIN(counted_at) FROM outbox WHERE person = $1 AND channel = $2 \
             AND counted_at > $3",
        )
        .bind(&person)
        .bind(channel)
        .bind(now - window)
        .fetch_one(&mut *tx)
        .await
        .map_err(store_error)?;
        if counted >= i64::from(rule.per_window) {
            sqlx::query("UPDATE outbox SET held_at = COALESCE(held_at, $1) WHERE id = $2")
                .bind(now)
                .bind(message.id)
                .execute(&mut *tx)
                .await
                .map_err(store_error)?;
            tx.commit().await.map_err(store_error)?;
            let until = oldest.unwrap_or(now) + window;
            return Ok(Budget::Spent { until });
        }
        // The held messages of still pending decisions this one now stands for.
        let waiting: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM outbox o JOIN decisions d ON d.id = o.decision_id \
             WHERE o.person = $1 AND o.channel = $2 AND o.held_at IS NOT NULL \
             AND o.status = 'pending' AND o.id <> $3 AND d.status = 'pending'",
        )
        .bind(&person)
        .bind(channel)
        .bind(message.id)
        .fetch_one(&mut *tx)
        .await
        .map_err(store_error)?;
        sqlx::query(
            "UPDATE outbox SET counted_at = $1, \
             payload = CASE WHEN $2 > 0 THEN jsonb_set(payload, '{waiting}', to_jsonb($2)) \
             ELSE payload END WHERE id = $3",
        )
        .bind(now)
        .bind(waiting)
        .bind(message.id)
        .execute(&mut *tx)
        .await
        .map_err(store_error)?;
        tx.commit().await.map_err(store_error)?;
        Ok(Budget::Granted {
            waiting: u64::try_from(waiting).unwrap_or(0),
        })
    }
}
