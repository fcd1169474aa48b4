//! Web Push (RFC 8030) to the browsers that subscribed from an inbox's feed page.
//!
//! Payloads are encrypted for each browser with RFC 8291 (`aes128gcm`, by web-push-native)
//! and signed for the push service with VAPID (RFC 8292). The VAPID key pair is made on first
//! use and kept in the database, so every replica signs with the same key and subscriptions
//! survive restarts. An `ask` or `reminder` shows a notification tagged with the decision's
//! id; `resolved` asks the service worker to close it.

use crate::render::project::short_project;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use time::OffsetDateTime;
use web_push_native::{Auth, WebPushBuilder, p256};

use super::outbound::{Outbound, Refusal, capped_text};
use crate::courier::http_client::USER_AGENT;
use crate::courier::{Courier, Delivering, Delivery, Notice};
use crate::domain::approval::{ALLOW, DENY};
use crate::domain::inbox::PushSubscription;
use crate::domain::outbox::{Channel, Purpose};
use crate::domain::people::Person;
use crate::domain::subscription::{check_endpoint, decode_key};
use crate::render::what_runs;
use crate::service::{Outbox, VapidKey};

/// The longest push services keep an undelivered message (FCM: four weeks).
const MAX_TTL: Duration = Duration::from_secs(28 * 24 * 60 * 60);
/// The least time a withdrawal is kept for a phone that is offline.
const MIN_CLOSE_TTL: Duration = Duration::from_secs(60 * 60);
/// How long a push service keeps a notice to a person for a device that is offline.
const NOTICE_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// Push services accept 4 KiB of encrypted payload; keep the text well inside it.
const MAX_BODY_CHARS: usize = 1000;
/// The most characters of an approval's command (or file, or URL) in the body.
const SUBJECT_CHARS: usize = 300;

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
        let t = d.t();
        match d.message.purpose {
            purpose @ (Purpose::Ask | Purpose::Reminder) => {
                if !decision.is_open_at(now) {
                    return Err("the decision is no longer pending".into());
                }
                let mut title = decision
                    .spec
                    .project
                    .as_deref()
                    .map_or_else(|| "sayso".into(), short_project);
                if purpose == Purpose::Reminder {
                    title = t.tr1("notify-reminder-title", "title", title);
                }
                let (gathered, waiting) = (d.gathered(), d.waiting());
                // A tool approval says what runs, built from the approval itself.
                let shown = decision
                    .spec
                    .approval
                    .as_ref()
                    .map(|a| what_runs::shown(&t, a, SUBJECT_CHARS));
                let mut body = match &shown {
                    Some(s) => s.lines(),
                    None => shorten(&decision.spec.question, MAX_BODY_CHARS),
                };
                if gathered > 0 {
                    body = format!("{body}\n{}", t.tr1("notify-gathered", "count", gathered));
                }
                body = format!("{body}\n{}", d.zone.expires(&t, decision.expires_at, now));
                // Standing for more the budget held, it opens the feed, where they all are.
                let url = if waiting > 0 {
                    body = format!("{body}\n{}", t.tr1("notify-waiting", "count", waiting));
                    super::people::feed_link(d.public_url)
                } else {
                    d.web_url.to_string()
                };
                let mut payload = json!({
                    "type": "show",
                    "tag": tag,
                    "title": title,
                    "body": body,
                    "url": url,
                });
                // A tool approval is answered from the notification's own buttons; the
                // service worker posts the picked one to the answer link. A gathered one
                // has none: a tap there would answer only the newest.
                if let Some(shown) = shown.filter(|_| gathered == 0 && waiting == 0) {
                    // An Allow whose notification cannot show all that runs, or that needs
                    // the passkey, opens the page (`opens`) instead.
                    if shown.one_tap_allow {
                        payload["answers"] = json!([ALLOW, DENY]);
                    } else {
                        payload["answers"] = json!([DENY]);
                        payload["opens"] = json!([ALLOW]);
                    }
                    // The buttons' words in the person's language; the answers they post
                    // stay the answers' own.
                    payload["labels"] = json!({
                        ALLOW: t.tr("approval-allow"),
                        DENY: t.tr("approval-deny"),
                    });
                }
                Ok(PushNotice {
                    payload,
                    ttl: left.clamp(Duration::from_secs(1), MAX_TTL),
                    urgency: Urgency::High,
                    topic,
                })
            }
            Purpose::Resolved => Ok(PushNotice {
                payload: json!({"type": "close", "tag": tag}),
                ttl: left.clamp(MIN_CLOSE_TTL, MAX_TTL),
                urgency: Urgency::Normal,
                topic,
            }),
            Purpose::Escalate => Err(crate::courier::ESCALATE_SKIPPED.into()),
            Purpose::PasskeyAdded => Err(crate::courier::NOTICE_SKIPPED.into()),
            Purpose::Progress => Err(crate::courier::PROGRESS_SKIPPED.into()),
        }
    }

    /// A notice to the person (a passkey added): shown on each of their devices, a tap
    /// opening their feed; kept a day for a device that is offline.
    pub fn for_notice(n: &Notice<'_>) -> Self {
        let id = n.message.id.simple().to_string();
        PushNotice {
            payload: json!({
                "type": "show",
                "tag": format!("notice-{id}"),
                "title": n.title,
                "body": shorten(&n.body, MAX_BODY_CHARS),
                "url": n.url,
            }),
            ttl: NOTICE_TTL,
            urgency: Urgency::High,
            topic: id,
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
    /// Push endpoints are chosen by whoever subscribed: called only where they may lead.
    outbound: Outbound,
}

/// How much of a push service's answer is read, for the reason it gives.
const MAX_ANSWER_BYTES: usize = 4096;

impl WebPushChannel {
    /// `subject` is the contact push services see: a `mailto:` address or the public URL.
    /// `allow_private` lets endpoints on loopback and private addresses be called.
    pub fn new(subject: String, allow_private: bool) -> Self {
        WebPushChannel {
            subject,
            outbound: Outbound::new(allow_private, push_client),
        }
    }

    /// Encrypts `notice` for one subscription, signs it, and posts it to its push service.
    pub async fn push(
        &self,
        key: &VapidKey,
        sub: &PushSubscription,
        notice: &PushNotice,
    ) -> PushOutcome {
        let request = match self.build_request(key, sub, notice) {
            Ok(r) => r,
            Err(e) => return PushOutcome::Gone(e),
        };
        let (parts, body) = request.into_parts();
        let mut headers = parts.headers;
        headers.remove(reqwest::header::CONTENT_LENGTH);
        let client = match url::Url::parse(&sub.endpoint) {
            Ok(url) => self.outbound.client_for(&url, "push endpoint").await,
            Err(e) => return PushOutcome::Gone(format!("unusable push endpoint: {e}")),
        };
        let client = match client {
            Ok(client) => client,
            Err(Refusal::Retry(why)) => return PushOutcome::Retry(why),
            // Kept: allowing private addresses later makes it usable again.
            Err(Refusal::Never(why)) => return PushOutcome::Refused(why),
        };
        let sent = client
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
            let text = capped_text(resp, MAX_ANSWER_BYTES).await;
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

/// The push client: push services can be slow to answer, so 30 s; no redirects followed.
fn push_client() -> reqwest::ClientBuilder {
    // reqwest is built without a default TLS provider; ring is the one this build has.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(USER_AGENT)
}

#[async_trait]
impl Courier for WebPushChannel {
    fn channel(&self) -> Channel {
        Channel::Push
    }

    async fn deliver(&self, d: &Delivering<'_>) -> Delivery {
        let notice = match PushNotice::for_delivery(d, OffsetDateTime::now_utc()) {
            Ok(n) => n,
            Err(why) => return Delivery::Skipped(why),
        };
        let Some(person) = d.person else {
            return Delivery::Skipped("the message names no person".into());
        };
        self.push_to_devices(d.outbox, person, &notice).await
    }

    async fn notify_person(&self, n: &Notice<'_>) -> Delivery {
        self.push_to_devices(n.outbox, n.person, &PushNotice::for_notice(n))
            .await
    }
}

impl WebPushChannel {
    /// Pushes `notice` to every device `person` subscribed, forgetting those gone.
    async fn push_to_devices(
        &self,
        outbox: &Outbox,
        person: &Person,
        notice: &PushNotice,
    ) -> Delivery {
        let subs = match outbox.push_subscriptions(person).await {
            Ok(subs) => subs,
            Err(e) => return Delivery::Retry(format!("could not read the subscriptions: {e}")),
        };
        if subs.is_empty() {
            return Delivery::Skipped("no device has subscribed to push for this inbox".into());
        }
        let key = match outbox.vapid_key().await {
            Ok(key) => key,
            Err(e) => return Delivery::Retry(format!("the VAPID key is unavailable: {e}")),
        };
        let (mut sent, mut gone) = (0usize, 0usize);
        let (mut retry, mut refused) = (Vec::new(), Vec::new());
        for sub in &subs {
            match self.push(key, sub, notice).await {
                PushOutcome::Accepted => sent += 1,
                PushOutcome::Gone(why) => {
                    gone += 1;
                    tracing::info!(endpoint = %sub.endpoint, %why, "forgetting a push subscription");
                    if let Err(e) = outbox.remove_push_subscription(&sub.endpoint).await {
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

    #[test]
    fn long_questions_are_shortened() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "abc…");
        assert_eq!(shorten("ééé", 2), "éé…");
    }
}
