//! Keeping data for a while only, and copying it whole: old resolved decisions deleted in
//! small batches, and a consistent copy of the live database.

use std::path::Path;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::SqliteStore;
use super::create_private;
use crate::storage::rows::{millis, store_error};
use crate::storage::{Retention, StoreError};

#[async_trait]
impl Retention for SqliteStore {
    async fn delete_resolved_before(
        &self,
        cutoff: OffsetDateTime,
        limit: u32,
    ) -> Result<u64, StoreError> {
        // Events, notifications, outbox messages and images go with their decision (ON DELETE
        // CASCADE); one short transaction per batch keeps the writer free for requests.
        let mut tx = self.begin_write().await?;
        let deleted = sqlx::query(
            "DELETE FROM decisions WHERE id IN (SELECT id FROM decisions \
             WHERE resolved_at IS NOT NULL AND resolved_at < ? ORDER BY resolved_at LIMIT ?)",
        )
        .bind(millis(cutoff))
        .bind(i64::from(limit))
        .execute(&mut *tx)
        .await
        .map_err(store_error)?
        .rows_affected();
        tx.commit().await.map_err(store_error)?;
        Ok(deleted)
    }

    async fn backup_to(&self, path: &Path) -> Result<(), StoreError> {
        if path.exists() {
            return Err(StoreError::Conflict(format!(
                "{} already exists; a backup goes to a new file",
                path.display()
            )));
        }
        // Made first so the copy is private from its first byte, like the database itself;
        // VACUUM INTO fills an empty file.
        create_private(path)?;
        let target = path
            .to_str()
            .ok_or_else(|| StoreError::Other(format!("{} is not UTF-8", path.display())))?;
        // One read transaction: the copy is the database as of one moment, writers go on.
        let copied = sqlx::query("VACUUM INTO ?")
            .bind(target)
            .execute(&self.pool)
            .await;
        if let Err(e) = copied {
            let _ = std::fs::remove_file(path);
            return Err(store_error(e));
        }
        Ok(())
    }
}
