//! The chats' messages (`domain::chat`) and the inbound requests already taken.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::chat::ChatPost;
use crate::domain::outbox::Channel;
use crate::storage::rows::{At, Id, PostRow, SEEN_KEPT, store_error};
use crate::storage::{Chat, StoreError};

for_both_stores! {
    #[async_trait]
    impl Chat for Backend {
        async fn record_chat_post(
            &self,
            post: &ChatPost,
            now: OffsetDateTime,
        ) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO chat_posts (channel, conversation, message, decision_id, person_id, \
                 created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            )
            .bind(post.channel.as_str())
            .bind(&post.conversation)
            .bind(&post.message)
            .bind(Id(post.decision))
            .bind(Id(post.person))
            .bind(At(now))
            .execute(self.writes())
            .await
            .map_err(store_error)?;
            Ok(())
        }

        async fn chat_posts(&self, decision: Uuid) -> Result<Vec<ChatPost>, StoreError> {
            sqlx::query_as::<_, PostRow>(
                "SELECT channel, conversation, message, decision_id, person_id FROM chat_posts \
                 WHERE decision_id = $1 ORDER BY created_at",
            )
            .bind(Id(decision))
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?
            .into_iter()
            .map(ChatPost::try_from)
            .collect()
        }

        async fn chat_post(
            &self,
            channel: Channel,
            conversation: &str,
            message: &str,
        ) -> Result<Option<ChatPost>, StoreError> {
            sqlx::query_as::<_, PostRow>(
                "SELECT channel, conversation, message, decision_id, person_id FROM chat_posts \
                 WHERE channel = $1 AND conversation = $2 AND message = $3",
            )
            .bind(channel.as_str())
            .bind(conversation)
            .bind(message)
            .fetch_optional(self.reads())
            .await
            .map_err(store_error)?
            .map(ChatPost::try_from)
            .transpose()
        }

        /// Forgets the keys older than `SEEN_KEPT` and adds this one, in one transaction (one
        /// commit on SQLite's writer).
        async fn first_seen(&self, key: &str, now: OffsetDateTime) -> Result<bool, StoreError> {
            let mut tx = self.begin_write().await?;
            sqlx::query("DELETE FROM chat_seen WHERE at < $1")
                .bind(At(now - SEEN_KEPT))
                .execute(&mut *tx)
                .await
                .map_err(store_error)?;
            let added = sqlx::query(
                "INSERT INTO chat_seen (key, at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            )
            .bind(key)
            .bind(At(now))
            .execute(&mut *tx)
            .await
            .map_err(store_error)?
            .rows_affected();
            tx.commit().await.map_err(store_error)?;
            Ok(added == 1)
        }
    }
}
