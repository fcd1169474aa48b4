//! The calls a standing allowance let through (`domain::allowance::uses`): events of the
//! decision that made it, found by their `allowance_id` (migration 0018).

use async_trait::async_trait;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::EventKind;
use crate::domain::allowance::uses::{AllowanceUse, UsedCall};
use crate::storage::rows::{At, Id, UseRow, store_error, to_ms_precision};
use crate::storage::{AllowanceUses, StoreError};

for_both_stores! {
    #[async_trait]
    impl AllowanceUses for Backend {
        async fn record_allowance_use(
            &self,
            inbox_id: Uuid,
            which: Uuid,
            call: &UsedCall,
            now: OffsetDateTime,
        ) -> Result<AllowanceUse, StoreError> {
            // One statement: the allowance counts when the use is written, or nothing is; a
            // revoke committed first leaves no row to write from.
            let row: Option<UseRow> = sqlx::query_as(
                "INSERT INTO decision_events (decision_id, at, kind, detail, allowance_id) \
                 SELECT decision_id, $1, $2, $3, id FROM allowances \
                 WHERE inbox_id = $4 AND id = $5 AND until > $1 \
                 RETURNING id, allowance_id, decision_id, at, detail",
            )
            .bind(At(to_ms_precision(now)))
            .bind(EventKind::AllowanceUsed)
            .bind(Json(call.detail(which)))
            .bind(Id(inbox_id))
            .bind(Id(which))
            .fetch_optional(self.writes())
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
                "SELECT e.id, e.allowance_id, e.decision_id, e.at, e.detail \
                 FROM decision_events e JOIN decisions d ON d.id = e.decision_id \
                 WHERE e.allowance_id = $1 AND e.id > $2 AND d.inbox_id = $3 \
                 ORDER BY e.id LIMIT $4",
            )
            .bind(Id(which))
            .bind(after)
            .bind(Id(inbox_id))
            .bind(i64::from(limit))
            .fetch_all(self.reads())
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
            // The stores pass a list of ids each their own way: the inherent
            // `allowance_use_counts` in `sqlite/allowance_uses.rs` and `postgres/allowance_uses.rs`.
            Backend::allowance_use_counts(self, inbox_id, ids).await
        }
    }
}
