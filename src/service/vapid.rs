//! The server's VAPID key pair (RFC 8292): made on first use and kept in the database, so
//! every replica signs Web Push requests with the same key and subscriptions survive restarts.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use web_push_native::jwt_simple::prelude::{
    Claims, ECDSAP256KeyPairLike, ECDSAP256PublicKeyLike, ES256KeyPair,
};

use super::Service;
use crate::storage::{Store, StoreError};

/// The setting that holds the VAPID private key (the P-256 scalar, base64url).
pub const VAPID_SETTING: &str = "vapid_private_key";

/// How long a VAPID token is valid; RFC 8292 allows at most 24 hours.
const JWT_VALIDITY: Duration = Duration::from_secs(12 * 60 * 60);

/// The server's VAPID key pair.
pub struct VapidKey {
    pair: ES256KeyPair,
    /// The uncompressed public point, base64url: what `applicationServerKey` takes.
    public: String,
}

impl VapidKey {
    pub fn from_stored(stored: &str) -> Result<Self, StoreError> {
        let malformed = || StoreError::Other("the stored VAPID private key is malformed".into());
        let raw = URL_SAFE_NO_PAD
            .decode(stored.trim())
            .map_err(|_| malformed())?;
        let pair = ES256KeyPair::from_bytes(&raw).map_err(|_| malformed())?;
        let public = URL_SAFE_NO_PAD.encode(pair.public_key().public_key().to_bytes_uncompressed());
        Ok(Self { pair, public })
    }

    /// The public key, base64url of the uncompressed point.
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// `Authorization: vapid t=…, k=…` for a push service at `origin`.
    pub fn authorization(&self, origin: &str, subject: &str) -> Result<String, String> {
        let claims = Claims::create(JWT_VALIDITY.into())
            .with_audience(origin)
            .with_subject(subject);
        let token = self
            .pair
            .sign(claims)
            .map_err(|e| format!("could not sign the VAPID token: {e}"))?;
        Ok(format!("vapid t={token}, k={}", self.public))
    }
}

/// The server's VAPID key pair, made and stored on first use.
async fn vapid_key(store: &dyn Store) -> Result<VapidKey, StoreError> {
    let candidate = URL_SAFE_NO_PAD.encode(ES256KeyPair::generate().to_bytes());
    let stored = store.setting_or_init(VAPID_SETTING, &candidate).await?;
    VapidKey::from_stored(&stored)
}

impl Service {
    /// The server's VAPID key pair, read (or made) once per process.
    pub async fn vapid_key(&self) -> Result<&VapidKey, StoreError> {
        self.inner
            .vapid
            .get_or_try_init(|| vapid_key(self.store().as_ref()))
            .await
    }

    /// The Web Push application server key the feed page subscribes with.
    pub async fn vapid_public_key(&self) -> Result<String, StoreError> {
        Ok(self.vapid_key().await?.public_key().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_key_gives_the_same_public_key_back() {
        let stored = URL_SAFE_NO_PAD.encode(ES256KeyPair::generate().to_bytes());
        let a = VapidKey::from_stored(&stored).unwrap();
        let b = VapidKey::from_stored(&stored).unwrap();
        assert_eq!(a.public_key(), b.public_key());
        assert_eq!(URL_SAFE_NO_PAD.decode(a.public_key()).unwrap().len(), 65);
        assert!(VapidKey::from_stored("not a key").is_err());
    }
}
