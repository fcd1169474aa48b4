//! The inbox an API key opens, read on the request's thread where the store has readers.

use async_trait::async_trait;

use super::{SqliteStore, readers};
use crate::domain::inbox::Inbox;
use crate::storage::rows::{KeyedInboxRow, store_error};
use crate::storage::{KeyedInboxes, StoreError};

#[async_trait]
impl KeyedInboxes for SqliteStore {
    async fn inbox_for_key(&self, key_hash: &str) -> Result<Option<Inbox>, StoreError> {
        const SQL: &str = concat!(
            "SELECT ",
            inbox_columns!(),
            ", k.id AS key_id, k.urgent AS key_urgent \
             FROM api_keys k JOIN inboxes i ON i.id = k.inbox_id \
             WHERE k.key_hash = ? AND k.revoked_at IS NULL"
        );
        if let Some(readers) = &self.readers {
            return readers.read_optional(SQL, [key_hash], readers::keyed_inbox);
        }
        let found = sqlx::query_as::<_, KeyedInboxRow>(SQL)
            .bind(key_hash)
            .fetch_optional(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(found.map(Inbox::from))
    }
}
