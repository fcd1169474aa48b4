//! Passkeys (WebAuthn Level 2), the relying party's side, with no IO: reading a new
//! credential out of a registration and checking an assertion against a stored one.
//!
//! Only ES256 (ECDSA on P-256 with SHA-256) is taken: it is what every platform authenticator
//! offers, and the creation options ask for nothing else. Attestation is not checked (the
//! options ask for `"none"`): a passkey is trusted because the person added it from their own
//! feed, not because of who made the authenticator.
//!
//! Challenges are stateless: `issued_at ‖ nonce ‖ HMAC(key, purpose ‖ subject ‖ issued_at ‖
//! nonce)`, so any replica can check one without a lookup; the service makes each single-use
//! by recording it once spent.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use uuid::Uuid;

mod cose;

/// How long a challenge may be answered after it was handed out: while fewer whole seconds
/// than this have passed since.
pub const CHALLENGE_LIFETIME_S: i64 = 300;
/// How far one replica's clock may be from another's: a challenge issued up to this far in
/// the future is taken, and the record of a spent one is kept this much longer.
pub const CLOCK_SKEW_S: i64 = 60;
/// How much of a passkey's id is shown to tell it from others (the notice of one added,
/// `sayso person passkeys`); `--remove` takes it.
pub const ID_PREFIX_CHARS: usize = 12;
/// COSE algorithm number of ES256.
pub const ES256: i64 = -7;

const NONCE_LEN: usize = 16;
const MAC_LEN: usize = 16;
/// Bytes of a challenge: issued-at seconds, nonce, MAC.
pub const CHALLENGE_LEN: usize = 8 + NONCE_LEN + MAC_LEN;

/// Authenticator data flags (WebAuthn §6.1).
const FLAG_UP: u8 = 0x01;
const FLAG_UV: u8 = 0x04;
const FLAG_AT: u8 = 0x40;

/// What a challenge is for; part of its MAC so one for adding a passkey never answers an
/// approval, and one for an approval never answers another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ceremony {
    /// Making a new passkey for the person `subject`.
    Register,
    /// A person's existing passkey consenting to one more: `subject` is
    /// [`add_passkey_subject`] of the person and the registration's challenge, so the
    /// assertion counts for that one registration only.
    AddPasskey,
    /// Allowing the approval `subject`.
    StepUp,
}

impl Ceremony {
    fn tag(self) -> &'static [u8] {
        match self {
            Ceremony::Register => b"sayso passkey register v1",
            Ceremony::AddPasskey => b"sayso passkey add-with-existing v1",
            Ceremony::StepUp => b"sayso passkey step-up v1",
        }
    }

    fn client_data_type(self) -> &'static str {
        match self {
            Ceremony::Register => "webauthn.create",
            Ceremony::AddPasskey | Ceremony::StepUp => "webauthn.get",
        }
    }
}

/// The subject of the `AddPasskey` challenge that goes with the registration challenge
/// `registration` of `person`: both are handed out together, and the assertion is checked
/// against the challenge the registration answered.
pub fn add_passkey_subject(person: Uuid, registration: &[u8]) -> Uuid {
    let digest = Sha256::new()
        .chain_update(b"sayso passkey add-with-existing subject")
        .chain_update(person.as_bytes())
        .chain_update(registration)
        .finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

/// Why a registration or an assertion was refused; each says what is wrong, for the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebauthnError {
    #[error("{0} is not valid base64url")]
    Encoding(&'static str),
    #[error("the client data is not valid: {0}")]
    ClientData(String),
    #[error("the client data is of type {got:?}, not {want:?}")]
    WrongType { got: String, want: &'static str },
    #[error("the passkey was asked for by {got:?}, not by this site ({want:?})")]
    WrongOrigin { got: String, want: String },
    #[error("the passkey was asked for from inside another site's frame")]
    CrossOrigin,
    #[error("the challenge is not one this server handed out for this")]
    WrongChallenge,
    #[error("the challenge has expired: ask again")]
    ExpiredChallenge,
    #[error("the challenge was already used")]
    ReusedChallenge,
    #[error("the authenticator data is not valid: {0}")]
    AuthenticatorData(&'static str),
    #[error("the passkey belongs to another site than {0:?}")]
    WrongRpId(String),
    #[error("the authenticator did not see the person present (user presence flag missing)")]
    NoUserPresence,
    #[error("the authenticator did not verify the person (user verification flag missing)")]
    NoUserVerification,
    #[error("the attestation object is not valid: {0}")]
    Attestation(&'static str),
    #[error("only ES256 (P-256) passkeys are supported")]
    UnsupportedKey,
    #[error("the signature does not verify with this passkey")]
    BadSignature,
    #[error(
        "the passkey's signature counter went back ({got} after {stored}): it may have been copied"
    )]
    CounterWentBack { got: u32, stored: u32 },
}

/// What the server expects of a ceremony: the site, and the challenge it handed out.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The public URL's origin, `https://ask.example.com`.
    pub origin: &'a str,
    /// The public URL's host, `ask.example.com`.
    pub rp_id: &'a str,
    pub ceremony: Ceremony,
    /// What the challenge is bound to: the person (register), the person and registration
    /// (add with an existing passkey), or the decision (step-up).
    pub subject: Uuid,
    /// The key challenges are made with.
    pub key: &'a [u8],
    /// Unix seconds, now.
    pub now: i64,
}

/// A passkey read from a registration, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCredential {
    pub credential_id: Vec<u8>,
    /// The P-256 public key, SEC1 uncompressed (65 bytes).
    pub public_key: Vec<u8>,
    pub sign_count: u32,
    /// The challenge it answered, to be spent.
    pub challenge: Vec<u8>,
}

/// A passkey as stored for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPasskey {
    /// base64url of the credential id.
    pub credential_id: String,
    /// base64url of the SEC1 uncompressed P-256 point.
    pub public_key: String,
    pub sign_count: u32,
    pub added_at: OffsetDateTime,
    /// When it last allowed something (an approval, or adding another passkey).
    pub last_used_at: Option<OffsetDateTime>,
    /// The browser it was added from (its User-Agent, cut short), so that a person can tell
    /// their passkeys apart.
    pub user_agent: Option<String>,
}

/// An assertion as the page posts it: each part base64url, as the browser produced it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, serde::Serialize, utoipa::ToSchema)]
pub struct AssertionInput {
    /// The credential's id (`PublicKeyCredential.rawId`).
    pub id: String,
    /// `response.clientDataJSON`.
    pub client_data_json: String,
    /// `response.authenticatorData`.
    pub authenticator_data: String,
    /// `response.signature` (DER).
    pub signature: String,
}

/// A checked assertion: the counter to store, and the challenge to spend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub sign_count: u32,
    pub challenge: Vec<u8>,
}

type HmacSha256 = Hmac<Sha256>;

fn challenge_mac(key: &[u8], ceremony: Ceremony, subject: Uuid, head: &[u8]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(ceremony.tag());
    mac.update(subject.as_bytes());
    mac.update(head);
    mac
}

/// A new challenge for `ceremony` on `subject`; `nonce` comes from the OS random source.
pub fn issue_challenge(
    key: &[u8],
    ceremony: Ceremony,
    subject: Uuid,
    now: i64,
    nonce: [u8; NONCE_LEN],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(CHALLENGE_LEN);
    out.extend_from_slice(&now.to_be_bytes());
    out.extend_from_slice(&nonce);
    let tag = challenge_mac(key, ceremony, subject, &out)
        .finalize()
        .into_bytes();
    out.extend_from_slice(&tag[..MAC_LEN]);
    out
}

/// Checks that `challenge` was made by this server for this ceremony and subject, and is
/// still fresh. Spending it is the caller's part.
pub fn check_challenge(challenge: &[u8], expected: &Expected) -> Result<(), WebauthnError> {
    if challenge.len() != CHALLENGE_LEN {
        return Err(WebauthnError::WrongChallenge);
    }
    let (head, tag) = challenge.split_at(8 + NONCE_LEN);
    challenge_mac(expected.key, expected.ceremony, expected.subject, head)
        .verify_truncated_left(tag)
        .map_err(|_| WebauthnError::WrongChallenge)?;
    let issued = i64::from_be_bytes(head[..8].try_into().expect("8 bytes"));
    // A challenge from the future (a replica's clock ahead) is fine within the skew.
    if expected.now - issued >= CHALLENGE_LIFETIME_S || issued - expected.now > CLOCK_SKEW_S {
        return Err(WebauthnError::ExpiredChallenge);
    }
    Ok(())
}

/// Until when (unix seconds) the record of a spent challenge is kept, so that it is never
/// swept while the challenge is still taken: a challenge is taken before `issued +
/// CHALLENGE_LIFETIME_S` by the checking replica's clock, and the replica sweeping may be up
/// to `CLOCK_SKEW_S` ahead of it.
pub fn spent_record_expiry(challenge: &[u8]) -> i64 {
    challenge
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(i64::from_be_bytes)
        .unwrap_or(0)
        + CHALLENGE_LIFETIME_S
        + CLOCK_SKEW_S
}

/// base64url without padding (what browsers and the page's script use).
pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Reads base64url, with or without padding; `what` names the field in the error.
pub fn unb64(s: &str, what: &'static str) -> Result<Vec<u8>, WebauthnError> {
    URL_SAFE_NO_PAD
        .decode(s.trim().trim_end_matches('='))
        .map_err(|_| WebauthnError::Encoding(what))
}

#[derive(Deserialize)]
struct ClientData {
    #[serde(rename = "type")]
    kind: String,
    challenge: String,
    origin: String,
    #[serde(rename = "crossOrigin", default)]
    cross_origin: bool,
}

/// Checks the client data (type, challenge, origin) and returns the challenge it carries.
fn check_client_data(json: &[u8], expected: &Expected) -> Result<Vec<u8>, WebauthnError> {
    let cd: ClientData =
        serde_json::from_slice(json).map_err(|e| WebauthnError::ClientData(e.to_string()))?;
    let want = expected.ceremony.client_data_type();
    if cd.kind != want {
        return Err(WebauthnError::WrongType { got: cd.kind, want });
    }
    if cd.origin != expected.origin {
        return Err(WebauthnError::WrongOrigin {
            got: cd.origin,
            want: expected.origin.to_string(),
        });
    }
    if cd.cross_origin {
        return Err(WebauthnError::CrossOrigin);
    }
    let challenge = unb64(&cd.challenge, "the client data's challenge")
        .map_err(|_| WebauthnError::WrongChallenge)?;
    check_challenge(&challenge, expected)?;
    Ok(challenge)
}

/// The fixed head of authenticator data: rpIdHash, flags, counter; checked for this site and
/// for a present, verified person.
fn check_auth_data(auth: &[u8], expected: &Expected) -> Result<(u8, u32), WebauthnError> {
    if auth.len() < 37 {
        return Err(WebauthnError::AuthenticatorData("shorter than 37 bytes"));
    }
    let rp_hash = Sha256::digest(expected.rp_id.as_bytes());
    if auth[..32] != rp_hash[..] {
        return Err(WebauthnError::WrongRpId(expected.rp_id.to_string()));
    }
    let flags = auth[32];
    if flags & FLAG_UP == 0 {
        return Err(WebauthnError::NoUserPresence);
    }
    if flags & FLAG_UV == 0 {
        return Err(WebauthnError::NoUserVerification);
    }
    let count = u32::from_be_bytes(auth[33..37].try_into().expect("4 bytes"));
    Ok((flags, count))
}

/// Reads a registration (`navigator.credentials.create`): the client data and the
/// attestation object, both as the browser gave them.
pub fn verify_registration(
    client_data_json: &[u8],
    attestation_object: &[u8],
    expected: &Expected,
) -> Result<NewCredential, WebauthnError> {
    let challenge = check_client_data(client_data_json, expected)?;
    let auth = cose::auth_data(attestation_object)?;
    let (flags, sign_count) = check_auth_data(&auth, expected)?;
    if flags & FLAG_AT == 0 {
        return Err(WebauthnError::AuthenticatorData(
            "no attested credential data",
        ));
    }
    let (credential_id, public_key) = cose::attested_credential(&auth[37..])?;
    Ok(NewCredential {
        credential_id,
        public_key,
        sign_count,
        challenge,
    })
}

/// The parts of an assertion, decoded.
#[derive(Debug, Clone)]
pub struct Assertion {
    pub credential_id: Vec<u8>,
    pub client_data_json: Vec<u8>,
    pub authenticator_data: Vec<u8>,
    pub signature: Vec<u8>,
}

impl Assertion {
    pub fn decode(input: &AssertionInput) -> Result<Assertion, WebauthnError> {
        Ok(Assertion {
            credential_id: unb64(&input.id, "passkey.id")?,
            client_data_json: unb64(&input.client_data_json, "passkey.client_data_json")?,
            authenticator_data: unb64(&input.authenticator_data, "passkey.authenticator_data")?,
            signature: unb64(&input.signature, "passkey.signature")?,
        })
    }
}

/// Checks an assertion (`navigator.credentials.get`) made with the stored passkey
/// `public_key` (SEC1), whose counter stood at `stored_count`.
pub fn verify_assertion(
    a: &Assertion,
    public_key: &[u8],
    stored_count: u32,
    expected: &Expected,
) -> Result<Verified, WebauthnError> {
    let challenge = check_client_data(&a.client_data_json, expected)?;
    let (_, sign_count) = check_auth_data(&a.authenticator_data, expected)?;
    let key =
        VerifyingKey::from_sec1_bytes(public_key).map_err(|_| WebauthnError::UnsupportedKey)?;
    let signature = Signature::from_der(&a.signature).map_err(|_| WebauthnError::BadSignature)?;
    let mut signed = a.authenticator_data.clone();
    signed.extend_from_slice(&Sha256::digest(&a.client_data_json));
    key.verify(&signed, &signature)
        .map_err(|_| WebauthnError::BadSignature)?;
    // Authenticators without a counter send 0 every time; one that counts must go up.
    if (sign_count != 0 || stored_count != 0) && sign_count <= stored_count {
        return Err(WebauthnError::CounterWentBack {
            got: sign_count,
            stored: stored_count,
        });
    }
    Ok(Verified {
        sign_count,
        challenge,
    })
}

#[cfg(test)]
mod tests;
