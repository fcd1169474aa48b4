//! The browser's side of a subscription, and the test's own RFC 8291/8188 decryption of
//! what it is sent.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes128Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use hkdf::Hkdf;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use rand::RngCore;
use sayso::domain::inbox::PushSubscription;
use serde_json::{Value, json};
use sha2::Sha256;

/// A browser's side of a subscription: its key pair and auth secret.
pub struct Browser {
    secret: p256::SecretKey,
    auth: [u8; 16],
}

impl Browser {
    pub fn new() -> Self {
        let mut auth = [0u8; 16];
        rand::rng().fill_bytes(&mut auth);
        let secret = loop {
            let mut raw = [0u8; 32];
            rand::rng().fill_bytes(&mut raw);
            if let Ok(k) = p256::SecretKey::from_slice(&raw) {
                break k;
            }
        };
        Browser { secret, auth }
    }

    pub fn public_bytes(&self) -> Vec<u8> {
        self.secret
            .public_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    /// What `PushSubscription.toJSON()` gives.
    pub fn subscription_json(&self, endpoint: &str) -> Value {
        json!({
            "endpoint": endpoint,
            "expirationTime": null,
            "keys": {"p256dh": B64.encode(self.public_bytes()), "auth": B64.encode(self.auth)},
        })
    }

    pub fn subscription(&self, endpoint: &str) -> PushSubscription {
        PushSubscription {
            endpoint: endpoint.to_string(),
            p256dh: B64.encode(self.public_bytes()),
            auth: B64.encode(self.auth),
        }
    }

    /// Decrypts an `aes128gcm` push body; panics unless it is for this browser.
    pub fn decrypt(&self, body: &[u8]) -> Vec<u8> {
        self.try_decrypt(body)
            .expect("the record decrypts and authenticates")
    }

    /// Decrypts an `aes128gcm` push body (RFC 8291 key derivation, RFC 8188 framing);
    /// `None` when the record does not authenticate with this browser's keys.
    pub fn try_decrypt(&self, body: &[u8]) -> Option<Vec<u8>> {
        // Header: salt (16) ‖ record size (4) ‖ key id length (1) ‖ key id (the sender's
        // ephemeral public key, 65 bytes).
        assert!(body.len() > 21, "body too short for the aes128gcm header");
        let salt = &body[..16];
        let rs = u32::from_be_bytes(body[16..20].try_into().unwrap()) as usize;
        let idlen = body[20] as usize;
        assert_eq!(
            idlen, 65,
            "the key id is the sender's uncompressed public key"
        );
        let as_public_bytes = &body[21..21 + idlen];
        let ciphertext = &body[21 + idlen..];
        assert!(ciphertext.len() <= rs, "one record only");

        let as_public = p256::PublicKey::from_sec1_bytes(as_public_bytes).unwrap();
        let shared =
            p256::ecdh::diffie_hellman(self.secret.to_nonzero_scalar(), as_public.as_affine());

        // RFC 8291 §3.3: IKM from the ECDH secret, keyed by the auth secret.
        let mut key_info = b"WebPush: info\0".to_vec();
        key_info.extend_from_slice(&self.public_bytes());
        key_info.extend_from_slice(as_public_bytes);
        let mut ikm = [0u8; 32];
        Hkdf::<Sha256>::new(Some(&self.auth), shared.raw_secret_bytes())
            .expand(&key_info, &mut ikm)
            .unwrap();

        // RFC 8188 §2.2–2.3: content key and nonce from the salt.
        let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
        let mut cek = [0u8; 16];
        prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
            .unwrap();
        let mut nonce = [0u8; 12];
        prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
            .unwrap();

        // The first (and only) record: sequence number 0, so the nonce is used as is.
        let plain = Aes128Gcm::new_from_slice(&cek)
            .unwrap()
            .decrypt(Nonce::from_slice(&nonce), ciphertext)
            .ok()?;
        // Padding: the data, then the last-record delimiter 0x02, then zeros.
        let end = plain.iter().rposition(|&b| b != 0).expect("a delimiter");
        assert_eq!(
            plain[end], 2,
            "the last record ends with the 0x02 delimiter"
        );
        Some(plain[..end].to_vec())
    }
}
