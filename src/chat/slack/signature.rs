//! Slack's request signatures (v0): every request Slack sends to the interactivity URL carries
//! `X-Slack-Request-Timestamp` and `X-Slack-Signature: v0=<hex>`, the HMAC-SHA256 of
//! `v0:{timestamp}:{raw body}` keyed with the app's signing secret. A request is taken only
//! when the signature matches (compared in constant time) and the timestamp is within five
//! minutes of now. The replay guard is keyed on what was signed (a hash of the timestamp and
//! the body, `replay_key`), never on how the signature was spelled: hex digits in upper case
//! or spaces around them verify the same, and must not make a captured request new again.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How far a request's timestamp may be from now, either way.
pub const TOLERANCE_S: i64 = 5 * 60;

/// The header names, lower case as HTTP/2 and axum give them.
pub const TIMESTAMP_HEADER: &str = "x-slack-request-timestamp";
pub const SIGNATURE_HEADER: &str = "x-slack-signature";

/// Why a request's signature is not taken; the text names what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("no X-Slack-Request-Timestamp header")]
    NoTimestamp,
    #[error("X-Slack-Request-Timestamp is not a number of seconds")]
    BadTimestamp,
    #[error("X-Slack-Request-Timestamp is {0} s from now, more than {TOLERANCE_S} s")]
    Stale(i64),
    #[error("no X-Slack-Signature header")]
    NoSignature,
    #[error("X-Slack-Signature is not v0=<64 hex digits>")]
    BadSignature,
    #[error("X-Slack-Signature does not match the body and the signing secret")]
    Mismatch,
}

/// Checks one request: its two headers (as sent, `None` when absent), its raw body, and now in
/// Unix seconds.
pub fn verify(
    signing_secret: &str,
    timestamp: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<(), SignatureError> {
    let timestamp = timestamp.ok_or(SignatureError::NoTimestamp)?.trim();
    let ts: i64 = timestamp
        .parse()
        .map_err(|_| SignatureError::BadTimestamp)?;
    let age = now.saturating_sub(ts);
    if age.abs() > TOLERANCE_S {
        return Err(SignatureError::Stale(age));
    }
    let signature = signature.ok_or(SignatureError::NoSignature)?.trim();
    let given = signature
        .strip_prefix("v0=")
        .filter(|hex| hex.len() == 64)
        .and_then(|h| hex::decode(h).ok())
        .ok_or(SignatureError::BadSignature)?;
    let mac = mac(signing_secret, timestamp, body);
    // `verify_slice` compares in constant time.
    mac.verify_slice(&given)
        .map_err(|_| SignatureError::Mismatch)
}

/// The replay guard's key for a request signed over `timestamp` and `body`: the same for every
/// spelling of its signature, different for any other timestamp or body.
pub fn replay_key(timestamp: &str, body: &[u8]) -> String {
    use sha2::Digest;
    let mut hash = Sha256::new();
    // As signed: the timestamp trimmed, as `verify` reads it.
    hash.update(b"v0:");
    hash.update(timestamp.trim().as_bytes());
    hash.update(b":");
    hash.update(body);
    format!("slack:request:{}", hex::encode(hash.finalize()))
}

/// The signature Slack would send for `body` at `timestamp` (the tests' and `sign`'s side).
pub fn sign(signing_secret: &str, timestamp: &str, body: &[u8]) -> String {
    let mac = mac(signing_secret, timestamp, body);
    format!("v0={}", hex::encode(mac.finalize().into_bytes()))
}

fn mac(signing_secret: &str, timestamp: &str, body: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(signing_secret.as_bytes())
        .expect("HMAC takes a key of any length");
    mac.update(b"v0:");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(body);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    // The worked example of Slack's "Verifying requests from Slack" page.
    const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";
    const TS: &str = "1531420618";
    const BODY: &str = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    const EXPECTED: &str = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

    fn now() -> i64 {
        TS.parse().unwrap()
    }

    #[test]
    fn slacks_documented_example_verifies() {
        assert_eq!(sign(SECRET, TS, BODY.as_bytes()), EXPECTED);
        assert_eq!(
            verify(SECRET, Some(TS), Some(EXPECTED), BODY.as_bytes(), now()),
            Ok(())
        );
    }

    #[test]
    fn a_changed_body_secret_or_timestamp_does_not() {
        let mut body = BODY.as_bytes().to_vec();
        body[10] ^= 1;
        assert_eq!(
            verify(SECRET, Some(TS), Some(EXPECTED), &body, now()),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify("another", Some(TS), Some(EXPECTED), BODY.as_bytes(), now()),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(
                SECRET,
                Some("1531420619"),
                Some(EXPECTED),
                BODY.as_bytes(),
                now()
            ),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn every_spelling_of_a_signature_is_one_request_to_the_replay_guard() {
        let upper = format!("v0={}", EXPECTED["v0=".len()..].to_uppercase());
        let spaced = format!("  {EXPECTED} ");
        for spelling in [upper.as_str(), spaced.as_str()] {
            assert_eq!(
                verify(SECRET, Some(TS), Some(spelling), BODY.as_bytes(), now()),
                Ok(())
            );
        }
        let key = replay_key(TS, BODY.as_bytes());
        assert_eq!(replay_key(&format!(" {TS} "), BODY.as_bytes()), key);
        assert_ne!(replay_key("1531420619", BODY.as_bytes()), key);
        assert_ne!(replay_key(TS, b"another body"), key);
    }

    #[test]
    fn old_and_future_timestamps_are_refused() {
        let late = now() + TOLERANCE_S + 1;
        assert_eq!(
            verify(SECRET, Some(TS), Some(EXPECTED), BODY.as_bytes(), late),
            Err(SignatureError::Stale(TOLERANCE_S + 1))
        );
        let early = now() - TOLERANCE_S - 1;
        assert!(matches!(
            verify(SECRET, Some(TS), Some(EXPECTED), BODY.as_bytes(), early),
            Err(SignatureError::Stale(_))
        ));
        // At the edge it is still taken.
        assert_eq!(
            verify(
                SECRET,
                Some(TS),
                Some(EXPECTED),
                BODY.as_bytes(),
                now() + TOLERANCE_S
            ),
            Ok(())
        );
    }

    #[test]
    fn missing_and_malformed_headers_are_named() {
        let b = BODY.as_bytes();
        assert_eq!(
            verify(SECRET, None, Some(EXPECTED), b, now()),
            Err(SignatureError::NoTimestamp)
        );
        assert_eq!(
            verify(SECRET, Some("soon"), Some(EXPECTED), b, now()),
            Err(SignatureError::BadTimestamp)
        );
        assert_eq!(
            verify(SECRET, Some(TS), None, b, now()),
            Err(SignatureError::NoSignature)
        );
        for bad in [
            "a2114d57",
            "v1=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
            "v0=zz",
            "v0=",
        ] {
            assert_eq!(
                verify(SECRET, Some(TS), Some(bad), b, now()),
                Err(SignatureError::BadSignature),
                "{bad}"
            );
        }
        assert!(
            SignatureError::Stale(400)
                .to_string()
                .contains("400 s from now")
        );
    }
}
