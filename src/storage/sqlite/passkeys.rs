//! A person's passkeys, the record of passkey challenges already answered, and the notices
//! to a person that are about no decision (a passkey added to them).

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::SqliteStore;
use super::outbox::insert_notices;
use super::rows::id;
use crate::domain::outbox::NewMessage;
use crate::domain::people::Person;
use crate::domain::webauthn::StoredPasskey;
use crate::storage::rows::{self, PasskeyRow, millis, store_error};
use crate::storage::{Passkeys, StoreError};

#[async_trait]
impl Passkeys for SqliteStore {
    async fn passkeys(&self, person_id: Uuid) -> Result<Vec<StoredPasskey>, StoreError> {
        let rows = sqlx::query_as::<_, PasskeyRow>(
            "SELECT credential_id, public_key, sign_count, created_at, last_used_at, user_agent \
             FROM passkeys WHERE person_id = ? ORDER BY created_at, credential_id",
        )
        .bind(id(person_id))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn add_passkey(&self, person: &Person, p: &StoredPasskey) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO passkeys (credential_id, inbox_id, person_id, public_key, sign_count, \
             created_at, last_used_at, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&p.credential_id)
        .bind(id(person.inbox_id))
        .bind(id(person.id))
        .bind(&p.public_key)
        .bind(i64::from(p.sign_count))
        .bind(millis(p.added_at))
        .bind(p.last_used_at.map(millis))
        .bind(&p.user_agent)
        .execute(&self.writer)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn remove_passkey(
        &self,
        person_id: Uuid,
        credential_id: &str,
    ) -> Result<bool, StoreError> {
        let removed = sqlx::query("DELETE FROM passkeys WHERE person_id = ? AND credential_id = ?")
            .bind(id(person_id))
            .bind(credential_id)
            .execute(&self.writer)
            .await
            .map_err(store_error)?
            .rows_affected();
        Ok(removed == 1)
    }

    async fn use_passkey(
        &self,
        credential_id: &str,
        from: u32,
        to: u32,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let updated = sqlx::query(
            "UPDATE passkeys SET sign_count = ?, last_used_at = ? \
             WHERE credential_id = ? AND sign_count = ?",
        )
        .bind(i64::from(to))
        .bind(millis(now))
        .bind(credential_id)
        .bind(i64::from(from))
        .execute(&self.writer)
        .await
        .map_err(store_error)?
        .rows_affected();
        Ok(updated == 1)
    }

    async fn spend_challenge(
        &self,
        challenge_hash: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        sqlx::query("DELETE FROM spent_challenges WHERE expires_at < ?")
            .bind(millis(now))
            .execute(&self.writer)
            .await
            .map_err(store_error)?;
        let inserted = sqlx::query(
            "INSERT INTO spent_challenges (challenge_hash, expires_at) VALUES (?, ?) \
             ON CONFLICT (challenge_hash) DO NOTHING",
        )
        .bind(challenge_hash)
        .bind(millis(expires_at))
        .execute(&self.writer)
        .await
        .map_err(store_error)?
        .rows_affected();
        Ok(inserted == 1)
    }

    async fn enqueue_notices(
        &self,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "DELETE FROM outbox WHERE decision_id IS NULL AND status <> 'pending' AND created_at < ?",
        )
        .bind(millis(now - rows::NOTICE_KEPT))
        .execute(&mut *tx)
        .await
        .map_err(store_error)?;
        insert_notices(&mut tx, messages, now).await?;
        tx.commit().await.map_err(store_error)
    }
}
