//! The inbox an API key opens, read in batches.

use async_trait::async_trait;

use super::PgStore;
use crate::domain::inbox::Inbox;
use crate::storage::{KeyedInboxes, StoreError};

#[async_trait]
impl KeyedInboxes for PgStore {
    /// Read in batches (key_lookups.rs).
    async fn inbox_for_key(&self, key_hash: &str) -> Result<Option<Inbox>, StoreError> {
        self.key_lookups.inbox_for_key(key_hash).await
    }
}
