//! Inboxes, their API keys, and server-wide settings.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::rows::id;
use super::{SqliteStore, readers};
use crate::domain::inbox::{Inbox, InboxChannels};
use crate::storage::rows::{
    InboxRow, KeyedInboxRow, millis, store_error, store_error_or, to_ms_precision,
};
use crate::storage::{Inboxes, KeysToRevoke, StoreError};

#[async_trait]
impl Inboxes for SqliteStore {
    async fn setting_or_init(&self, name: &str, candidate: &str) -> Result<String, StoreError> {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(candidate)
        .execute(&self.writer)
        .await
        .map_err(store_error)?;
        sqlx::query_scalar("SELECT value FROM settings WHERE name = ?")
            .bind(name)
            .fetch_one(&self.writer)
            .await
            .map_err(store_error)
    }

    async fn setting(&self, name: &str) -> Result<Option<String>, StoreError> {
        sqlx::query_scalar("SELECT value FROM settings WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.writer)
            .await
            .map_err(store_error)
    }

    async fn put_setting(&self, name: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES (?, ?) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(name)
        .bind(value)
        .execute(&self.writer)
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
        sqlx::query("INSERT INTO inboxes (id, name, email, created_at) VALUES (?, ?, ?, ?)")
            .bind(id(inbox.id))
            .bind(name)
            .bind(email)
            .bind(millis(inbox.created_at))
            .execute(&self.writer)
            .await
            .map_err(|e| store_error_or(e, || format!("an inbox named {name:?} already exists")))?;
        Ok(inbox)
    }

    async fn inbox_by_name(&self, name: &str) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM inboxes i WHERE i.name = ?"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await
        .map(|r| r.map(Inbox::from))
        .map_err(store_error)
    }

    async fn inbox_by_id(&self, inbox: Uuid) -> Result<Option<Inbox>, StoreError> {
        sqlx::query_as::<_, InboxRow>(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM inboxes i WHERE i.id = ?"
        ))
        .bind(id(inbox))
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
            "INSERT INTO api_keys (id, inbox_id, key_hash, urgent, created_at) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id(key_id))
        .bind(id(inbox_id))
        .bind(key_hash)
        .bind(urgent)
        .bind(millis(now))
        .execute(&self.writer)
        .await
        .map_err(store_error)?;
        Ok(key_id)
    }

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

    async fn revoke_api_keys(
        &self,
        which: KeysToRevoke<'_>,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        let query = match which {
            KeysToRevoke::Hash(hash) => sqlx::query(
                "UPDATE api_keys SET revoked_at = ? WHERE key_hash = ? AND revoked_at IS NULL",
            )
            .bind(millis(now))
            .bind(hash.to_owned()),
            KeysToRevoke::AllOf(inbox) => sqlx::query(
                "UPDATE api_keys SET revoked_at = ? WHERE inbox_id = ? AND revoked_at IS NULL",
            )
            .bind(millis(now))
            .bind(id(inbox).to_string()),
        };
        query
            .execute(&self.writer)
            .await
            .map(|r| r.rows_affected())
            .map_err(store_error)
    }
}
