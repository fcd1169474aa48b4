//! Signed webhooks to a decision's `callback_url` (DESIGN.md §5), in the Standard Webhooks
//! form: the Decision JSON as the body, `webhook-id` (the outbox message's id, the same on
//! every retry, so the receiver can drop repeats), `webhook-timestamp` (unix seconds) and
//! `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed with the
//! base64-decoded part of the inbox's `whsec_…` secret.
//!
//! Unless private callbacks are allowed (`SAYSO_ALLOW_PRIVATE_WEBHOOKS=1`), the host is resolved
//! first and every address it resolves to must be a global one; the request then connects to
//! exactly those checked addresses, so a DNS answer that changes between check and connect
//! (rebinding) cannot reach an inside address. Such requests bypass any HTTP proxy from the
//! environment, since a proxy would make its own connection to an unchecked address.

use std::net::{IpAddr, SocketAddr};

use async_trait::async_trait;
use base64::Engine;
use base64::alphabet;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use time::OffsetDateTime;
use url::{Host, Url};

use super::http_client::{TIMEOUT, client_builder, delivery_for_error, delivery_for_status};
use super::{Courier, Delivering, Delivery};
use crate::domain::address::is_global;
use crate::domain::outbox::{Channel, Purpose};

/// The prefix of a webhook secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// Delivers the `resolved` message of a decision to its `callback_url`.
pub struct WebhookChannel {
    allow_private: bool,
    /// Honours proxy settings; used when any address may be called.
    open: reqwest::Client,
    /// No proxy; used for IP-literal URLs once their address passed the check.
    direct: reqwest::Client,
}

impl WebhookChannel {
    /// `allow_private` lets callbacks reach loopback, private and other non-global addresses.
    pub fn new(allow_private: bool) -> Self {
        let build = |b: reqwest::ClientBuilder| b.build().expect("the HTTP client builds");
        WebhookChannel {
            allow_private,
            open: build(client_builder()),
            direct: build(client_builder().no_proxy()),
        }
    }

    /// The client to send with, after checking where `url` leads; `Err` is the delivery's end.
    async fn client_for(&self, url: &Url) -> Result<reqwest::Client, Delivery> {
        if self.allow_private {
            return Ok(self.open.clone());
        }
        let domain = match url.host() {
            Some(Host::Ipv4(ip)) => return self.literal(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => return self.literal(IpAddr::V6(ip)),
            Some(Host::Domain(domain)) => domain,
            None => return Err(Delivery::Failed("callback_url has no host".into())),
        };
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs = resolve(domain, port).await?;
        if let Some(bad) = addrs.iter().find(|a| !is_global(a.ip())) {
            return Err(refused(bad.ip()));
        }
        pinned_client(domain, &addrs)
    }

    fn literal(&self, ip: IpAddr) -> Result<reqwest::Client, Delivery> {
        if is_global(ip) {
            Ok(self.direct.clone())
        } else {
            Err(refused(ip))
        }
    }
}

#[async_trait]
impl Courier for WebhookChannel {
    fn channel(&self) -> Channel {
        Channel::Webhook
    }

    async fn deliver(&self, d: &Delivering<'_>) -> Delivery {
        if d.message.purpose != Purpose::Resolved {
            return Delivery::Skipped(format!(
                "webhooks are sent on resolution only, not for {:?}",
                d.message.purpose.as_str()
            ));
        }
        let Some(callback_url) = d.decision.spec.callback_url.as_deref() else {
            return Delivery::Skipped("no callback_url".into());
        };
        let Some(secret) = d.channels.webhook_secret.as_deref() else {
            return Delivery::Failed("the inbox has no webhook secret".into());
        };
        let Some(key) = secret_key(secret) else {
            return Delivery::Failed("the inbox's webhook secret is not whsec_ and base64".into());
        };
        let url = match Url::parse(callback_url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => url,
            Ok(url) => {
                return Delivery::Failed(format!(
                    "callback_url has the scheme {:?}; only http and https are called",
                    url.scheme()
                ));
            }
            Err(e) => return Delivery::Failed(format!("callback_url is not a URL: {e}")),
        };
        let client = match self.client_for(&url).await {
            Ok(client) => client,
            Err(end) => return end,
        };
        let body = match serde_json::to_vec(d.view) {
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
            Ok(resp) => delivery_for_status("callback_url", resp.status()),
            Err(e) => delivery_for_error("callback_url", e),
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

/// Every address `domain` resolves to; a lookup that fails may work later.
async fn resolve(domain: &str, port: u16) -> Result<Vec<SocketAddr>, Delivery> {
    let lookup = tokio::time::timeout(TIMEOUT, tokio::net::lookup_host((domain, port))).await;
    let addrs: Vec<SocketAddr> = match lookup {
        Ok(Ok(addrs)) => addrs.collect(),
        Ok(Err(e)) => {
            return Err(Delivery::Retry(format!(
                "the callback_url host {domain} did not resolve: {e}"
            )));
        }
        Err(_) => {
            return Err(Delivery::Retry(format!(
                "resolving the callback_url host {domain} timed out"
            )));
        }
    };
    if addrs.is_empty() {
        return Err(Delivery::Retry(format!(
            "the callback_url host {domain} resolved to no address"
        )));
    }
    Ok(addrs)
}

/// A client that connects to `addrs` whenever a URL names `domain`, without looking it up
/// again, and ignores proxies: the connection goes to exactly the addresses checked.
fn pinned_client(domain: &str, addrs: &[SocketAddr]) -> Result<reqwest::Client, Delivery> {
    client_builder()
        .no_proxy()
        .resolve_to_addrs(domain, addrs)
        .build()
        .map_err(|e| Delivery::Retry(format!("could not set up the HTTP client: {e}")))
}

fn refused(ip: IpAddr) -> Delivery {
    Delivery::Failed(format!(
        "callback_url resolves to a private address ({ip}); \
         set SAYSO_ALLOW_PRIVATE_WEBHOOKS=1 to allow"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn pinned_client_connects_to_the_checked_address_without_a_lookup() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = conn.read(&mut buf).await;
            let _ = conn
                .write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
                .await;
        });
        // `.invalid` never resolves (RFC 6761): only the pinned address can be reached.
        let client = pinned_client("pinned.invalid", &[addr]).unwrap();
        let resp = client
            .get(format!("http://pinned.invalid:{}/", addr.port()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::NO_CONTENT);
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused() {
        let channel = WebhookChannel::new(false);
        let url = Url::parse("http://localhost:9/hook").unwrap();
        let Err(Delivery::Failed(why)) = channel.client_for(&url).await else {
            panic!("localhost was not refused");
        };
        assert!(why.contains("private address"), "{why}");
    }

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
