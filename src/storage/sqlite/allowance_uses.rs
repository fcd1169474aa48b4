//! Counting an allowance's uses on SQLite, its ids in a JSON array; the rest of
//! `AllowanceUses` is in `sql/allowance_uses.rs`.

use uuid::Uuid;

use super::SqliteStore;
use super::events::id_array;
use super::rows::id;
use crate::storage::StoreError;
use crate::storage::rows::{Id, store_error};

impl SqliteStore {
    /// `AllowanceUses::allowance_use_counts`, for a list of ids that is not empty.
    pub(in crate::storage) async fn allowance_use_counts(
        &self,
        inbox_id: Uuid,
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, u64)>, StoreError> {
        let rows: Vec<(Id, i64)> = sqlx::query_as(
            "SELECT e.allowance_id, count(*) FROM decision_events e \
             JOIN decisions d ON d.id = e.decision_id \
             WHERE e.allowance_id IN (SELECT value FROM json_each(?)) AND d.inbox_id = ? \
             GROUP BY e.allowance_id",
        )
        .bind(id_array(ids))
        .bind(id(inbox_id))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|(a, n)| (a.0, n.max(0) as u64))
            .collect())
    }
}
