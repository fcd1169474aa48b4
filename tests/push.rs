//! Web Push end to end: a browser's subscription stored through the feed's endpoint, and
//! what the push channel sends for it. A local axum server on port 0 plays the push service
//! (no real one can run here); the "browser" is a P-256 key pair and auth secret made in the
//! test, and the payload is decrypted with this file's own RFC 8291/8188 code, not with
//! the library that encrypted it.
//!
//! Tests that need the push-subscription store skip themselves, loudly, while the store
//! does not keep subscriptions yet (see `store_keeps_subscriptions`).

mod common;

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes128Gcm, Nonce};
use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use common::receiver::{Receiver, Recorded, Reply};
use common::server::{TestServer, s};
use hkdf::Hkdf;
use p256::ecdsa::signature::Verifier;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use rand::RngCore;
use reqwest::StatusCode;
use sayso::domain::Decision;
use sayso::domain::inbox::{InboxChannels, PushSubscription};
use sayso::domain::outbox::{MessageStatus, OutboxMessage, Purpose, Route};
use sayso::notify::push::{PushNotice, PushOutcome, WebPushChannel};
use sayso::notify::{Courier, Delivering, Delivery};
use sayso::storage::Store;
use serde_json::{Value, json};
use sha2::Sha256;
use time::OffsetDateTime;
use uuid::Uuid;

// ---- the browser ----------------------------------------------------------------------

/// A browser's side of a subscription: its key pair and auth secret.
struct Browser {
    secret: p256::SecretKey,
    auth: [u8; 16],
}

impl Browser {
    fn new() -> Self {
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

    fn public_bytes(&self) -> Vec<u8> {
        self.secret
            .public_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    /// What `PushSubscription.toJSON()` gives.
    fn subscription_json(&self, endpoint: &str) -> Value {
        json!({
            "endpoint": endpoint,
            "expirationTime": null,
            "keys": {"p256dh": B64.encode(self.public_bytes()), "auth": B64.encode(self.auth)},
        })
    }

    fn subscription(&self, endpoint: &str) -> PushSubscription {
        PushSubscription {
            endpoint: endpoint.to_string(),
            p256dh: B64.encode(self.public_bytes()),
            auth: B64.encode(self.auth),
        }
    }

    /// Decrypts an `aes128gcm` push body; panics unless it is for this browser.
    fn decrypt(&self, body: &[u8]) -> Vec<u8> {
        self.try_decrypt(body)
            .expect("the record decrypts and authenticates")
    }

    /// Decrypts an `aes128gcm` push body (RFC 8291 key derivation, RFC 8188 framing);
    /// `None` when the record does not authenticate with this browser's keys.
    fn try_decrypt(&self, body: &[u8]) -> Option<Vec<u8>> {
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

// ---- the push service -----------------------------------------------------------------

/// A push service on 127.0.0.1:0 that records every request and answers 201, or the status
/// a case sets.
struct PushService {
    endpoint: String,
    receiver: Receiver,
}

impl PushService {
    async fn start() -> PushService {
        let receiver = Receiver::start(Reply::Text).await;
        receiver.answer_from_now_with(201);
        PushService {
            endpoint: format!("{}/push/{}", receiver.base, Uuid::new_v4().simple()),
            receiver,
        }
    }

    fn origin(&self) -> String {
        let u = url::Url::parse(&self.endpoint).unwrap();
        u.origin().ascii_serialization()
    }

    fn answer_with(&self, status: u16) {
        self.receiver.answer_from_now_with(status);
    }

    async fn next(&mut self) -> Recorded {
        self.receiver.next().await
    }
}

// ---- checks ---------------------------------------------------------------------------

fn header<'a>(h: &'a HeaderMap, name: &str) -> &'a str {
    h.get(name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .to_str()
        .unwrap()
}

/// Checks `Authorization: vapid t=<jwt>, k=<key>`: `k` is the server's public key, the
/// JWT is ES256-signed by it, for `aud`, not yet expired and at most 24 h long.
fn check_vapid(h: &HeaderMap, server_key: &str, aud: &str, subject: &str) {
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

// ---- the sayso side -------------------------------------------------------------------

const SUBJECT: &str = "mailto:ops@example.com";

async fn start() -> (TestServer, common::db::SqliteTestDb) {
    let db = common::db::fresh_sqlite_url();
    (TestServer::start(&db.url).await, db)
}

async fn feed_token(srv: &TestServer) -> String {
    let inbox = srv
        .svc
        .store()
        .inbox_by_name("default")
        .await
        .unwrap()
        .unwrap();
    srv.svc.tokens().feed_token(inbox.id)
}

async fn decision(srv: &TestServer, id: &str) -> Decision {
    let id = Uuid::parse_str(id).unwrap();
    srv.svc
        .store()
        .decision(None, id)
        .await
        .unwrap()
        .expect("the decision exists")
}

fn message(d: &Decision, purpose: &str) -> OutboxMessage {
    let now = OffsetDateTime::now_utc();
    OutboxMessage {
        id: Uuid::now_v7(),
        decision_id: d.id,
        route: Route::Push,
        purpose: Purpose::parse(purpose).expect("a purpose"),
        payload: json!({}),
        status: MessageStatus::Pending,
        attempts: 1,
        created_at: now,
        give_up_at: d.expires_at,
        last_error: None,
    }
}

/// Hands one message about `d` to the channel, as the outbox worker would.
async fn deliver(
    srv: &TestServer,
    channel: &WebPushChannel,
    d: &Decision,
    purpose: &str,
) -> Delivery {
    let store = srv.svc.store();
    let view = srv.svc.view(d).await.unwrap();
    let inbox = store.inbox_by_id(d.inbox_id).await.unwrap().unwrap();
    let msg = message(d, purpose);
    let channels = InboxChannels::default();
    let web_url = srv.svc.web_url(d);
    channel
        .deliver(&Delivering {
            message: &msg,
            decision: d,
            view: &view,
            inbox: &inbox,
            channels: &channels,
            web_url: &web_url,
            public_url: &srv.base,
            outbox: &srv.svc.outbox(),
        })
        .await
}

/// The notice the channel builds for a message about `d`.
async fn notice(srv: &TestServer, d: &Decision, purpose: &str) -> PushNotice {
    let store = srv.svc.store();
    let view = srv.svc.view(d).await.unwrap();
    let inbox = store.inbox_by_id(d.inbox_id).await.unwrap().unwrap();
    let msg = message(d, purpose);
    let channels = InboxChannels::default();
    let web_url = srv.svc.web_url(d);
    PushNotice::for_delivery(
        &Delivering {
            message: &msg,
            decision: d,
            view: &view,
            inbox: &inbox,
            channels: &channels,
            web_url: &web_url,
            public_url: &srv.base,
            outbox: &srv.svc.outbox(),
        },
        OffsetDateTime::now_utc(),
    )
    .expect("something to send")
}

/// Whether this build's store keeps push subscriptions; says SKIPPED when it does not.
async fn store_keeps_subscriptions(store: &dyn Store, test: &str) -> bool {
    match store.push_subscriptions(Uuid::nil()).await {
        Ok(_) => true,
        Err(e) => {
            eprintln!("SKIPPED {test}: the store does not keep push subscriptions yet ({e})");
            false
        }
    }
}

async fn subscribe(srv: &TestServer, token: &str, body: &Value) -> (StatusCode, Value) {
    common::server::send(
        srv.client
            .post(srv.url(&format!("/inbox/{token}/push")))
            .header("sec-fetch-site", "same-origin")
            .json(body),
    )
    .await
}

// ---- what runs on every build -----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_offers_push_with_the_servers_key_and_no_inline_script() {
    let (srv, _db) = start().await;
    let token = feed_token(&srv).await;
    let resp = srv
        .client
        .get(srv.url(&format!("/inbox/{token}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let csp = resp.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    for directive in [
        "script-src 'self'",
        "connect-src 'self'",
        "worker-src 'self'",
    ] {
        assert!(csp.contains(directive), "{directive} in {csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let html = resp.text().await.unwrap();
    let key = srv.svc.vapid_public_key().await.unwrap();
    assert_eq!(B64.decode(&key).unwrap().len(), 65);
    assert!(
        html.contains(r#"<section id="push" hidden>"#),
        "hidden without JS"
    );
    assert!(html.contains(&format!(r#"data-key="{key}""#)), "{html}");
    assert!(html.contains(&format!(r#"data-url="/inbox/{token}/push""#)));
    assert!(html.contains(">Notify me on this device</button>"));
    assert!(html.contains(r#"<script src="/static/feed.js" defer></script>"#));
    assert_eq!(
        html.matches("<script").count(),
        1,
        "no other script, none inline"
    );
    // The key is made once and kept.
    assert_eq!(srv.svc.vapid_public_key().await.unwrap(), key);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_worker_is_served_from_the_root() {
    let (srv, _db) = start().await;
    for (path, ty) in [
        ("/sw.js", "text/javascript"),
        ("/static/feed.js", "text/javascript"),
        ("/manifest.webmanifest", "application/manifest+json"),
    ] {
        let resp = srv.client.get(srv.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        let got = resp.headers()["content-type"].to_str().unwrap().to_string();
        assert!(got.starts_with(ty), "{path}: {got}");
        assert!(!resp.text().await.unwrap().is_empty());
    }
    let sw = srv.client.get(srv.url("/sw.js")).send().await.unwrap();
    assert_eq!(sw.headers()["cache-control"], "no-cache");
    let js = sw.text().await.unwrap();
    for event in [
        "\"push\"",
        "\"notificationclick\"",
        "getNotifications",
        "showNotification",
    ] {
        assert!(js.contains(event), "{event}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_subscription_gets_422_naming_each_problem() {
    let (srv, _db) = start().await;
    let token = feed_token(&srv).await;
    let browser = Browser::new();
    let cases = [
        (
            browser.subscription_json("http://push.example.com/x"),
            vec!["endpoint"],
        ),
        (
            json!({"endpoint": "https://push.example.com/x",
                   "keys": {"p256dh": B64.encode([4u8; 64]), "auth": B64.encode([1u8; 15])}}),
            vec!["keys.p256dh", "keys.auth"],
        ),
        (
            json!({"endpoint": "https://push.example.com/x"}),
            vec!["keys.p256dh", "keys.auth"],
        ),
        (json!("https://push.example.com/x"), vec![""]),
    ];
    for (body, paths) in cases {
        let (status, err) = subscribe(&srv, &token, &body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {err}");
        assert_eq!(err["error"]["code"], "validation_failed");
        let got: Vec<&str> = err["error"]["details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["path"].as_str().unwrap())
            .collect();
        assert_eq!(got, paths, "{body}");
    }
    let resp = srv
        .client
        .post(srv.url(&format!("/inbox/{token}/push")))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_feed_link_gets_404_and_another_site_gets_403() {
    let (srv, _db) = start().await;
    let body = Browser::new().subscription_json("https://push.example.com/x");
    let (status, err) = subscribe(&srv, &"A".repeat(48), &body).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(err["error"]["code"], "not_found");

    let token = feed_token(&srv).await;
    let resp = srv
        .client
        .post(srv.url(&format!("/inbox/{token}/push")))
        .header("sec-fetch-site", "cross-site")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_decrypts_for_the_browser_and_carries_a_valid_vapid_token() {
    let (srv, _db) = start().await;
    let mut push = PushService::start().await;
    let browser = Browser::new();
    let h = srv
        .create(json!({"question": "Deploy to production?", "kind": "bool", "project": "api", "ttl_seconds": 3600}))
        .await;
    let d = decision(&srv, s(&h, "decision_id")).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);
    let notice = notice(&srv, &d, "ask").await;

    let out = channel
        .push(
            srv.svc.vapid_key().await.unwrap(),
            &browser.subscription(&push.endpoint),
            &notice,
        )
        .await;
    assert_eq!(out, PushOutcome::Accepted);

    let got = push.next().await;
    assert_eq!(header(&got.headers, "content-encoding"), "aes128gcm");
    assert_eq!(header(&got.headers, "urgency"), "high");
    assert_eq!(header(&got.headers, "topic"), d.id.simple().to_string());
    let ttl: u64 = header(&got.headers, "ttl").parse().unwrap();
    assert!((3500..=3600).contains(&ttl), "TTL is the time left: {ttl}");
    let server_key = srv.svc.vapid_public_key().await.unwrap();
    check_vapid(&got.headers, &server_key, &push.origin(), SUBJECT);

    let payload: Value = serde_json::from_slice(&browser.decrypt(&got.body)).unwrap();
    assert_eq!(
        payload,
        json!({
            "type": "show",
            "tag": d.id.to_string(),
            "title": "api",
            "body": "Deploy to production?",
            "url": s(&h, "web_url"),
        })
    );

    // Another browser cannot read it.
    let stranger = Browser::new();
    assert!(
        stranger.try_decrypt(&got.body).is_none(),
        "only the subscribed browser decrypts"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resolved_decision_closes_the_notification_with_the_same_tag() {
    let (srv, _db) = start().await;
    let mut push = PushService::start().await;
    let browser = Browser::new();
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let (status, _) = srv
        .answer(
            s(&h, "web_url"),
            json!({"action": "answer", "value": "yes"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let d = decision(&srv, s(&h, "decision_id")).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);

    // A reminder for a resolved decision sends nothing.
    let store = srv.svc.store();
    let view = srv.svc.view(&d).await.unwrap();
    let inbox = store.inbox_by_id(d.inbox_id).await.unwrap().unwrap();
    let msg = message(&d, "reminder");
    let channels = InboxChannels::default();
    let delivering = Delivering {
        message: &msg,
        decision: &d,
        view: &view,
        inbox: &inbox,
        channels: &channels,
        web_url: s(&h, "web_url"),
        public_url: &srv.base,
        outbox: &srv.svc.outbox(),
    };
    assert!(PushNotice::for_delivery(&delivering, OffsetDateTime::now_utc()).is_err());
    assert!(matches!(
        channel.deliver(&delivering).await,
        Delivery::Skipped(_)
    ));

    let notice = notice(&srv, &d, "resolved").await;
    let out = channel
        .push(
            srv.svc.vapid_key().await.unwrap(),
            &browser.subscription(&push.endpoint),
            &notice,
        )
        .await;
    assert_eq!(out, PushOutcome::Accepted);
    let got = push.next().await;
    assert_eq!(header(&got.headers, "urgency"), "normal");
    assert_eq!(header(&got.headers, "topic"), d.id.simple().to_string());
    assert!(header(&got.headers, "ttl").parse::<u64>().unwrap() > 0);
    let payload: Value = serde_json::from_slice(&browser.decrypt(&got.body)).unwrap();
    assert_eq!(payload, json!({"type": "close", "tag": d.id.to_string()}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_push_services_answer_decides_gone_retry_or_refused() {
    let (srv, _db) = start().await;
    let mut push = PushService::start().await;
    let browser = Browser::new();
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let d = decision(&srv, s(&h, "decision_id")).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);
    let notice = notice(&srv, &d, "ask").await;
    let sub = browser.subscription(&push.endpoint);
    let key = srv.svc.vapid_key().await.unwrap();
    for (status, expect) in [
        (410, "gone"),
        (404, "gone"),
        (429, "retry"),
        (503, "retry"),
        (400, "refused"),
        (200, "accepted"),
    ] {
        push.answer_with(status);
        let got = match channel.push(key, &sub, &notice).await {
            PushOutcome::Accepted => "accepted",
            PushOutcome::Gone(_) => "gone",
            PushOutcome::Retry(_) => "retry",
            PushOutcome::Refused(_) => "refused",
        };
        assert_eq!(got, expect, "{status}");
        push.next().await;
    }
    // Nothing listening: try again later.
    let closed = browser.subscription("http://127.0.0.1:9/push/x");
    assert!(matches!(
        channel.push(key, &closed, &notice).await,
        PushOutcome::Retry(_)
    ));
}

// ---- what needs the push-subscription store ---------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_from_the_feed_gets_every_new_decision() {
    let (srv, _db) = start().await;
    if !store_keeps_subscriptions(
        srv.svc.store().as_ref(),
        "a_subscription_from_the_feed_gets_every_new_decision",
    )
    .await
    {
        return;
    }
    let mut push = PushService::start().await;
    let browser = Browser::new();
    let token = feed_token(&srv).await;
    let (status, body) = subscribe(&srv, &token, &browser.subscription_json(&push.endpoint)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Subscribing again (the page does so on every visit) keeps one subscription.
    let (status, _) = subscribe(&srv, &token, &browser.subscription_json(&push.endpoint)).await;
    assert_eq!(status, StatusCode::CREATED);
    let inbox = srv
        .svc
        .store()
        .inbox_by_name("default")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        srv.svc.store().push_subscriptions(inbox.id).await.unwrap(),
        vec![browser.subscription(&push.endpoint)]
    );

    let h = srv
        .create(json!({"question": "Merge the PR?", "kind": "bool"}))
        .await;
    let d = decision(&srv, s(&h, "decision_id")).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);
    let out = deliver(&srv, &channel, &d, "ask").await;
    assert!(matches!(out, Delivery::Sent(_)), "{out:?}");
    let got = push.next().await;
    let server_key = srv.svc.vapid_public_key().await.unwrap();
    check_vapid(&got.headers, &server_key, &push.origin(), SUBJECT);
    assert_eq!(header(&got.headers, "content-encoding"), "aes128gcm");
    assert!(got.headers.contains_key("ttl"));
    let payload: Value = serde_json::from_slice(&browser.decrypt(&got.body)).unwrap();
    assert_eq!(payload["type"], "show");
    assert_eq!(payload["tag"], d.id.to_string());
    assert_eq!(payload["body"], "Merge the PR?");
    assert_eq!(payload["url"], s(&h, "web_url"));

    let (status, _) = srv
        .answer(s(&h, "web_url"), json!({"action": "answer", "value": "no"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let d = decision(&srv, s(&h, "decision_id")).await;
    let out = deliver(&srv, &channel, &d, "resolved").await;
    assert!(matches!(out, Delivery::Sent(_)), "{out:?}");
    let got = push.next().await;
    let payload: Value = serde_json::from_slice(&browser.decrypt(&got.body)).unwrap();
    assert_eq!(payload, json!({"type": "close", "tag": d.id.to_string()}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_the_push_service_calls_gone_is_forgotten() {
    let (srv, _db) = start().await;
    if !store_keeps_subscriptions(
        srv.svc.store().as_ref(),
        "a_subscription_the_push_service_calls_gone_is_forgotten",
    )
    .await
    {
        return;
    }
    let mut push = PushService::start().await;
    let mut kept = PushService::start().await;
    let token = feed_token(&srv).await;
    let (gone_browser, kept_browser) = (Browser::new(), Browser::new());
    for (b, ep) in [
        (&gone_browser, &push.endpoint),
        (&kept_browser, &kept.endpoint),
    ] {
        let (status, body) = subscribe(&srv, &token, &b.subscription_json(ep)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    push.answer_with(410);
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let d = decision(&srv, s(&h, "decision_id")).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);

    // One device still reached: sent; the gone one is removed.
    let out = deliver(&srv, &channel, &d, "ask").await;
    assert!(matches!(out, Delivery::Sent(_)), "{out:?}");
    push.next().await;
    kept.next().await;
    let inbox = srv
        .svc
        .store()
        .inbox_by_name("default")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        srv.svc.store().push_subscriptions(inbox.id).await.unwrap(),
        vec![kept_browser.subscription(&kept.endpoint)]
    );

    // The last device gone too: failed, and nothing left to send to.
    kept.answer_with(404);
    let out = deliver(&srv, &channel, &d, "reminder").await;
    assert!(matches!(out, Delivery::Failed(_)), "{out:?}");
    kept.next().await;
    assert!(
        srv.svc
            .store()
            .push_subscriptions(inbox.id)
            .await
            .unwrap()
            .is_empty()
    );
    let out = deliver(&srv, &channel, &d, "reminder").await;
    assert_eq!(
        out,
        Delivery::Skipped("no device has subscribed to push for this inbox".into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_push_service_is_tried_again() {
    let (srv, _db) = start().await;
    if !store_keeps_subscriptions(
        srv.svc.store().as_ref(),
        "a_busy_push_service_is_tried_again",
    )
    .await
    {
        return;
    }
    let mut push = PushService::start().await;
    let token = feed_token(&srv).await;
    let browser = Browser::new();
    let (status, _) = subscribe(&srv, &token, &browser.subscription_json(&push.endpoint)).await;
    assert_eq!(status, StatusCode::CREATED);
    push.answer_with(503);
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let d = decision(&srv, s(&h, "decision_id")).await;
    let channel = WebPushChannel::new(SUBJECT.into(), true);
    let out = deliver(&srv, &channel, &d, "ask").await;
    assert!(matches!(out, Delivery::Retry(_)), "{out:?}");
    push.next().await;
    let inbox = srv
        .svc
        .store()
        .inbox_by_name("default")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        srv.svc
            .store()
            .push_subscriptions(inbox.id)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_on_an_inner_address_is_not_called_unless_allowed() {
    let (srv, _db) = start().await;
    let push = PushService::start().await;
    let browser = Browser::new();
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let d = decision(&srv, s(&h, "decision_id")).await;
    let notice = notice(&srv, &d, "ask").await;
    let key = srv.svc.vapid_key().await.unwrap();
    let public_only = WebPushChannel::new(SUBJECT.into(), false);
    // The push service listens on 127.0.0.1, however the endpoint spells it.
    let port = url::Url::parse(&push.endpoint).unwrap().port().unwrap();
    for host in ["127.0.0.1", "127.1", "localhost", "[::ffff:7f00:1]"] {
        let sub = browser.subscription(&format!("https://{host}:{port}/push/x"));
        let PushOutcome::Refused(why) = public_only.push(key, &sub, &notice).await else {
            panic!("{host} was called");
        };
        assert!(why.contains("SAYSO_ALLOW_PRIVATE_WEBHOOKS=1"), "{why}");
    }
    assert!(
        push.receiver.requests().is_empty(),
        "the push service was called"
    );
    // Allowed, the same endpoint is called.
    let sub = browser.subscription(&push.endpoint);
    let allowing = WebPushChannel::new(SUBJECT.into(), true);
    assert_eq!(
        allowing.push(key, &sub, &notice).await,
        PushOutcome::Accepted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_naming_an_inner_address_is_refused_unless_allowed() {
    let db = common::db::fresh_sqlite_url();
    let srv = TestServer::start_public_only(&db.url).await;
    let token = feed_token(&srv).await;
    let browser = Browser::new();
    for endpoint in [
        "https://127.1/push/x",
        "https://[::ffff:7f00:1]/push/x",
        "https://10.0.0.7/push/x",
        "https://0.0.0.0/push/x",
    ] {
        let (status, err) = subscribe(&srv, &token, &browser.subscription_json(endpoint)).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{endpoint}: {err}"
        );
        assert_eq!(err["error"]["details"][0]["path"], "endpoint", "{err}");
        let message = err["error"]["details"][0]["message"].as_str().unwrap();
        assert!(
            message.contains("SAYSO_ALLOW_PRIVATE_WEBHOOKS=1"),
            "{message}"
        );
    }
    let (status, err) = subscribe(
        &srv,
        &token,
        &browser.subscription_json("https://push.example.com/x"),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{err}");
    srv.stop().await;
}
