//! A browser's Web Push subscription, checked as the feed page's script sends it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use web_push_native::p256;

use super::Issue;
use super::inbox::PushSubscription;

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

pub fn check_endpoint(endpoint: &str) -> Result<url::Url, String> {
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
pub fn decode_key(s: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(s.trim_end_matches('=')).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use web_push_native::jwt_simple::prelude::{ECDSAP256PublicKeyLike, ES256KeyPair};

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
}
