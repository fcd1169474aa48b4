//! Where an inbox's notifications go: its channels and its browsers' push subscriptions.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::SqliteStore;
use super::rows::id;
use crate::domain::inbox::{InboxChannels, PushSubscription};
use crate::domain::people::Person;
use crate::storage::rows::{ChannelsRow, PushRow, changed_any, millis, store_error};
use crate::storage::{Channels, StoreError};

#[async_trait]
impl Channels for SqliteStore {
    async fn inbox_channels(&self, inbox_id: Uuid) -> Result<InboxChannels, StoreError> {
        let row = sqlx::query_as::<_, ChannelsRow>(
            "SELECT email, ntfy_url, ntfy_token, webhook_secret FROM inboxes WHERE id = ?",
        )
        .bind(id(inbox_id))
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?
        .ok_or(StoreError::NotFound)?;
        Ok(row.into())
    }

    async fn set_inbox_channels(
        &self,
        inbox_id: Uuid,
        channels: &InboxChannels,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE inboxes SET email = ?, ntfy_url = ?, ntfy_token = ?, webhook_secret = ? \
             WHERE id = ?",
        )
        .bind(&channels.email)
        .bind(&channels.ntfy_url)
        .bind(&channels.ntfy_token)
        .bind(&channels.webhook_secret)
        .bind(id(inbox_id))
        .execute(&self.writer)
        .await
        .map_err(store_error)
        .and_then(|r| changed_any(r.rows_affected()))
    }

    async fn add_push_subscription(
        &self,
        person: &Person,
        sub: &PushSubscription,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO push_subscriptions (endpoint, inbox_id, p256dh, auth, created_at, \
             person_id) VALUES (?, ?, ?, ?, ?, ?) \
             ON CONFLICT (endpoint) DO UPDATE SET inbox_id = excluded.inbox_id, \
             person_id = excluded.person_id, \
             p256dh = excluded.p256dh, auth = excluded.auth, created_at = excluded.created_at",
        )
        .bind(&sub.endpoint)
        .bind(id(person.inbox_id))
        .bind(&sub.p256dh)
        .bind(&sub.auth)
        .bind(millis(now))
        .bind(id(person.id))
        .execute(&self.writer)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn push_subscriptions(
        &self,
        person: &Person,
    ) -> Result<Vec<PushSubscription>, StoreError> {
        let rows = sqlx::query_as::<_, PushRow>(
            "SELECT endpoint, p256dh, auth FROM push_subscriptions \
             WHERE COALESCE(person_id, inbox_id) = ? ORDER BY created_at, endpoint",
        )
        .bind(id(person.id))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(PushSubscription::from).collect())
    }

    async fn remove_push_subscription(&self, endpoint: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM push_subscriptions WHERE endpoint = ?")
            .bind(endpoint)
            .execute(&self.writer)
            .await
            .map_err(store_error)?;
        Ok(())
    }
}
