//! Where an inbox's notifications go: its channel settings and its browsers' push
//! subscriptions.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::PgStore;
use crate::domain::inbox::{InboxChannels, PushSubscription};
use crate::domain::people::Person;
use crate::storage::rows::{ChannelsRow, PushRow, changed_any, store_error, to_ms_precision};
use crate::storage::{Channels, StoreError};

#[async_trait]
impl Channels for PgStore {
    async fn inbox_channels(&self, inbox_id: Uuid) -> Result<InboxChannels, StoreError> {
        let row = sqlx::query_as::<_, ChannelsRow>(
            "SELECT email, ntfy_url, ntfy_token, webhook_secret FROM inboxes WHERE id = $1",
        )
        .bind(inbox_id)
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
            "UPDATE inboxes SET email = $2, ntfy_url = $3, ntfy_token = $4, webhook_secret = $5 \
             WHERE id = $1",
        )
        .bind(inbox_id)
        .bind(&channels.email)
        .bind(&channels.ntfy_url)
        .bind(&channels.ntfy_token)
        .bind(&channels.webhook_secret)
        .execute(&self.pool)
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
        // A browser that subscribes again (new keys, or signed in to another inbox) replaces
        // its old subscription.
        sqlx::query(
            "INSERT INTO push_subscriptions (endpoint, inbox_id, p256dh, auth, created_at, \
             person_id) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (endpoint) DO UPDATE SET inbox_id = excluded.inbox_id, \
             person_id = excluded.person_id, \
             p256dh = excluded.p256dh, auth = excluded.auth, created_at = excluded.created_at",
        )
        .bind(&sub.endpoint)
        .bind(person.inbox_id)
        .bind(&sub.p256dh)
        .bind(&sub.auth)
        .bind(to_ms_precision(now))
        .bind(person.id)
        .execute(&self.pool)
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
             WHERE COALESCE(person_id, inbox_id) = $1 ORDER BY created_at, endpoint",
        )
        .bind(person.id)
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(PushSubscription::from).collect())
    }

    async fn remove_push_subscription(&self, endpoint: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM push_subscriptions WHERE endpoint = $1")
            .bind(endpoint)
            .execute(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(())
    }
}
