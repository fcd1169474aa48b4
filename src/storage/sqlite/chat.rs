//! The chats' messages (`domain::chat`) and the inbound requests already taken.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::SqliteStore;
use super::rows::id;
use crate::domain::chat::ChatPost;
use crate::domain::outbox::Channel;
use crate::storage::rows::{PostRow, SEEN_KEPT, millis, store_error};
use crate::storage::{Chat, StoreError};

#[async_trait]
impl Chat for SqliteStore {
    async fn record_chat_post(
        &self,
        post: &ChatPost,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO chat_posts (channel, conversation, message, decision_id, person_id, \
             created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(post.channel.as_str())
        .bind(&post.conversation)
        .bind(&post.message)
        .bind(id(post.decision))
        .bind(id(post.person))
        .bind(millis(now))
        .execute(&self.writer)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn chat_posts(&self, decision: Uuid) -> Result<Vec<ChatPost>, StoreError> {
        sqlx::query_as::<_, PostRow>(
            "SELECT channel, conversation, message, decision_id, person_id FROM chat_posts \
             WHERE decision_id = ? ORDER BY created_at",
        )
        .bind(id(decision))
        .fetch_all(&self.pool)
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
             WHERE channel = ? AND conversation = ? AND message = ?",
        )
        .bind(channel.as_str())
        .bind(conversation)
        .bind(message)
        .fetch_optional(&self.pool)
        .await
        .map_err(store_error)?
        .map(ChatPost::try_from)
        .transpose()
    }

    async fn first_seen(&self, key: &str, now: OffsetDateTime) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM chat_seen WHERE at < ?")
            .bind(millis(now - SEEN_KEPT))
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
        let added =
            sqlx::query("INSERT INTO chat_seen (key, at) VALUES (?, ?) ON CONFLICT DO NOTHING")
                .bind(key)
                .bind(millis(now))
                .execute(&mut *tx)
                .await
                .map_err(store_error)?
                .rows_affected();
        tx.commit().await.map_err(store_error)?;
        Ok(added == 1)
    }
}
