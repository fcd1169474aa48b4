//! Capability links and API keys.
//!
//! Answer and feed tokens are derived, not stored: `id ‖ HMAC-SHA256(server key, purpose ‖ id)`
//! truncated to 160 bits, base64url. The 256-bit server key comes from the OS random source
//! on first start and lives in the database, so every replica derives the same links and
//! nothing in the database can be replayed as a link. A token is checked by recomputing its
//! MAC in constant time before any database work, so a wrong token and an absent one cost the
//! same. API keys are random and kept only as SHA-256 hashes.
//!
//! A tool approval has two tokens: its answer token (`web_url`), which every API response
//! shows and which only opens a read-only page, and its approval tokens, one per channel of
//! the person (feed, Web Push, ntfy, mail), which answer it and which no API response ever
//! shows: `id ‖ channel ‖ person ‖ HMAC(server key, approve tag ‖ channel ‖ id ‖ person)`.
//! The channel and the person inside say which way an answer came and whose it is, and
//! cannot be changed without the server key. The same links answer any decision sent to
//! people by name (`approvers`). Tokens made before people existed (without the person) still
//! open, as the inbox's own person's.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use rand::TryRngCore;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::domain::PersonChannel;

type HmacSha256 = Hmac<Sha256>;

/// Bytes of MAC kept in a token: 160 bits.
const MAC_LEN: usize = 20;
/// The MAC input's tag of an approval token (the channel byte follows it).
const APPROVE_TAG: &[u8] = b"sayso approval answer v1";
/// Bytes of an approval token made before people: the decision id, the channel, the MAC.
const APPROVE_LEN_V1: usize = 16 + 1 + MAC_LEN;
/// Bytes of an approval token: the decision id, the channel, the person's id, the MAC.
const APPROVE_LEN: usize = 16 + 1 + 16 + MAC_LEN;

/// What a token opens; part of the MAC input so one kind of token never opens another.
#[derive(Debug, Clone, Copy)]
enum Purpose {
    Answer,
    Feed,
    /// A feed-bound device's cookie.
    Device,
}

impl Purpose {
    fn tag(self) -> &'static [u8] {
        match self {
            Purpose::Answer => b"sayso answer link v1",
            Purpose::Feed => b"sayso feed link v1",
            Purpose::Device => b"sayso bound device v1",
        }
    }
}

/// Derives and checks capability tokens with the server key.
#[derive(Clone)]
pub struct Tokens {
    /// HMAC-SHA256 with the server key already absorbed: every API response carries a link,
    /// and starting from this state saves hashing the padded key twice for each one.
    keyed: HmacSha256,
}

impl Tokens {
    pub fn new(key: [u8; 32]) -> Self {
        Self {
            keyed: HmacSha256::new_from_slice(&key).expect("HMAC takes any key length"),
        }
    }

    /// A new server key from the OS random source, hex-encoded for the settings table.
    pub fn generate_key_hex() -> String {
        let mut key = [0u8; 32];
        os_random(&mut key);
        hex(&key)
    }

    /// Parses a key stored by `generate_key_hex`.
    pub fn from_key_hex(s: &str) -> Option<Self> {
        let bytes = unhex(s)?;
        Some(Self::new(bytes.try_into().ok()?))
    }

    pub fn answer_token(&self, decision_id: Uuid) -> String {
        self.token(Purpose::Answer, decision_id)
    }

    pub fn feed_token(&self, inbox_id: Uuid) -> String {
        self.token(Purpose::Feed, inbox_id)
    }

    /// The decision an answer token opens, if the token is genuine.
    pub fn open_answer_token(&self, token: &str) -> Option<Uuid> {
        self.open(Purpose::Answer, token)
    }

    /// The inbox a feed token opens, if the token is genuine.
    pub fn open_feed_token(&self, token: &str) -> Option<Uuid> {
        self.open(Purpose::Feed, token)
    }

    /// The token that answers `decision_id` as `person` through `channel`. Only the
    /// person's side ever carries it: their feed, a notification, the mail.
    pub fn approve_token(&self, decision_id: Uuid, channel: PersonChannel, person: Uuid) -> String {
        let tag = self
            .approve_mac(channel.code(), decision_id, Some(person))
            .finalize()
            .into_bytes();
        let mut raw = Vec::with_capacity(APPROVE_LEN);
        raw.extend_from_slice(decision_id.as_bytes());
        raw.push(channel.code());
        raw.extend_from_slice(person.as_bytes());
        raw.extend_from_slice(&tag[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(raw)
    }

    /// The decision, channel and person an approval token opens, if the token is genuine;
    /// the person is `None` in a token made before people (the inbox's own person's).
    pub fn open_approve_token(&self, token: &str) -> Option<(Uuid, PersonChannel, Option<Uuid>)> {
        // Fixed work whatever the input, as in `open`.
        let mut raw = [0u8; APPROVE_LEN];
        let (len, with_person) = match token.len() {
            50 => (APPROVE_LEN_V1, false),
            _ => (APPROVE_LEN, true),
        };
        let ok_len = (token.len() == 50 || token.len() == 71)
            && URL_SAFE_NO_PAD
                .decode_slice(token.as_bytes(), &mut raw)
                .map(|n| n == len)
                .unwrap_or(false);
        let id = Uuid::from_slice(&raw[..16]).ok()?;
        let code = raw[16];
        let person = with_person
            .then(|| Uuid::from_slice(&raw[17..33]).ok())
            .flatten();
        let mac_at = if with_person { 33 } else { 17 };
        let verified = self
            .approve_mac(code, id, person)
            .verify_truncated_left(&raw[mac_at..mac_at + MAC_LEN])
            .is_ok();
        let channel = PersonChannel::from_code(code);
        if ok_len && verified {
            channel.map(|c| (id, c, person))
        } else {
            None
        }
    }

    /// The cookie of a device bound to an inbox.
    pub fn device_token(&self, device_id: Uuid) -> String {
        self.token(Purpose::Device, device_id)
    }

    /// The device a device cookie names, if the cookie is genuine.
    pub fn open_device_token(&self, token: &str) -> Option<Uuid> {
        self.open(Purpose::Device, token)
    }

    fn approve_mac(&self, code: u8, id: Uuid, person: Option<Uuid>) -> HmacSha256 {
        let mut mac = self.keyed.clone();
        mac.update(APPROVE_TAG);
        mac.update(&[code]);
        mac.update(id.as_bytes());
        if let Some(person) = person {
            mac.update(person.as_bytes());
        }
        mac
    }

    fn mac(&self, purpose: Purpose, id: Uuid) -> HmacSha256 {
        let mut mac = self.keyed.clone();
        mac.update(purpose.tag());
        mac.update(id.as_bytes());
        mac
    }

    fn token(&self, purpose: Purpose, id: Uuid) -> String {
        let tag = self.mac(purpose, id).finalize().into_bytes();
        let mut raw = Vec::with_capacity(16 + MAC_LEN);
        raw.extend_from_slice(id.as_bytes());
        raw.extend_from_slice(&tag[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(raw)
    }

    fn open(&self, purpose: Purpose, token: &str) -> Option<Uuid> {
        // Fixed work whatever the input: decode into a fixed buffer, always compute a MAC.
        let mut raw = [0u8; 16 + MAC_LEN];
        let ok_len = token.len() == 48
            && URL_SAFE_NO_PAD
                .decode_slice(token.as_bytes(), &mut raw)
                .map(|n| n == raw.len())
                .unwrap_or(false);
        let id = Uuid::from_slice(&raw[..16]).ok()?;
        let verified = self
            .mac(purpose, id)
            .verify_truncated_left(&raw[16..])
            .is_ok();
        (ok_len && verified).then_some(id)
    }
}

/// A new API key: `sk_` and 256 random bits, base64url.
pub fn generate_api_key() -> String {
    let mut bytes = [0u8; 32];
    os_random(&mut bytes);
    format!("sk_{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// A new webhook signing secret: `whsec_` and 256 random bits, base64 (Standard Webhooks).
pub fn generate_webhook_secret() -> String {
    let mut bytes = [0u8; 32];
    os_random(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The form an API key is stored and looked up in.
pub fn hash_api_key(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

/// SHA-256 of some bytes, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Fills `buf` from the operating system's random source.
fn os_random(buf: &mut [u8]) {
    // Without an OS random source no secret can be made safely: stopping is the only answer.
    rand::rngs::OsRng
        .try_fill_bytes(buf)
        .expect("the operating system's random source failed");
}

/// Lowercase hex. Every API request hashes its key through here: `hex::encode` pushes one
/// `char` at a time (some 2 000 instructions for a key's hash), `encode_to_slice` writes
/// the bytes from a table.
fn hex(bytes: &[u8]) -> String {
    let mut out = vec![0; bytes.len() * 2];
    hex::encode_to_slice(bytes, &mut out).expect("the buffer is twice the input");
    String::from_utf8(out).expect("hex digits are ASCII")
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    hex::decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> Tokens {
        Tokens::from_key_hex(&Tokens::generate_key_hex()).unwrap()
    }

    #[test]
    fn a_key_is_kept_as_its_sha256_in_lowercase_hex() {
        // The hash the keys stored so far were made with: it must not change.
        assert_eq!(
            hash_api_key("sk_test"),
            "12b2820cf1639904311da5771de1e5bb65c77073fdc7c555df395942df42896b"
        );
        assert_eq!(hex(&[0x00, 0x0f, 0xab, 0xff]), "000fabff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn an_answer_token_opens_its_decision() {
        let t = tokens();
        let id = Uuid::now_v7();
        let token = t.answer_token(id);
        assert_eq!(token.len(), 48);
        assert_eq!(t.open_answer_token(&token), Some(id));
    }

    #[test]
    fn a_feed_token_does_not_open_a_decision() {
        let t = tokens();
        let id = Uuid::now_v7();
        assert_eq!(t.open_answer_token(&t.feed_token(id)), None);
        assert_eq!(t.open_feed_token(&t.feed_token(id)), Some(id));
    }

    #[test]
    fn a_tampered_or_foreign_token_is_refused() {
        let t = tokens();
        let id = Uuid::now_v7();
        let mut token = t.answer_token(id).into_bytes();
        token[40] = if token[40] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            t.open_answer_token(std::str::from_utf8(&token).unwrap()),
            None
        );
        assert_eq!(tokens().open_answer_token(&t.answer_token(id)), None);
        for junk in ["", "x", "%%%%", &"A".repeat(48), &"A".repeat(4000)] {
            assert_eq!(t.open_answer_token(junk), None);
        }
    }

    #[test]
    fn an_approval_token_is_not_the_answer_token_and_names_its_channel() {
        let t = tokens();
        let id = Uuid::now_v7();
        let mut seen = vec![t.answer_token(id)];
        let person = Uuid::now_v7();
        for c in PersonChannel::ALL {
            let token = t.approve_token(id, c, person);
            assert_eq!(token.len(), 71);
            assert_eq!(t.open_approve_token(&token), Some((id, c, Some(person))));
            assert_eq!(t.open_answer_token(&token), None);
            assert!(!seen.contains(&token));
            seen.push(token);
        }
        assert_eq!(t.open_approve_token(&t.answer_token(id)), None);
        assert_eq!(
            tokens().open_approve_token(&t.approve_token(id, PersonChannel::Feed, person)),
            None
        );
    }

    #[test]
    fn an_approval_tokens_channel_cannot_be_swapped() {
        let t = tokens();
        let id = Uuid::now_v7();
        let mut raw = URL_SAFE_NO_PAD
            .decode(t.approve_token(id, PersonChannel::Ntfy, Uuid::now_v7()))
            .unwrap();
        raw[16] = PersonChannel::Feed.code();
        assert_eq!(t.open_approve_token(&URL_SAFE_NO_PAD.encode(&raw)), None);
        raw[16] = PersonChannel::Ntfy.code();
        raw[20] ^= 1;
        assert_eq!(t.open_approve_token(&URL_SAFE_NO_PAD.encode(&raw)), None);
        raw[20] ^= 1;
        raw[16] = 0;
        assert_eq!(t.open_approve_token(&URL_SAFE_NO_PAD.encode(&raw)), None);
        for junk in ["", "x", &"A".repeat(50), &"A".repeat(71), &"A".repeat(4000)] {
            assert_eq!(t.open_approve_token(junk), None);
        }
    }

    #[test]
    fn an_approval_token_from_before_people_still_opens() {
        let t = tokens();
        let id = Uuid::now_v7();
        let tag = t
            .approve_mac(PersonChannel::Email.code(), id, None)
            .finalize()
            .into_bytes();
        let mut raw = id.as_bytes().to_vec();
        raw.push(PersonChannel::Email.code());
        raw.extend_from_slice(&tag[..MAC_LEN]);
        let token = URL_SAFE_NO_PAD.encode(raw);
        assert_eq!(token.len(), 50);
        assert_eq!(
            t.open_approve_token(&token),
            Some((id, PersonChannel::Email, None))
        );
    }

    #[test]
    fn a_device_cookie_opens_only_a_device() {
        let t = tokens();
        let id = Uuid::now_v7();
        assert_eq!(t.open_device_token(&t.device_token(id)), Some(id));
        assert_eq!(t.open_feed_token(&t.device_token(id)), None);
        assert_eq!(t.open_device_token(&t.feed_token(id)), None);
    }

    #[test]
    fn api_keys_are_random_and_hashed() {
        let (a, b) = (generate_api_key(), generate_api_key());
        assert!(a.starts_with("sk_") && a.len() == 46);
        assert_ne!(a, b);
        assert_eq!(hash_api_key(&a), hash_api_key(&a));
        assert_ne!(hash_api_key(&a), a);
        assert_eq!(hash_api_key(&a).len(), 64);
    }
}
