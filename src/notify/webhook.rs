//! Signed webhooks to a decision's `callback_url` (docs/API.md, "Webhooks") and to its
//! completion callback ("Completion callbacks"), in the Standard Webhooks form: the Decision
//! JSON as the body (in the completion's envelope, if it names one), `webhook-id` (the outbox
//! message's id, the same on every retry, so the receiver can drop repeats),
//! `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed with the
//! base64-decoded part of the inbox's `whsec_…` secret.
//!
//! Unless private callbacks are allowed (`SAYSO_ALLOW_PRIVATE_WEBHOOKS=1`), the host is resolved
//! first and every address it resolves to must be a global one; the request then connects to
//! exactly those checked addresses, so a DNS answer that changes between check and connect
//! (rebinding) cannot reach an inside address. Such requests bypass any HTTP proxy from the
//! environment, since a proxy would make its own connection to an unchecked address.

use async_trait::async_trait;
use base64::Engine;
use base64::alphabet;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use time::OffsetDateTime;
use url::Url;

use super::outbound::{Outbound, Refusal};
use crate::courier::http_client::{client_builder, delivery_for_error, delivery_for_status};
use crate::courier::{Courier, Delivering, Delivery};
use crate::domain::completion::Completion;
use crate::domain::outbox::{Channel, Purpose};

/// The prefix of a webhook secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// Delivers the `resolved` message of a decision to its `callback_url`, or to its completion
/// callback: the same signed request, to the URL and in the envelope the asker named.
pub struct WebhookChannel {
    outbound: Outbound,
    target: Target,
}

/// Which of a decision's addresses a `WebhookChannel` calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    CallbackUrl,
    Completion,
}

impl WebhookChannel {
    /// The webhook to `callback_url`. `allow_private` lets callbacks reach loopback, private
    /// and other non-global addresses.
    pub fn new(allow_private: bool) -> Self {
        WebhookChannel {
            outbound: Outbound::new(allow_private, client_builder),
            target: Target::CallbackUrl,
        }
    }

    /// The completion callback (`completion`), under the same guard as `new`.
    pub fn completion(allow_private: bool) -> Self {
        WebhookChannel {
            outbound: Outbound::new(allow_private, client_builder),
            target: Target::Completion,
        }
    }

    /// The URL, its field's name for the reasons, and the completion whose envelope the body
    /// goes in; `None` when the decision names no such address.
    fn address<'a>(
        &self,
        d: &Delivering<'a>,
    ) -> Option<(&'a str, &'static str, Option<&'a Completion>)> {
        match self.target {
            Target::CallbackUrl => Some((
                d.decision.spec.callback_url.as_deref()?,
                "callback_url",
                None,
            )),
            Target::Completion => {
                let c = d.decision.spec.completion.as_ref()?;
                Some((c.url.as_str(), "completion.url", Some(c)))
            }
        }
    }
}

/// The body: never anything but the settled Decision, in the completion's envelope when it
/// names one.
fn body(
    view: &crate::service::DecisionView,
    envelope: Option<&Completion>,
) -> serde_json::Result<Vec<u8>> {
    match envelope {
        Some(c) => serde_json::to_vec(&c.body(serde_json::to_value(view)?)),
        None => serde_json::to_vec(view),
    }
}

#[async_trait]
impl Courier for WebhookChannel {
    fn channel(&self) -> Channel {
        match self.target {
            Target::CallbackUrl => Channel::Webhook,
            Target::Completion => Channel::Completion,
        }
    }

    async fn deliver(&self, d: &Delivering<'_>) -> Delivery {
        if d.message.purpose != Purpose::Resolved {
            return Delivery::Skipped(format!(
                "{}s are sent on resolution only, not for {:?}",
                self.channel(),
                d.message.purpose.as_str()
            ));
        }
        let Some((url, field, envelope)) = self.address(d) else {
            return Delivery::Skipped(match self.target {
                Target::CallbackUrl => "no callback_url".into(),
                Target::Completion => "no completion".into(),
            });
        };
        let Some(secret) = d.channels.webhook_secret.as_deref() else {
            return Delivery::Failed("the inbox has no webhook secret".into());
        };
        let Some(key) = secret_key(secret) else {
            return Delivery::Failed("the inbox's webhook secret is not whsec_ and base64".into());
        };
        let url = match Url::parse(url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => url,
            Ok(url) => {
                return Delivery::Failed(format!(
                    "{field} has the scheme {:?}; only http and https are called",
                    url.scheme()
                ));
            }
            Err(e) => return Delivery::Failed(format!("{field} is not a URL: {e}")),
        };
        let client = match self.outbound.client_for(&url, field).await {
            Ok(client) => client,
            Err(Refusal::Retry(why)) => return Delivery::Retry(why),
            Err(Refusal::Never(why)) => return Delivery::Failed(why),
        };
        let body = match body(d.view, envelope) {
            Ok(body) => body,
            Err(e) => return Delivery::Failed(format!("the decision did not serialise: {e}")),
        };
        let id = d.message.id.to_string();
        let timestamp = OffsetDateTime::now_utc().unix_timestamp();
        let signature = sign(&key, &id, timestamp, &body);
        let sent = client
            .post(url)
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await;
        match sent {
            Ok(resp) => delivery_for_status(field, resp.status()),
            Err(e) => delivery_for_error(field, e),
        }
    }
}

/// Inbox secrets are made where the other secrets are.
pub use crate::service::tokens::generate_webhook_secret;

/// The HMAC key of a `whsec_…` secret (padded or not, as the reference libraries accept it);
/// `None` when it is not base64 or empty.
pub fn secret_key(secret: &str) -> Option<Vec<u8>> {
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    LENIENT.decode(encoded).ok().filter(|k| !k.is_empty())
}

/// The `webhook-signature` value: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.
pub fn sign(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_are_32_random_bytes() {
        let a = generate_webhook_secret();
        let b = generate_webhook_secret();
        assert!(a.starts_with("whsec_"));
        assert_ne!(a, b);
        assert_eq!(secret_key(&a).unwrap().len(), 32);
    }

    #[test]
    fn secrets_decode_with_or_without_padding() {
        assert_eq!(secret_key("whsec_AQID").unwrap(), vec![1, 2, 3]);
        assert_eq!(secret_key("whsec_AQI=").unwrap(), vec![1, 2]);
        assert_eq!(secret_key("whsec_AQI").unwrap(), vec![1, 2]);
    }

    #[test]
    fn bad_secrets_have_no_key() {
        assert_eq!(secret_key("whsec_"), None);
        assert_eq!(secret_key("whsec_not base64!"), None);
    }

    #[test]
    fn signature_matches_the_standard_webhooks_example() {
        // The example of the Standard Webhooks reference libraries' tests.
        let key = secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            sign(&key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }
}
