//! Inboxes, their API keys, and server-wide settings.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::inbox::{Inbox, InboxChannels};
use crate::storage::rows::{
    At, Id, InboxRow, KeyRow, store_error, store_error_or, to_ms_precision,
};
use crate::storage::{Inboxes, KeyListing, KeyRef, KeysToRevoke, StoreError};

for_both_stores! {
    #[async_trait]
    impl Inboxes for Backend {
        /// Read back on the writer: the value is the one just stored, or another's before it.
        async fn setting_or_init(&self, name: &str, candidate: &str) -> Result<String, StoreError> {
            sqlx::query(
                "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
            )
            .bind(name)
            .bind(candidate)
            .execute(self.writes())
            .await
            .map_err(store_error)?;
            sqlx::query_scalar("SELECT value FROM settings WHERE name = $1")
                .bind(name)
                .fetch_one(self.writes())
                .await
                .map_err(store_error)
        }

        /// Read on the writer, so a setting just put is seen.
        async fn setting(&self, name: &str) -> Result<Option<String>, StoreError> {
            sqlx::query_scalar("SELECT value FROM settings WHERE name = $1")
                .bind(name)
                .fetch_optional(self.writes())
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
            .execute(self.writes())
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
            sqlx::query(
                "INSERT INTO inboxes (id, name, email, created_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(Id(inbox.id))
            .bind(name)
            .bind(email)
            .bind(At(inbox.created_at))
            .execute(self.writes())
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
            .fetch_optional(self.reads())
            .await
            .map(|r| r.map(Inbox::from))
            .map_err(store_error)
        }

        async fn inbox_by_id(&self, inbox: Uuid) -> Result<Option<Inbox>, StoreError> {
            sqlx::query_as::<_, InboxRow>(concat!(
                "SELECT ",
                inbox_columns!(),
                " FROM inboxes i WHERE i.id = $1"
            ))
            .bind(Id(inbox))
            .fetch_optional(self.reads())
            .await
            .map(|r| r.map(Inbox::from))
            .map_err(store_error)
        }

        async fn count_inboxes(&self) -> Result<i64, StoreError> {
            sqlx::query_scalar("SELECT COUNT(*) FROM inboxes")
                .fetch_one(self.reads())
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
            .bind(Id(key_id))
            .bind(Id(inbox_id))
            .bind(key_hash)
            .bind(urgent)
            .bind(At(to_ms_precision(now)))
            .execute(self.writes())
            .await
            .map_err(store_error)?;
            Ok(key_id)
        }

        async fn revoke_api_keys(
            &self,
            which: KeysToRevoke<'_>,
            now: OffsetDateTime,
        ) -> Result<u64, StoreError> {
            let query = match which {
                KeysToRevoke::Hash(hash) => sqlx::query(
                    "UPDATE api_keys SET revoked_at = $1 WHERE key_hash = $2 \
                     AND revoked_at IS NULL",
                )
                .bind(At(to_ms_precision(now)))
                .bind(hash.to_owned()),
                KeysToRevoke::AllOf(inbox) => sqlx::query(
                    "UPDATE api_keys SET revoked_at = $1 WHERE inbox_id = $2 \
                     AND revoked_at IS NULL",
                )
                .bind(At(to_ms_precision(now)))
                .bind(Id(inbox)),
            };
            query
                .execute(self.writes())
                .await
                .map(|r| r.rows_affected())
                .map_err(store_error)
        }

        async fn api_keys(&self, inbox_id: Uuid) -> Result<Vec<KeyListing>, StoreError> {
            let rows = sqlx::query_as::<_, KeyRow>(
                "SELECT id, created_at, revoked_at, urgent FROM api_keys WHERE inbox_id = $1 \
                 ORDER BY created_at, id",
            )
            .bind(Id(inbox_id))
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?;
            Ok(rows.into_iter().map(KeyListing::from).collect())
        }

        async fn set_key_urgent(
            &self,
            which: KeyRef<'_>,
            urgent: bool,
        ) -> Result<bool, StoreError> {
            let query = match which {
                KeyRef::Id(key) => sqlx::query(
                    "UPDATE api_keys SET urgent = $1 WHERE id = $2 AND revoked_at IS NULL",
                )
                .bind(urgent)
                .bind(Id(key)),
                KeyRef::Hash(hash) => sqlx::query(
                    "UPDATE api_keys SET urgent = $1 WHERE key_hash = $2 AND revoked_at IS NULL",
                )
                .bind(urgent)
                .bind(hash.to_owned()),
            };
            let updated = query
                .execute(self.writes())
                .await
                .map_err(store_error)?
                .rows_affected();
            Ok(updated > 0)
        }
    }
}
