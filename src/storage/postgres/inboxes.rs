//! Inboxes, their API keys, and server-wide settings.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::PgStore;
use crate::domain::inbox::{Inbox, InboxChannels};
use crate::storage::rows::{InboxRow, store_error, store_error_or, to_ms_precision};
use crate::storage::{Inboxes, KeysToRevoke, StoreError};

#[async_trait]
impl Inboxes for PgStore {
    async fn setting_or_init(&self, name: &str, candidate: &str) -> Result<String, StoreError> {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(candidate)
        .execute(&self.pool)
        .await
        .map_err(store_error)?;
        sqlx::query_scalar("SELECT value FROM settings WHERE name = $1")
            .bind(name)
            .fetch_one(&self.pool)
            .await
            .map_err(store_error)
    }

    async fn setting(&self, name: &str) -> Result<Option<String>, StoreError> {
        sqlx::query_scalar("SELECT value FROM settings WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .map_err(store_error)
    }

    async fn put_setting(&self, name: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES ($1, $2) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(name)
        .bind(value)
        .execute(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn create_inbox(
        &self,
        name: &str,
        email: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<Inbox, StoreError> {
        let inbox = Inbox {
            id: Uuid::now_v7(),
            name: name.to_owned(),
            created_at: to_ms_precision(now),
            channels: InboxChannels {
                email: email.map(str::to_owned),
                ..InboxChannels::default()
            },
            key: None,
        };
        sqlx::query("INSERT INTO inboxes (id, name, email, created_at) VALUES ($1, $2, $3, $4)")
            .bind(inbox.id)
            .bind(name)
            .bind(email)
            .bind(inbox.created_at)
            .execute(&self.pool)
            .await
            .map_err(|e| store_error_or(e, || format!("an inbox named {name:?} already exists")))?;
        Ok(inbox)
    }

    async fn inbox_by_name(&self, name: &str) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM inboxes i WHERE i.name = $1"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await
        .map(|r| r.map(Inbox::from))
        .map_err(store_error)
    }

    async fn inbox_by_id(&self, id: Uuid) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM inboxes i WHERE i.id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map(|r| r.map(Inbox::from))
        .map_err(store_error)
    }

    async fn count_inboxes(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT COUNT(*) FROM inboxes")
            .fetch_one(&self.pool)
            .await
            .map_err(store_error)
    }

    async fn create_api_key(
        &self,
        inbox_id: Uuid,
        key_hash: &str,
        urgent: bool,
        now: OffsetDateTime,
    ) -> Result<Uuid, StoreError> {
        let key_id = Uuid::now_v7();
        sqlx::query(
            "INSERT INTO api_keys (id, inbox_id, key_hash, urgent, created_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(key_id)
        .bind(inbox_id)
        .bind(key_hash)
        .bind(urgent)
        .bind(to_ms_precision(now))
        .execute(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(key_id)
    }

    /// Read in batches (key_lookups.rs).
    async fn inbox_for_key(&self, key_hash: &str) -> Result<Option<Inbox>, StoreError> {
        self.key_lookups.inbox_for_key(key_hash).await
    }

    async fn revoke_api_keys(
        &self,
        which: KeysToRevoke<'_>,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        let query = match which {
            KeysToRevoke::Hash(hash) => sqlx::query(
                "UPDATE api_keys SET revoked_at = $1 WHERE key_hash = $2 AND revoked_at IS NULL",
            )
            .bind(to_ms_precision(now))
            .bind(hash.to_owned()),
            KeysToRevoke::AllOf(inbox) => sqlx::query(
                "UPDATE api_keys SET revoked_at = $1 WHERE inbox_id = $2 AND revoked_at IS NULL",
            )
            .bind(to_ms_precision(now))
            .bind(inbox),
        };
        query
            .execute(&self.pool)
            .await
            .map(|r| r.rows_affected())
            .map_err(store_error)
    }
}
