//! A local push service that records every request, and the checks of what it received.

use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use p256::ecdsa::signature::Verifier;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::common::receiver::{Receiver, Recorded, Reply};

/// A push service on 127.0.0.1:0 that records every request and answers 201, or the status
/// a case sets.
pub struct PushService {
    pub endpoint: String,
    pub receiver: Receiver,
}

impl PushService {
    pub async fn start() -> PushService {
        let receiver = Receiver::start(Reply::Text).await;
        receiver.answer_from_now_with(201);
        PushService {
            endpoint: format!("{}/push/{}", receiver.base, Uuid::new_v4().simple()),
            receiver,
        }
    }

    pub fn origin(&self) -> String {
        let u = url::Url::parse(&self.endpoint).unwrap();
        u.origin().ascii_serialization()
    }

    pub fn answer_with(&self, status: u16) {
        self.receiver.answer_from_now_with(status);
    }

    pub async fn next(&mut self) -> Recorded {
        self.receiver.next().await
    }
}

pub fn header<'a>(h: &'a HeaderMap, name: &str) -> &'a str {
    h.get(name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .to_str()
        .unwrap()
}

/// Checks `Authorization: vapid t=<jwt>, k=<key>`: `k` is the server's public key, the
/// JWT is ES256-signed by it, for `aud`, not yet expired and at most 24 h long.
pub fn check_vapid(h: &HeaderMap, server_key: &str, aud: &str, subject: &str) {
    let value = header(h, "authorization");
    let rest = value.strip_prefix("vapid ").expect("the vapid scheme");
    let mut t = None;
    let mut k = None;
    for part in rest.split(',') {
        let part = part.trim();
        if let Some(v) = part.strip_prefix("t=") {
            t = Some(v);
        } else if let Some(v) = part.strip_prefix("k=") {
            k = Some(v);
        }
    }
    let (t, k) = (t.expect("t="), k.expect("k="));
    assert_eq!(k, server_key, "k is the key the browser subscribed with");

    let parts: Vec<&str> = t.split('.').collect();
    assert_eq!(parts.len(), 3, "a JWS compact token");
    let jose: Value = serde_json::from_slice(&B64.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(jose["alg"], "ES256");
    let claims: Value = serde_json::from_slice(&B64.decode(parts[1]).unwrap()).unwrap();
    let signature = p256::ecdsa::Signature::from_slice(&B64.decode(parts[2]).unwrap()).unwrap();
    let verifier = p256::ecdsa::VerifyingKey::from_sec1_bytes(&B64.decode(k).unwrap()).unwrap();
    verifier
        .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
        .expect("the JWT's signature verifies with the server's public key");

    assert_eq!(claims["aud"], aud, "aud is the push service's origin");
    assert_eq!(claims["sub"], subject);
    let now = OffsetDateTime::now_utc().unix_timestamp();
    let exp = claims["exp"].as_i64().expect("exp");
    assert!(exp > now, "exp is in the future");
    assert!(exp <= now + 24 * 3600, "exp is at most 24 h away");
}
