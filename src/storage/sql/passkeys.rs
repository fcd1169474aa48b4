//! A person's passkeys and the record of passkey challenges already answered.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::people::Person;
use crate::domain::webauthn::StoredPasskey;
use crate::storage::rows::{At, Id, PasskeyRow, store_error, to_ms_precision};
use crate::storage::{Passkeys, StoreError};

for_both_stores! {
    #[async_trait]
    impl Passkeys for Backend {
        async fn passkeys(&self, person_id: Uuid) -> Result<Vec<StoredPasskey>, StoreError> {
            let rows = sqlx::query_as::<_, PasskeyRow>(
                "SELECT credential_id, public_key, sign_count, created_at, last_used_at, \
                 user_agent FROM passkeys WHERE person_id = $1 ORDER BY created_at, credential_id",
            )
            .bind(Id(person_id))
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?;
            Ok(rows.into_iter().map(Into::into).collect())
        }

        async fn add_passkey(&self, person: &Person, p: &StoredPasskey) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO passkeys (credential_id, inbox_id, person_id, public_key, \
                 sign_count, created_at, last_used_at, user_agent) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&p.credential_id)
            .bind(Id(person.inbox_id))
            .bind(Id(person.id))
            .bind(&p.public_key)
            .bind(i64::from(p.sign_count))
            .bind(At(to_ms_precision(p.added_at)))
            .bind(p.last_used_at.map(|t| At(to_ms_precision(t))))
            .bind(&p.user_agent)
            .execute(self.writes())
            .await
            .map_err(store_error)?;
            Ok(())
        }

        async fn remove_passkey(
            &self,
            person_id: Uuid,
            credential_id: &str,
        ) -> Result<bool, StoreError> {
            let removed =
                sqlx::query("DELETE FROM passkeys WHERE person_id = $1 AND credential_id = $2")
                    .bind(Id(person_id))
                    .bind(credential_id)
                    .execute(self.writes())
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
                "UPDATE passkeys SET sign_count = $1, last_used_at = $2 \
                 WHERE credential_id = $3 AND sign_count = $4",
            )
            .bind(i64::from(to))
            .bind(At(to_ms_precision(now)))
            .bind(credential_id)
            .bind(i64::from(from))
            .execute(self.writes())
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
            sqlx::query("DELETE FROM spent_challenges WHERE expires_at < $1")
                .bind(At(to_ms_precision(now)))
                .execute(self.writes())
                .await
                .map_err(store_error)?;
            let inserted = sqlx::query(
                "INSERT INTO spent_challenges (challenge_hash, expires_at) VALUES ($1, $2) \
                 ON CONFLICT (challenge_hash) DO NOTHING",
            )
            .bind(challenge_hash)
            .bind(At(to_ms_precision(expires_at)))
            .execute(self.writes())
            .await
            .map_err(store_error)?
            .rows_affected();
            Ok(inserted == 1)
        }
    }
}
