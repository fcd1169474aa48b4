//! An inbox's passkeys, and the record of passkey challenges already answered.

use time::OffsetDateTime;
use uuid::Uuid;

use super::PgStore;
use crate::domain::webauthn::StoredPasskey;
use crate::storage::StoreError;
use crate::storage::rows::{store_error, to_ms_precision};

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
    store: &PgStore,
    inbox_id: Uuid,
) -> Result<Vec<StoredPasskey>, StoreError> {
    let rows = sqlx::query_as::<_, PasskeyRow>(
        "SELECT credential_id, public_key, sign_count FROM passkeys WHERE inbox_id = $1 \
         ORDER BY created_at, credential_id",
    )
    .bind(inbox_id)
    .fetch_all(&store.pool)
    .await
    .map_err(store_error)?;
    Ok(rows.into_iter().map(Into::into).collect())
}

pub(super) async fn add_passkey(
    store: &PgStore,
    inbox_id: Uuid,
    p: &StoredPasskey,
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO passkeys (credential_id, inbox_id, public_key, sign_count, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&p.credential_id)
    .bind(inbox_id)
    .bind(&p.public_key)
    .bind(i64::from(p.sign_count))
    .bind(to_ms_precision(now))
    .execute(&store.pool)
    .await
    .map_err(store_error)?;
    Ok(())
}

pub(super) async fn use_passkey(
    store: &PgStore,
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
    .bind(to_ms_precision(now))
    .bind(credential_id)
    .bind(i64::from(from))
    .execute(&store.pool)
    .await
    .map_err(store_error)?
    .rows_affected();
    Ok(updated == 1)
}

pub(super) async fn spend_challenge(
    store: &PgStore,
    challenge_hash: &str,
    expires_at: OffsetDateTime,
    now: OffsetDateTime,
) -> Result<bool, StoreError> {
    sqlx::query("DELETE FROM spent_challenges WHERE expires_at < $1")
        .bind(to_ms_precision(now))
        .execute(&store.pool)
        .await
        .map_err(store_error)?;
    let inserted = sqlx::query(
        "INSERT INTO spent_challenges (challenge_hash, expires_at) VALUES ($1, $2) \
         ON CONFLICT (challenge_hash) DO NOTHING",
    )
    .bind(challenge_hash)
    .bind(to_ms_precision(expires_at))
    .execute(&store.pool)
    .await
    .map_err(store_error)?
    .rows_affected();
    Ok(inserted == 1)
}
