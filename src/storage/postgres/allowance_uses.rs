//! The calls a standing allowance let through (`domain::allowance::uses`): events of the
//! decision that made it, found by their `allowance_id` (migration 0018).

use async_trait::async_trait;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::PgStore;
use crate::domain::EventKind;
use crate::domain::allowance::uses::{AllowanceUse, UsedCall};
use crate::storage::rows::{UseRow, store_error, to_ms_precision};
use crate::storage::{AllowanceUses, StoreError};

#[async_trait]
impl AllowanceUses for PgStore {
    async fn record_allowance_use(
        &self,
        inbox_id: Uuid,
        which: Uuid,
        call: &UsedCall,
        now: OffsetDateTime,
    ) -> Result<AllowanceUse, StoreError> {
        // One statement: the allowance counts when the use is written, or nothing is; a revoke
        // committed first leaves no row to write from.
        let now = to_ms_precision(now);
        let row: Option<UseRow> = sqlx::query_as(
            "INSERT INTO decision_events (decision_id, at, kind, detail, allowance_id) \
             SELECT decision_id, $1, $2, $3, id FROM allowances \
             WHERE inbox_id = $4 AND id = $5 AND until > $1 \
             RETURNING id, allowance_id, decision_id, at, detail",
        )
        .bind(now)
        .bind(EventKind::AllowanceUsed)
        .bind(Json(call.detail(which)))
        .bind(inbox_id)
        .bind(which)
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?;
        AllowanceUse::try_from(row.ok_or(StoreError::NotFound)?)
    }

    async fn allowance_uses(
        &self,
        inbox_id: Uuid,
        which: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<AllowanceUse>, StoreError> {
        let rows: Vec<UseRow> = sqlx::query_as(
            "SELECT e.id, e.allowance_id, e.decision_id, e.at, e.detail FROM decision_events e \
             JOIN decisions d ON d.id = e.decision_id \
             WHERE e.allowance_id = $1 AND e.id > $2 AND d.inbox_id = $3 ORDER BY e.id LIMIT $4",
        )
        .bind(which)
        .bind(after)
        .bind(inbox_id)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        rows.into_iter().map(AllowanceUse::try_from).collect()
    }

    async fn allowance_use_counts(
        &self,
        inbox_id: Uuid,
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, u64)>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<(Uuid, i64)> = sqlx::query_as(
            "SELECT e.allowance_id, count(*) FROM decision_events e \
             JOIN decisions d ON d.id = e.decision_id \
             WHERE e.allowance_id = ANY($1) AND d.inbox_id = $2 GROUP BY e.allowance_id",
        )
        .bind(ids)
        .bind(inbox_id)
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|(a, n)| (a, n.max(0) as u64))
            .collect())
    }
}
