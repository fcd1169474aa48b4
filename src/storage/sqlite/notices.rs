//! The notices to a person that are about no decision (a passkey added to them).

use async_trait::async_trait;
use time::OffsetDateTime;

use super::SqliteStore;
use super::outbox::insert_notices;
use crate::domain::outbox::NewMessage;
use crate::storage::rows::{self, millis, store_error};
use crate::storage::{Notices, StoreError};

#[async_trait]
impl Notices for SqliteStore {
    async fn enqueue_notices(
        &self,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "DELETE FROM outbox WHERE decision_id IS NULL AND status <> 'pending' AND created_at < ?",
        )
        .bind(millis(now - rows::NOTICE_KEPT))
        .execute(&mut *tx)
        .await
        .map_err(store_error)?;
        insert_notices(&mut tx, messages, now).await?;
        tx.commit().await.map_err(store_error)
    }
}
