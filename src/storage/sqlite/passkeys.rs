//! An inbox's passkeys, and the record of passkey challenges already answered.

use time::OffsetDateTime;
use uuid::Uuid;

use super::SqliteStore;
use super::rows::id;
use crate::domain::webauthn::StoredPasskey;
use crate::storage::StoreError;
use crate::storage::rows::{millis, store_error};

#[derive(sqlx::FromRow)]
struct PasskeyRow {
    credential_id: String,
    public_key: String,
    sign_count: i64,
}

impl From<PasskeyRow> for StoredPasskey {
    fn from(r: PasskeyRow) -> Self {
        StoredPasskey {
            credential_id: r.credential_id,
            public_key: r.public_key,
            sign_count: u32::try_from(r.sign_count).unwrap_or(u32::MAX),
        }
    }
}

pub(super) async fn passkeys(
    store: &SqliteStore,
    inbox_id: Uuid,
) -> Result<Vec<StoredPasskey>, StoreError> {
    let rows = sqlx::query_as::<_, PasskeyRow>(
        "SELECT credential_id, public_key, sign_count FROM passkeys WHERE inbox_id = ? \
         ORDER BY created_at, credential_id",
    )
    .bind(id(inbox_id))
    .fetch_all(&store.pool)
    .await
    .map_err(store_error)?;
    Ok(rows.into_iter().map(Into::into).collect())
}

pub(super) async fn add_passkey(
    store: &SqliteStore,
    inbox_id: Uuid,
    p: &StoredPasskey,
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO passkeys (credential_id, inbox_id, public_key, sign_count, created_at) \
         VALUES (?, ?, ?, ?, ?)",
    )
    .bind(&p.credential_id)
    .bind(id(inbox_id))
    .bind(&p.public_key)
    .bind(i64::from(p.sign_count))
    .bind(millis(now))
    .execute(&store.writer)
    .await
    .map_err(store_error)?;
    Ok(())
}

pub(super) async fn use_passkey(
    store: &SqliteStore,
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
    .execute(&store.writer)
    .await
    .map_err(store_error)?
    .rows_affected();
    Ok(updated == 1)
}

pub(super) async fn spend_challenge(
    store: &SqliteStore,
    challenge_hash: &str,
    expires_at: OffsetDateTime,
    now: OffsetDateTime,
) -> Result<bool, StoreError> {
    sqlx::query("DELETE FROM spent_challenges WHERE expires_at < ?")
        .bind(millis(now))
        .execute(&store.writer)
        .await
        .map_err(store_error)?;
    let inserted = sqlx::query(
        "INSERT INTO spent_challenges (challenge_hash, expires_at) VALUES (?, ?) \
         ON CONFLICT (challenge_hash) DO NOTHING",
    )
    .bind(challenge_hash)
    .bind(millis(expires_at))
    .execute(&store.writer)
    .await
    .map_err(store_error)?
    .rows_affected();
    Ok(inserted == 1)
}
