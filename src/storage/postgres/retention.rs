//! Keeping data for a while only: old resolved decisions deleted in small batches. A copy of
//! a PostgreSQL database is `pg_dump`'s work (docs/OPERATIONS.md).

use std::path::Path;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::PgStore;
use crate::storage::rows::{store_error, to_ms_precision};
use crate::storage::{Retention, StoreError};

#[async_trait]
impl Retention for PgStore {
    async fn delete_resolved_before(
        &self,
        cutoff: OffsetDateTime,
        limit: u32,
    ) -> Result<u64, StoreError> {
        // Events, notifications, outbox messages and images go with their decision (ON DELETE
        // CASCADE). SKIP LOCKED: a row another replica is deleting right now is left to it.
        let deleted = sqlx::query(
            "DELETE FROM decisions WHERE id IN (SELECT id FROM decisions \
             WHERE resolved_at IS NOT NULL AND resolved_at < $1 ORDER BY resolved_at LIMIT $2 \
             FOR UPDATE SKIP LOCKED)",
        )
        .bind(to_ms_precision(cutoff))
        .bind(i64::from(limit))
        .execute(&self.pool)
        .await
        .map_err(store_error)?
        .rows_affected();
        Ok(deleted)
    }

    async fn backup_to(&self, _path: &Path) -> Result<(), StoreError> {
        Err(StoreError::Other(
            "sayso backup copies SQLite databases; for PostgreSQL use pg_dump, e.g. \
             pg_dump --format=custom --file=sayso.dump \"$SAYSO_DATABASE_URL\" (docs/OPERATIONS.md)"
                .into(),
        ))
    }
}
