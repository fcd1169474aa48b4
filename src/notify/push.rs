//! Web Push (RFC 8030) to the browsers that subscribed from an inbox's feed page.
//!
//! Payloads are encrypted for each browser with RFC 8291 (`aes128gcm`, by web-push-native)
//! and signed for the push service with VAPID (RFC 8292). The VAPID key pair is made on first
//! use and kept in the database, so every replica signs with the same key and subscriptions
//! survive restarts. An `ask` or `reminder` shows a notification tagged with the decision's
//! id; `resolved` asks the service worker to close it.

use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use time::OffsetDateTime;
use tokio::sync::OnceCell;
use web_push_native::jwt_simple::prelude::{
    Claims, ECDSAP256KeyPairLike, ECDSAP256PublicKeyLike, ES256KeyPair,
};
use web_push_native::{Auth, WebPushBuilder, p256};

use super::{Channel, Delivering, Delivery};
use crate::domain::Issue;
use crate::storage::{PushSubscription, Store, StoreError};

/// The setting that holds the VAPID private key (the P-256 scalar, base64url).
pub const VAPID_SETTING: &str = "vapid_private_key";

/// How long a VAPID token is valid; RFC 8292 allows at most 24 hours.
const JWT_VALIDITY: Duration = Duration::from_secs(12 * 60 * 60);
/// The longest push services keep an undelivered message (FCM: four weeks).
const MAX_TTL: Duration = Duration::from_secs(28 * 24 * 60 * 60);
/// The least time a withdrawal is kept for a phone that is offline.
const MIN_CLOSE_TTL: Duration = Duration::from_secs(60 * 60);
/// Push services accept 4 KiB of encrypted payload; keep the text well inside it.
const MAX_BODY_CHARS: usize = 1000;

/// The server's VAPID key pair.
pub struct VapidKey {
    pair: ES256KeyPair,
    /// The uncompressed public point, base64url: what `applicationServerKey` takes.
    public: String,
}

impl VapidKey {
    fn from_stored(stored: &str) -> Result<Self, StoreError> {
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
    fn authorization(&self, origin: &str, subject: &str) -> Result<String, String> {
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
pub async fn vapid_key(store: &dyn Store) -> Result<VapidKey, StoreError> {
    let candidate = URL_SAFE_NO_PAD.encode(ES256KeyPair::generate().to_bytes());
    let stored = store.setting_or_init(VAPID_SETTING, &candidate).await?;
    VapidKey::from_stored(&stored)
}

/// The VAPID public key browsers subscribe with (base64url of the uncompressed point).
pub async fn vapid_public_key(store: &dyn Store) -> Result<String, StoreError> {
    Ok(vapid_key(store).await?.public)
}

/// Checks a subscription as a browser's `PushSubscription.toJSON()` gives it:
/// `{"endpoint": "https://…", "keys": {"p256dh": "…", "auth": "…"}}`. The endpoint must be
/// https (http only for a loopback host); p256dh is a 65-byte uncompressed P-256 point and
/// auth a 16-byte secret, both base64url.
pub fn parse_subscription(v: &Value) -> Result<PushSubscription, Vec<Issue>> {
    let mut issues = Vec::new();
    let mut issue = |path: &str, message: &str| {
        issues.push(Issue {
            path: path.into(),
            message: message.into(),
        })
    };
    if !v.is_object() {
        issue(
            "",
            "expected {\"endpoint\": \"https://…\", \"keys\": {\"p256dh\": \"…\", \"auth\": \"…\"}}",
        );
        return Err(issues);
    }
    let endpoint = v["endpoint"].as_str().unwrap_or_default();
    if let Err(m) = check_endpoint(endpoint) {
        issue("endpoint", &m);
    }
    let p256dh = v["keys"]["p256dh"].as_str().unwrap_or_default();
    match decode_key(p256dh) {
        Some(raw) if p256::PublicKey::from_sec1_bytes(&raw).is_ok() && raw.len() == 65 => {}
        _ => issue(
            "keys.p256dh",
            "must be the browser's P-256 public key: 65 bytes (an uncompressed point), base64url",
        ),
    }
    let auth = v["keys"]["auth"].as_str().unwrap_or_default();
    if decode_key(auth).is_none_or(|raw| raw.len() != 16) {
        issue("keys.auth", "must be the 16-byte auth secret, base64url");
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    Ok(PushSubscription {
        endpoint: endpoint.to_string(),
        p256dh: p256dh.to_string(),
        auth: auth.to_string(),
    })
}

fn check_endpoint(endpoint: &str) -> Result<url::Url, String> {
    if endpoint.is_empty() {
        return Err("the push service's URL is missing".into());
    }
    if endpoint.len() > 2048 {
        return Err("must be at most 2048 characters".into());
    }
    let url = url::Url::parse(endpoint).map_err(|e| format!("not a URL: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => return Err("must be an https URL".into()),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry a user name or password".into());
    }
    Ok(url)
}

/// Base64url, with or without padding (browsers differ), as some browsers send it.
fn decode_key(s: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(s.trim_end_matches('=')).ok()
}

/// How urgently a push service should wake the device (RFC 8030 §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urgency {
    Normal,
    High,
}

impl Urgency {
    fn as_str(self) -> &'static str {
        match self {
            Urgency::Normal => "normal",
            Urgency::High => "high",
        }
    }
}

/// What one message sends to every device.
#[derive(Debug, Clone, PartialEq)]
pub struct PushNotice {
    /// The JSON the service worker reads: `type` `show` or `close`, and the `tag`.
    pub payload: Value,
    /// How long the push service keeps it for a device that is offline.
    pub ttl: Duration,
    pub urgency: Urgency,
    /// Replaces an undelivered message with the same topic (the decision's id), so a phone
    /// that was offline gets the withdrawal instead of the stale question.
    pub topic: String,
}

impl PushNotice {
    /// The notice for a message, or why there is nothing to send.
    pub fn for_delivery(d: &Delivering<'_>, now: OffsetDateTime) -> Result<Self, String> {
        let decision = d.decision;
        let tag = decision.id.to_string();
        let topic = decision.id.simple().to_string();
        let left = duration_until(decision.expires_at, now);
        match d.message.purpose.as_str() {
            purpose @ ("ask" | "reminder") => {
                if !decision.is_open_at(now) {
                    return Err("the decision is no longer pending".into());
                }
                let mut title = decision
                    .spec
                    .project
                    .clone()
                    .unwrap_or_else(|| "sayso".into());
                if purpose == "reminder" {
                    title = format!("Reminder · {title}");
                }
                Ok(PushNotice {
                    payload: json!({
                        "type": "show",
                        "tag": tag,
                        "title": title,
                        "body": shorten(&decision.spec.question, MAX_BODY_CHARS),
                        "url": d.web_url,
                    }),
                    ttl: left.clamp(Duration::from_secs(1), MAX_TTL),
                    urgency: Urgency::High,
                    topic,
                })
            }
            "resolved" => Ok(PushNotice {
                payload: json!({"type": "close", "tag": tag}),
                ttl: left.clamp(MIN_CLOSE_TTL, MAX_TTL),
                urgency: Urgency::Normal,
                topic,
            }),
            other => Err(format!("push has nothing to send for a {other:?} message")),
        }
    }
}

fn duration_until(at: OffsetDateTime, now: OffsetDateTime) -> Duration {
    Duration::try_from(at - now).unwrap_or(Duration::ZERO)
}

fn shorten(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// How one push to one device ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushOutcome {
    /// The push service accepted it (2xx).
    Accepted,
    /// The subscription no longer exists (404/410, or it can never be used).
    Gone(String),
    /// Worth trying again later (network error, 429, 5xx).
    Retry(String),
    /// Refused for this message and will not change (another 4xx).
    Refused(String),
}

/// Web Push to every browser subscribed to the decision's inbox.
pub struct WebPushChannel {
    /// The VAPID `sub` claim: `mailto:` or the service's public URL.
    subject: String,
    client: reqwest::Client,
    key: OnceCell<VapidKey>,
}

impl WebPushChannel {
    /// `subject` is the contact push services see: a `mailto:` address or the public URL.
    pub fn new(subject: String) -> Self {
        // reqwest is built without a default TLS provider; ring is the one this build has.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("the push HTTP client builds");
        Self {
            subject,
            client,
            key: OnceCell::new(),
        }
    }

    async fn key(&self, store: &dyn Store) -> Result<&VapidKey, StoreError> {
        self.key.get_or_try_init(|| vapid_key(store)).await
    }

    /// Encrypts `notice` for one subscription, signs it, and posts it to its push service.
    pub async fn push(
        &self,
        store: &dyn Store,
        sub: &PushSubscription,
        notice: &PushNotice,
    ) -> PushOutcome {
        let key = match self.key(store).await {
            Ok(key) => key,
            Err(e) => return PushOutcome::Retry(format!("the VAPID key is unavailable: {e}")),
        };
        let request = match self.build_request(key, sub, notice) {
            Ok(r) => r,
            Err(e) => return PushOutcome::Gone(e),
        };
        let (parts, body) = request.into_parts();
        let mut headers = parts.headers;
        headers.remove(reqwest::header::CONTENT_LENGTH);
        let sent = self
            .client
            .post(&sub.endpoint)
            .headers(headers)
            .body(body)
            .send()
            .await;
        let resp = match sent {
            Ok(resp) => resp,
            Err(e) => return PushOutcome::Retry(format!("push service unreachable: {e}")),
        };
        let status = resp.status();
        let said = |resp: reqwest::Response| async move {
            let text = resp.text().await.unwrap_or_default();
            let text = shorten(text.trim(), 200);
            if text.is_empty() {
                format!("push service answered {status}")
            } else {
                format!("push service answered {status}: {text}")
            }
        };
        match status.as_u16() {
            200..=299 => PushOutcome::Accepted,
            404 | 410 => PushOutcome::Gone(said(resp).await),
            429 | 500..=599 => PushOutcome::Retry(said(resp).await),
            _ => PushOutcome::Refused(said(resp).await),
        }
    }

    /// The encrypted, signed request; an error means the subscription can never be used.
    fn build_request(
        &self,
        key: &VapidKey,
        sub: &PushSubscription,
        notice: &PushNotice,
    ) -> Result<axum::http::Request<Vec<u8>>, String> {
        let url =
            check_endpoint(&sub.endpoint).map_err(|e| format!("unusable push endpoint: {e}"))?;
        let uri: axum::http::Uri = sub
            .endpoint
            .parse()
            .map_err(|e| format!("unusable push endpoint: {e}"))?;
        let ua_public = decode_key(&sub.p256dh)
            .and_then(|raw| p256::PublicKey::from_sec1_bytes(&raw).ok())
            .ok_or("the subscription's p256dh key is malformed")?;
        let auth = decode_key(&sub.auth)
            .filter(|raw| raw.len() == 16)
            .map(|raw| Auth::clone_from_slice(&raw))
            .ok_or("the subscription's auth secret is malformed")?;
        let body = serde_json::to_vec(&notice.payload).map_err(|e| e.to_string())?;
        let mut request = WebPushBuilder::new(uri, ua_public, auth)
            .with_valid_duration(notice.ttl)
            .build(body)
            .map_err(|e| format!("could not encrypt the notification: {e}"))?;
        let authorization =
            key.authorization(&url.origin().ascii_serialization(), &self.subject)?;
        let h = request.headers_mut();
        let value = |s: &str| axum::http::HeaderValue::from_str(s).map_err(|e| e.to_string());
        h.insert(axum::http::header::AUTHORIZATION, value(&authorization)?);
        h.insert("urgency", value(notice.urgency.as_str())?);
        h.insert("topic", value(&notice.topic)?);
        Ok(request)
    }
}

#[async_trait]
impl Channel for WebPushChannel {
    fn name(&self) -> &'static str {
        "push"
    }

    async fn deliver(&self, d: &Delivering<'_>) -> Delivery {
        let notice = match PushNotice::for_delivery(d, OffsetDateTime::now_utc()) {
            Ok(n) => n,
            Err(why) => return Delivery::Skipped(why),
        };
        let subs = match d.store.push_subscriptions(d.inbox.id).await {
            Ok(subs) => subs,
            Err(e) => return Delivery::Retry(format!("could not read the subscriptions: {e}")),
        };
        if subs.is_empty() {
            return Delivery::Skipped("no device has subscribed to push for this inbox".into());
        }
        let (mut sent, mut gone) = (0usize, 0usize);
        let (mut retry, mut refused) = (Vec::new(), Vec::new());
        for sub in &subs {
            match self.push(d.store, sub, &notice).await {
                PushOutcome::Accepted => sent += 1,
                PushOutcome::Gone(why) => {
                    gone += 1;
                    tracing::info!(endpoint = %sub.endpoint, %why, "forgetting a push subscription");
                    if let Err(e) = d.store.remove_push_subscription(&sub.endpoint).await {
                        tracing::warn!(error = %e, "could not remove a gone push subscription");
                    }
                }
                PushOutcome::Retry(why) => retry.push(why),
                PushOutcome::Refused(why) => refused.push(why),
            }
        }
        let devices = |n: usize| if n == 1 { "device" } else { "devices" };
        if sent > 0 {
            let mut detail = format!("pushed to {sent} {}", devices(sent));
            let missed = subs.len() - sent;
            if missed > 0 {
                detail.push_str(&format!(" ({missed} not reached: {gone} gone)"));
            }
            Delivery::Sent(Some(detail))
        } else if let Some(why) = retry.first() {
            Delivery::Retry(why.clone())
        } else if let Some(why) = refused.first() {
            Delivery::Failed(why.clone())
        } else {
            Delivery::Failed(format!(
                "every subscribed device is gone ({gone} {} removed)",
                devices(gone)
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_b64(len: usize) -> String {
        URL_SAFE_NO_PAD.encode(vec![7u8; len])
    }

    fn browser_key() -> String {
        let pair = ES256KeyPair::generate();
        URL_SAFE_NO_PAD.encode(pair.public_key().public_key().to_bytes_uncompressed())
    }

    fn sub(endpoint: &str, p256dh: &str, auth: &str) -> Value {
        json!({"endpoint": endpoint, "expirationTime": null, "keys": {"p256dh": p256dh, "auth": auth}})
    }

    fn paths(r: Result<PushSubscription, Vec<Issue>>) -> Vec<String> {
        r.unwrap_err().into_iter().map(|i| i.path).collect()
    }

    #[test]
    fn a_browsers_subscription_is_accepted() {
        let p = browser_key();
        let auth = key_b64(16);
        let s =
            parse_subscription(&sub("https://fcm.googleapis.com/fcm/send/abc", &p, &auth)).unwrap();
        assert_eq!(s.endpoint, "https://fcm.googleapis.com/fcm/send/abc");
        assert_eq!((s.p256dh, s.auth), (p, auth));
    }

    #[test]
    fn plain_http_is_allowed_only_on_loopback() {
        let (p, a) = (browser_key(), key_b64(16));
        for ok in [
            "http://127.0.0.1:9/push",
            "http://localhost:8/x",
            "http://[::1]:7/",
        ] {
            assert!(parse_subscription(&sub(ok, &p, &a)).is_ok(), "{ok}");
        }
        for bad in [
            "http://push.example.com/x",
            "ftp://127.0.0.1/x",
            "javascript:alert(1)",
            "https://user:pw@push.example.com/",
            "",
        ] {
            assert_eq!(
                paths(parse_subscription(&sub(bad, &p, &a))),
                ["endpoint"],
                "{bad}"
            );
        }
    }

    #[test]
    fn keys_of_the_wrong_length_are_refused() {
        let e = "https://push.example.com/x";
        assert_eq!(
            paths(parse_subscription(&sub(e, &key_b64(64), &key_b64(15)))),
            ["keys.p256dh", "keys.auth"]
        );
        // 65 bytes, but not a point on the curve.
        assert_eq!(
            paths(parse_subscription(&sub(e, &key_b64(65), &key_b64(16)))),
            ["keys.p256dh"]
        );
        assert_eq!(
            paths(parse_subscription(&json!({"endpoint": e}))),
            ["keys.p256dh", "keys.auth"]
        );
        assert_eq!(paths(parse_subscription(&json!([1]))), [""]);
    }

    #[test]
    fn a_stored_key_gives_the_same_public_key_back() {
        let stored = URL_SAFE_NO_PAD.encode(ES256KeyPair::generate().to_bytes());
        let a = VapidKey::from_stored(&stored).unwrap();
        let b = VapidKey::from_stored(&stored).unwrap();
        assert_eq!(a.public_key(), b.public_key());
        assert_eq!(URL_SAFE_NO_PAD.decode(a.public_key()).unwrap().len(), 65);
        assert!(VapidKey::from_stored("not a key").is_err());
    }

    #[test]
    fn long_questions_are_shortened() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "abc…");
        assert_eq!(shorten("ééé", 2), "éé…");
    }
}
