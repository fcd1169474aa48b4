//! Counting an allowance's uses on PostgreSQL, its ids in an array; the rest of
//! `AllowanceUses` is in `sql/allowance_uses.rs`.

use uuid::Uuid;

use super::PgStore;
use crate::storage::StoreError;
use crate::storage::rows::store_error;

impl PgStore {
    /// `AllowanceUses::allowance_use_counts`, for a list of ids that is not empty.
    pub(in crate::storage) async fn allowance_use_counts(
        &self,
        inbox_id: Uuid,
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, u64)>, StoreError> {
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
