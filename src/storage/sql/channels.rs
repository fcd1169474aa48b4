//! Where an inbox's notifications go: its channel settings and its browsers' push
//! subscriptions.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::inbox::{InboxChannels, PushSubscription};
use crate::domain::people::Person;
use crate::storage::rows::{
    At, ChannelsRow, Id, PushRow, changed_any, store_error, to_ms_precision,
};
use crate::storage::{Channels, StoreError};

for_both_stores! {
    #[async_trait]
    impl Channels for Backend {
        async fn inbox_channels(&self, inbox_id: Uuid) -> Result<InboxChannels, StoreError> {
            let row = sqlx::query_as::<_, ChannelsRow>(
                "SELECT email, ntfy_url, ntfy_token, webhook_secret FROM inboxes WHERE id = $1",
            )
            .bind(Id(inbox_id))
            .fetch_optional(self.reads())
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
                "UPDATE inboxes SET email = $1, ntfy_url = $2, ntfy_token = $3, \
                 webhook_secret = $4 WHERE id = $5",
            )
            .bind(&channels.email)
            .bind(&channels.ntfy_url)
            .bind(&channels.ntfy_token)
            .bind(&channels.webhook_secret)
            .bind(Id(inbox_id))
            .execute(self.writes())
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
            // A browser that subscribes again (new keys, or signed in to another inbox)
            // replaces its old subscription.
            sqlx::query(
                "INSERT INTO push_subscriptions (endpoint, inbox_id, p256dh, auth, created_at, \
                 person_id) VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (endpoint) DO UPDATE SET inbox_id = excluded.inbox_id, \
                 person_id = excluded.person_id, \
                 p256dh = excluded.p256dh, auth = excluded.auth, created_at = excluded.created_at",
            )
            .bind(&sub.endpoint)
            .bind(Id(person.inbox_id))
            .bind(&sub.p256dh)
            .bind(&sub.auth)
            .bind(At(to_ms_precision(now)))
            .bind(Id(person.id))
            .execute(self.writes())
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
            .bind(Id(person.id))
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?;
            Ok(rows.into_iter().map(PushSubscription::from).collect())
        }

        async fn remove_push_subscription(&self, endpoint: &str) -> Result<(), StoreError> {
            sqlx::query("DELETE FROM push_subscriptions WHERE endpoint = $1")
                .bind(endpoint)
                .execute(self.writes())
                .await
                .map_err(store_error)?;
            Ok(())
        }
    }
}
