//! The passkey checks, `verify_registration` and `verify_assertion`, on raw bytes: the
//! browser's parts come straight from whoever posts them, so any bytes at all must give a
//! refusal, never a panic, and an accepted one must be what the relying party asked for.
//!
//! Every input is checked against one fixed site, challenge key, subject and time. The seeds
//! (`seeds/verify_registration/`, `seeds/verify_assertion/`) are a registration and an
//! assertion made for exactly these by the software authenticator of sayso's own unit tests
//! (`src/domain/webauthn/tests.rs`, which checks that they still verify).

use sayso::domain::webauthn::{
    Assertion, Ceremony, Expected, check_challenge, unb64, verify_assertion, verify_registration,
};
use uuid::Uuid;

/// What the seeds were made for.
pub const ORIGIN: &str = "https://ask.example.com";
pub const RP_ID: &str = "ask.example.com";
pub const CHALLENGE_KEY: &[u8] = b"sayso fuzz challenge key";
pub const SUBJECT: Uuid = Uuid::from_u128(1);
pub const NOW: i64 = 1_800_000_000;

fn expected(ceremony: Ceremony) -> Expected<'static> {
    Expected {
        origin: ORIGIN,
        rp_id: RP_ID,
        ceremony,
        subject: SUBJECT,
        key: CHALLENGE_KEY,
        now: NOW,
    }
}

/// Splits a part off `data` that is prefixed with its length (two bytes, big-endian).
fn framed(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = data.split_first_chunk::<2>()?;
    let len = usize::from(u16::from_be_bytes(*len));
    (rest.len() >= len).then(|| rest.split_at(len))
}

/// The challenge the client data carries, as `check_client_data` reads it.
fn client_data_challenge(client_data_json: &[u8]) -> Option<Vec<u8>> {
    let v: serde_json::Value = serde_json::from_slice(client_data_json).ok()?;
    unb64(v["challenge"].as_str()?, "challenge").ok()
}

/// `[client data length (2)][client data JSON][attestation object]`.
pub fn registration(data: &[u8]) {
    let Some((client_data, attestation)) = framed(data) else {
        return;
    };
    let e = expected(Ceremony::Register);
    let Ok(cred) = verify_registration(client_data, attestation, &e) else {
        return;
    };
    assert!(
        (1..=1023).contains(&cred.credential_id.len()),
        "a credential id of {} bytes accepted",
        cred.credential_id.len()
    );
    assert_eq!(
        cred.public_key.len(),
        65,
        "the key is an uncompressed P-256 point"
    );
    assert_eq!(
        cred.public_key[0], 0x04,
        "the key is an uncompressed P-256 point"
    );
    assert_eq!(check_challenge(&cred.challenge, &e), Ok(()));
    assert_eq!(
        client_data_challenge(client_data).as_deref(),
        Some(cred.challenge.as_slice()),
        "the challenge to spend is the one the client data carries"
    );
}

/// `[stored counter (4)][public key, SEC1 (65)][client data length (2)][client data JSON]
/// [authenticator data length (2)][authenticator data][signature, DER]`.
pub fn assertion(data: &[u8]) {
    let Some((stored, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let stored = u32::from_be_bytes(*stored);
    let Some((public_key, rest)) = rest.split_first_chunk::<65>() else {
        return;
    };
    let Some((client_data, rest)) = framed(rest) else {
        return;
    };
    let Some((authenticator_data, signature)) = framed(rest) else {
        return;
    };
    let a = Assertion {
        credential_id: vec![1, 2, 3, 4],
        client_data_json: client_data.to_vec(),
        authenticator_data: authenticator_data.to_vec(),
        signature: signature.to_vec(),
    };
    let e = expected(Ceremony::StepUp);
    let Ok(verified) = verify_assertion(&a, public_key, stored, &e) else {
        return;
    };
    assert!(
        verified.sign_count > stored || (verified.sign_count == 0 && stored == 0),
        "the counter went from {stored} to {}",
        verified.sign_count
    );
    assert!(authenticator_data.len() >= 37);
    assert_eq!(authenticator_data[32] & 0x05, 0x05, "present and verified");
    assert_eq!(check_challenge(&verified.challenge, &e), Ok(()));
    assert_eq!(
        client_data_challenge(client_data).as_deref(),
        Some(verified.challenge.as_slice()),
        "the challenge to spend is the one the client data carries"
    );
    // Another ceremony or subject takes none of it.
    for other in [
        expected(Ceremony::Register),
        Expected {
            subject: Uuid::from_u128(2),
            ..e
        },
    ] {
        assert!(verify_assertion(&a, public_key, stored, &other).is_err());
    }
}
