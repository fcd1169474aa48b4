//! Signed webhooks against a real HTTP receiver on port 0, checked by two verifiers that share
//! no code with sayso: the Standard Webhooks reference library for Python (installed from PyPI
//! into a venv under `target/`) and a second Rust implementation written from the spec below.

mod common;

use std::path::PathBuf;

use axum::http::{HeaderMap, Method};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::outbox::{Fixture, assert_retried_or_failed, first_try};
use common::receiver::{Receiver, Recorded, Reply};
use common::server::s;
use hmac::{Hmac, Mac};
use sayso::courier::{Courier, Delivery};
use sayso::domain::Decision;
use sayso::domain::completion::Completion;
use sayso::domain::inbox::InboxChannels;
use sayso::domain::outbox::{Channel, OutboxMessage, Purpose, Route};
use sayso::notify::webhook::{WebhookChannel, generate_webhook_secret};
use sayso::service::DecisionView;
use serde_json::{Value, json};
use sha2::Sha256;
use time::OffsetDateTime;
use tokio::net::TcpListener;
use uuid::Uuid;

// ---- the independent verifiers ----

/// Standard Webhooks, written from the spec: the key is the base64 after `whsec_`; the signed
/// content is `{webhook-id}.{webhook-timestamp}.{body}`; the header holds space-separated
/// `v1,<base64 HMAC-SHA256>` entries; the timestamp must be within five minutes of now.
fn rust_verify(secret: &str, headers: &HeaderMap, body: &[u8]) -> Result<(), String> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .ok_or(format!("no {name} header"))
    };
    let id = header("webhook-id")?;
    let timestamp = header("webhook-timestamp")?;
    let signatures = header("webhook-signature")?;
    let ts: i64 = timestamp.parse().map_err(|_| "bad timestamp")?;
    if (OffsetDateTime::now_utc().unix_timestamp() - ts).abs() > 300 {
        return Err("timestamp outside the tolerance".into());
    }
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").ok_or("no whsec_ prefix")?)
        .map_err(|e| e.to_string())?;
    let mut content = format!("{id}.{timestamp}.").into_bytes();
    content.extend_from_slice(body);
    for entry in signatures.split(' ') {
        let Some(("v1", sig)) = entry.split_once(',') else {
            continue;
        };
        let Ok(sig) = STANDARD.decode(sig) else {
            continue;
        };
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
        mac.update(&content);
        if mac.verify_slice(&sig).is_ok() {
            return Ok(());
        }
    }
    Err("no matching v1 signature".into())
}

/// The venv's Python with `standardwebhooks` (see `common::python`).
fn python_verifier() -> Option<&'static PathBuf> {
    static VENV: common::python::Venv = common::python::Venv::new(
        "standardwebhooks-venv",
        "standardwebhooks",
        &["standardwebhooks"],
        "the Python standardwebhooks verifier",
    );
    VENV.python()
}

/// `Some(verified)` from the Python reference library, `None` when it is unavailable.
fn python_verify(secret: &str, headers: &HeaderMap, body: &[u8]) -> Option<bool> {
    let python = python_verifier()?;
    let headers: serde_json::Map<String, Value> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v.to_str().unwrap())))
        .collect();
    let input = json!({"secret": secret, "headers": headers, "body_b64": STANDARD.encode(body)});
    let out = common::python::run_script(
        python,
        "tests/webhook_verify.py",
        &[],
        input.to_string().as_bytes(),
    );
    let said = String::from_utf8_lossy(&out.stdout);
    match out.status.code() {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => panic!(
            "the Python verifier broke: {said}{}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// Both verifiers agree that the request is (or is not) validly signed.
fn assert_verifies(secret: &str, headers: &HeaderMap, body: &[u8], expected: bool) {
    let rust = rust_verify(secret, headers, body);
    assert_eq!(rust.is_ok(), expected, "Rust verifier: {rust:?}");
    if let Some(python) = python_verify(secret, headers, body) {
        assert_eq!(python, expected, "Python standardwebhooks verifier");
    }
}

// ---- a decision to deliver ----

/// What the webhook tests ask of the fixture.
impl Fixture {
    /// A bool decision answered "yes", as the channel sees it with `callback_url` set. The
    /// stored decision has no callback, so an outbox worker in the server never calls the
    /// receiver on its own and every request recorded comes from the test's `deliver`.
    async fn answered_decision(&self, callback_url: &str) -> (Decision, DecisionView) {
        let handle = self
            .srv
            .create(json!({"question": "Deploy to production?", "kind": "bool"}))
            .await;
        self.srv
            .answer_ok(
                s(&handle, "web_url"),
                json!({"value": "yes", "remark": "after 6pm"}),
            )
            .await;
        let id: Uuid = s(&handle, "decision_id").parse().unwrap();
        let mut d = self.decision(id).await;
        d.spec.callback_url = Some(callback_url.to_owned());
        let view = self.srv.svc.view(&d).await.unwrap();
        (d, view)
    }

    /// Hands `channel` the message that `d` (seen as `view`) is resolved, for the inbox's
    /// `channels`.
    async fn deliver_resolution(
        &self,
        channel: &WebhookChannel,
        d: &Decision,
        view: &DecisionView,
        channels: &InboxChannels,
    ) -> Delivery {
        self.deliver(channel, &message(d.id, "resolved"), d, view, channels)
            .await
    }
}

fn message(decision_id: Uuid, purpose: &str) -> OutboxMessage {
    let now = OffsetDateTime::now_utc();
    first_try(
        decision_id,
        Route::Webhook,
        Purpose::parse(purpose).expect("a purpose"),
        now,
        now + time::Duration::hours(24),
    )
}

fn with_secret(secret: &str) -> InboxChannels {
    InboxChannels {
        webhook_secret: Some(secret.to_owned()),
        ..InboxChannels::default()
    }
}

fn header<'a>(r: &'a Recorded, name: &str) -> &'a str {
    r.headers
        .get(name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .to_str()
        .unwrap()
}

// ---- the cases ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_delivery_verifies_and_carries_the_decision() {
    let f = Fixture::start().await;
    let recv = Receiver::start(Reply::Text).await;
    let secret = generate_webhook_secret();
    let (d, view) = f.answered_decision(&format!("{}/hook", recv.base)).await;
    let msg = message(d.id, "resolved");
    let channel = WebhookChannel::new(true);
    assert_eq!(channel.channel(), Channel::Webhook);

    let result = f
        .deliver(&channel, &msg, &d, &view, &with_secret(&secret))
        .await;
    assert!(matches!(result, Delivery::Sent(_)), "{result:?}");

    let requests = recv.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.method, Method::POST);
    assert_eq!(r.path, "/hook");
    assert_eq!(header(r, "webhook-id"), msg.id.to_string());
    assert_eq!(header(r, "content-type"), "application/json");
    assert!(header(r, "user-agent").starts_with("sayso/"));
    let ts: i64 = header(r, "webhook-timestamp").parse().unwrap();
    assert!((OffsetDateTime::now_utc().unix_timestamp() - ts).abs() < 60);
    assert!(header(r, "webhook-signature").starts_with("v1,"));

    // The body is the Decision JSON the API shows.
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body, f.srv.get(&d.id.to_string()).await);
    assert_eq!(body["status"], "answered");
    assert_eq!(body["outcome"], true);
    assert_eq!(body["remark"], "after 6pm");

    assert_verifies(&secret, &r.headers, &r.body, true);
    // A changed body, another id, or another secret does not verify.
    let tampered = String::from_utf8(r.body.to_vec())
        .unwrap()
        .replace("\"outcome\":true", "\"outcome\":false");
    assert_ne!(tampered.as_bytes(), &r.body[..]);
    assert_verifies(&secret, &r.headers, tampered.as_bytes(), false);
    let mut other_id = r.headers.clone();
    other_id.insert("webhook-id", Uuid::now_v7().to_string().parse().unwrap());
    assert_verifies(&secret, &other_id, &r.body, false);
    assert_verifies(&generate_webhook_secret(), &r.headers, &r.body, false);
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_receiver_is_retried_under_the_same_id_until_it_accepts() {
    let f = Fixture::start().await;
    let recv = Receiver::start(Reply::Text).await;
    recv.answer_with(&[500, 500, 500]);
    let secret = generate_webhook_secret();
    let (d, view) = f.answered_decision(&format!("{}/hook", recv.base)).await;
    let msg = message(d.id, "resolved");
    let channel = WebhookChannel::new(true);
    let channels = with_secret(&secret);

    let mut results = Vec::new();
    for _ in 0..4 {
        results.push(f.deliver(&channel, &msg, &d, &view, &channels).await);
    }
    assert!(
        matches!(
            &results[..],
            [
                Delivery::Retry(_),
                Delivery::Retry(_),
                Delivery::Retry(_),
                Delivery::Sent(_)
            ]
        ),
        "{results:?}"
    );

    let requests = recv.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        requests.iter().filter(|r| r.status == 200).count(),
        1,
        "exactly one accepted delivery"
    );
    for r in &requests {
        assert_eq!(header(r, "webhook-id"), msg.id.to_string());
        assert_verifies(&secret, &r.headers, &r.body, true);
    }
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receiver_answers_decide_between_retry_and_failure() {
    let f = Fixture::start().await;
    let recv = Receiver::start(Reply::Text).await;
    let (d, view) = f.answered_decision(&format!("{}/hook", recv.base)).await;
    let channel = WebhookChannel::new(true);
    let channels = with_secret(&generate_webhook_secret());
    let msg = message(d.id, "resolved");

    recv.answer_with(&[410]);
    let gone = f.deliver(&channel, &msg, &d, &view, &channels).await;
    assert_eq!(
        gone,
        Delivery::Failed("callback_url answered 410 Gone: stopped".into())
    );

    for (status, retried) in [
        (408, true),
        (429, true),
        (503, true),
        (400, false),
        (404, false),
    ] {
        recv.answer_with(&[status]);
        let result = f.deliver(&channel, &msg, &d, &view, &channels).await;
        assert_retried_or_failed(status, retried, &result);
    }

    // A redirect is not followed: one request, and the delivery fails.
    let before = recv.requests().len();
    recv.answer_with(&[307]);
    let redirected = f.deliver(&channel, &msg, &d, &view, &channels).await;
    assert!(matches!(redirected, Delivery::Failed(_)), "{redirected:?}");
    assert_eq!(recv.requests().len(), before + 1);
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_receiver_is_retried() {
    let f = Fixture::start().await;
    // A port that was just free: nothing listens there.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        l.local_addr().unwrap().port()
    };
    let (d, view) = f
        .answered_decision(&format!("http://127.0.0.1:{port}/hook"))
        .await;
    let result = f
        .deliver_resolution(
            &WebhookChannel::new(true),
            &d,
            &view,
            &with_secret(&generate_webhook_secret()),
        )
        .await;
    assert!(matches!(result, Delivery::Retry(_)), "{result:?}");
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_callbacks_are_refused_without_a_request_unless_allowed() {
    let f = Fixture::start().await;
    let recv = Receiver::start(Reply::Text).await;
    let port = recv.base.rsplit(':').next().unwrap().to_owned();
    let channels = with_secret(&generate_webhook_secret());
    let refusing = WebhookChannel::new(false);

    for url in [
        format!("{}/hook", recv.base),
        format!("http://localhost:{port}/hook"),
        format!("http://[::ffff:127.0.0.1]:{port}/hook"),
        format!("http://127.1:{port}/hook"),
    ] {
        let (d, view) = f.answered_decision(&url).await;
        let result = f.deliver_resolution(&refusing, &d, &view, &channels).await;
        let Delivery::Failed(why) = &result else {
            panic!("{url}: {result:?}");
        };
        assert!(
            why.starts_with("callback_url resolves to a private address"),
            "{why}"
        );
        assert!(
            why.ends_with("set SAYSO_ALLOW_PRIVATE_WEBHOOKS=1 to allow"),
            "{why}"
        );
    }
    assert!(recv.requests().is_empty(), "no request was made");

    let (d, view) = f.answered_decision(&format!("{}/hook", recv.base)).await;
    let result = f
        .deliver_resolution(&WebhookChannel::new(true), &d, &view, &channels)
        .await;
    assert!(matches!(result, Delivery::Sent(_)), "{result:?}");
    assert_eq!(recv.requests().len(), 1);
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_resolution_with_a_callback_and_a_secret_is_sent() {
    let f = Fixture::start().await;
    let recv = Receiver::start(Reply::Text).await;
    let channel = WebhookChannel::new(true);
    let (d, view) = f.answered_decision(&format!("{}/hook", recv.base)).await;
    let channels = with_secret(&generate_webhook_secret());

    for purpose in ["ask", "reminder"] {
        let result = f
            .deliver(&channel, &message(d.id, purpose), &d, &view, &channels)
            .await;
        assert!(
            matches!(result, Delivery::Skipped(_)),
            "{purpose}: {result:?}"
        );
    }

    let mut no_callback = d.clone();
    no_callback.spec.callback_url = None;
    let result = f
        .deliver_resolution(&channel, &no_callback, &view, &channels)
        .await;
    assert_eq!(result, Delivery::Skipped("no callback_url".into()));

    let result = f
        .deliver_resolution(&channel, &d, &view, &InboxChannels::default())
        .await;
    assert_eq!(
        result,
        Delivery::Failed("the inbox has no webhook secret".into())
    );
    assert!(recv.requests().is_empty());
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_is_guarded_like_a_webhook_and_verifies_with_its_envelope() {
    let f = Fixture::start().await;
    let recv = Receiver::start(Reply::Text).await;
    let secret = generate_webhook_secret();
    let channels = with_secret(&secret);
    let (mut d, view) = f.answered_decision("https://example.com/unused").await;

    // No completion: nothing to send.
    let allowing = WebhookChannel::completion(true);
    let result = f.deliver_resolution(&allowing, &d, &view, &channels).await;
    assert_eq!(result, Delivery::Skipped("no completion".into()));

    d.spec.completion = Some(Completion {
        url: format!("{}/restate/awakeables/a1/resolve", recv.base),
        wrap_in: Some("data".into()),
    });
    // A private address is refused at send time, without a request, unless allowed.
    let result = f
        .deliver_resolution(&WebhookChannel::completion(false), &d, &view, &channels)
        .await;
    let Delivery::Failed(why) = &result else {
        panic!("{result:?}");
    };
    assert!(
        why.starts_with("completion.url resolves to a private address"),
        "{why}"
    );
    assert!(recv.requests().is_empty());

    let result = f.deliver_resolution(&allowing, &d, &view, &channels).await;
    assert!(matches!(result, Delivery::Sent(_)), "{result:?}");
    let r = &recv.requests()[0];
    assert_eq!(r.path, "/restate/awakeables/a1/resolve");
    assert_verifies(&secret, &r.headers, &r.body, true);
    assert_eq!(r.json()["data"]["decision_id"], json!(d.id.to_string()));
    assert_eq!(r.json()["data"]["outcome"], json!(true));
    assert_eq!(allowing.channel(), Channel::Completion);
    f.srv.stop().await;
}
