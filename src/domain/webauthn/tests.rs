use super::*;
use ciborium::Value as Cbor;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{DerSignature, SigningKey};
use serde_json::json;

const ORIGIN: &str = "https://ask.example.com";
const RP: &str = "ask.example.com";
const KEY: &[u8] = b"challenge key";

/// A software authenticator: a fixed P-256 key, a counter, the flags it sets.
struct Authenticator {
    key: SigningKey,
    id: Vec<u8>,
    count: u32,
    flags: u8,
}

impl Authenticator {
    fn new() -> Self {
        Authenticator {
            key: SigningKey::from_slice(&[7u8; 32]).unwrap(),
            id: vec![1, 2, 3, 4],
            count: 0,
            flags: FLAG_UP | FLAG_UV,
        }
    }

    fn public(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    fn client_data(kind: &str, challenge: &[u8], origin: &str) -> Vec<u8> {
        json!({"type": kind, "challenge": b64(challenge), "origin": origin, "crossOrigin": false})
            .to_string()
            .into_bytes()
    }

    fn auth_data(&self, rp: &str, flags: u8) -> Vec<u8> {
        let mut a = Sha256::digest(rp.as_bytes()).to_vec();
        a.push(flags);
        a.extend_from_slice(&self.count.to_be_bytes());
        a
    }

    fn register(&self, challenge: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut auth = self.auth_data(RP, self.flags | FLAG_AT);
        auth.extend_from_slice(&[0u8; 16]);
        auth.extend_from_slice(&(self.id.len() as u16).to_be_bytes());
        auth.extend_from_slice(&self.id);
        let point = self.key.verifying_key().to_encoded_point(false);
        let cose = Cbor::Map(vec![
            (Cbor::from(1), Cbor::from(2)),
            (Cbor::from(3), Cbor::from(-7)),
            (Cbor::from(-1), Cbor::from(1)),
            (Cbor::from(-2), Cbor::Bytes(point.x().unwrap().to_vec())),
            (Cbor::from(-3), Cbor::Bytes(point.y().unwrap().to_vec())),
        ]);
        ciborium::into_writer(&cose, &mut auth).unwrap();
        let att = Cbor::Map(vec![
            (Cbor::from("fmt"), Cbor::from("none")),
            (Cbor::from("attStmt"), Cbor::Map(vec![])),
            (Cbor::from("authData"), Cbor::Bytes(auth)),
        ]);
        let mut att_bytes = Vec::new();
        ciborium::into_writer(&att, &mut att_bytes).unwrap();
        (
            Self::client_data("webauthn.create", challenge, ORIGIN),
            att_bytes,
        )
    }

    fn sign(&mut self, challenge: &[u8], origin: &str, rp: &str) -> Assertion {
        self.count += 1;
        let client_data_json = Self::client_data("webauthn.get", challenge, origin);
        let authenticator_data = self.auth_data(rp, self.flags);
        let mut signed = authenticator_data.clone();
        signed.extend_from_slice(&Sha256::digest(&client_data_json));
        let sig: DerSignature = self.key.sign(&signed);
        Assertion {
            credential_id: self.id.clone(),
            client_data_json,
            authenticator_data,
            signature: sig.as_bytes().to_vec(),
        }
    }
}

fn expected(ceremony: Ceremony, subject: Uuid) -> Expected<'static> {
    Expected {
        origin: ORIGIN,
        rp_id: RP,
        ceremony,
        subject,
        key: KEY,
        now: 1_800_000_000,
    }
}

fn challenge(e: &Expected) -> Vec<u8> {
    issue_challenge(e.key, e.ceremony, e.subject, e.now, [9u8; NONCE_LEN])
}

#[test]
fn a_registration_gives_the_key_and_an_assertion_verifies_with_it() {
    let inbox = Uuid::now_v7();
    let reg = expected(Ceremony::Register, inbox);
    let mut auth = Authenticator::new();
    let (cd, att) = auth.register(&challenge(&reg));
    let cred = verify_registration(&cd, &att, &reg).unwrap();
    assert_eq!(cred.credential_id, auth.id);
    assert_eq!(cred.public_key, auth.public());

    let step = expected(Ceremony::StepUp, Uuid::now_v7());
    let a = auth.sign(&challenge(&step), ORIGIN, RP);
    let v = verify_assertion(&a, &cred.public_key, cred.sign_count, &step).unwrap();
    assert_eq!(v.sign_count, 1);
}

#[test]
fn a_bad_signature_is_refused() {
    let e = expected(Ceremony::StepUp, Uuid::now_v7());
    let mut auth = Authenticator::new();
    let mut a = auth.sign(&challenge(&e), ORIGIN, RP);
    // Signed by another key.
    let other = SigningKey::from_slice(&[8u8; 32]).unwrap();
    let other_pub = other.verifying_key().to_encoded_point(false);
    assert_eq!(
        verify_assertion(&a, other_pub.as_bytes(), 0, &e),
        Err(WebauthnError::BadSignature)
    );
    // Or changed after signing.
    a.authenticator_data[36] ^= 0x10;
    assert_eq!(
        verify_assertion(&a, &auth.public(), 0, &e),
        Err(WebauthnError::BadSignature)
    );
    a.signature = vec![0x30, 0x00];
    assert_eq!(
        verify_assertion(&a, &auth.public(), 0, &e),
        Err(WebauthnError::BadSignature)
    );
}

#[test]
fn another_origin_or_rp_id_is_refused() {
    let e = expected(Ceremony::StepUp, Uuid::now_v7());
    let mut auth = Authenticator::new();
    let a = auth.sign(&challenge(&e), "https://evil.example", RP);
    assert!(matches!(
        verify_assertion(&a, &auth.public(), 0, &e),
        Err(WebauthnError::WrongOrigin { .. })
    ));
    let a = auth.sign(&challenge(&e), ORIGIN, "evil.example");
    assert_eq!(
        verify_assertion(&a, &auth.public(), 0, &e),
        Err(WebauthnError::WrongRpId(RP.into()))
    );
}

#[test]
fn a_challenge_counts_only_for_its_ceremony_subject_and_time() {
    let decision = Uuid::now_v7();
    let e = expected(Ceremony::StepUp, decision);
    let mut auth = Authenticator::new();
    let public = auth.public();
    // Made for another decision.
    let other = expected(Ceremony::StepUp, Uuid::now_v7());
    let a = auth.sign(&challenge(&other), ORIGIN, RP);
    assert_eq!(
        verify_assertion(&a, &public, 0, &e),
        Err(WebauthnError::WrongChallenge)
    );
    // Made for adding a passkey.
    let reg = expected(Ceremony::Register, decision);
    let a = auth.sign(&challenge(&reg), ORIGIN, RP);
    assert_eq!(
        verify_assertion(&a, &public, 0, &e),
        Err(WebauthnError::WrongChallenge)
    );
    // Too old.
    let late = Expected {
        now: e.now + CHALLENGE_LIFETIME_S + 1,
        ..e
    };
    let a = auth.sign(&challenge(&e), ORIGIN, RP);
    assert_eq!(
        verify_assertion(&a, &public, 0, &late),
        Err(WebauthnError::ExpiredChallenge)
    );
    // Its last second: taken no longer.
    let last = Expected {
        now: e.now + CHALLENGE_LIFETIME_S,
        ..e
    };
    let a = auth.sign(&challenge(&e), ORIGIN, RP);
    assert_eq!(
        verify_assertion(&a, &public, 0, &last),
        Err(WebauthnError::ExpiredChallenge)
    );
}

#[test]
fn a_replayed_assertion_is_refused_by_its_counter() {
    let e = expected(Ceremony::StepUp, Uuid::now_v7());
    let mut auth = Authenticator::new();
    let a = auth.sign(&challenge(&e), ORIGIN, RP);
    let v = verify_assertion(&a, &auth.public(), 0, &e).unwrap();
    // The same assertion again: its counter is no longer above the stored one. (The
    // service also refuses its challenge, spent the first time.)
    assert_eq!(
        verify_assertion(&a, &auth.public(), v.sign_count, &e),
        Err(WebauthnError::CounterWentBack { got: 1, stored: 1 })
    );
}

#[test]
fn a_person_not_verified_or_not_present_is_refused() {
    let e = expected(Ceremony::StepUp, Uuid::now_v7());
    let mut auth = Authenticator::new();
    auth.flags = FLAG_UP;
    let a = auth.sign(&challenge(&e), ORIGIN, RP);
    assert_eq!(
        verify_assertion(&a, &auth.public(), 0, &e),
        Err(WebauthnError::NoUserVerification)
    );
    auth.flags = FLAG_UV;
    let a = auth.sign(&challenge(&e), ORIGIN, RP);
    assert_eq!(
        verify_assertion(&a, &auth.public(), 0, &e),
        Err(WebauthnError::NoUserPresence)
    );
}

#[test]
fn a_registration_of_the_wrong_type_or_key_is_refused() {
    let reg = expected(Ceremony::Register, Uuid::now_v7());
    let auth = Authenticator::new();
    let (_, att) = auth.register(&challenge(&reg));
    let cd = Authenticator::client_data("webauthn.get", &challenge(&reg), ORIGIN);
    assert!(matches!(
        verify_registration(&cd, &att, &reg),
        Err(WebauthnError::WrongType { .. })
    ));
    let (cd, _) = auth.register(&challenge(&reg));
    assert_eq!(
        verify_registration(&cd, b"\xa0", &reg),
        Err(WebauthnError::Attestation("no authData"))
    );
    assert_eq!(
        verify_registration(&cd, b"junk", &reg),
        Err(WebauthnError::Attestation("not CBOR"))
    );
    assert!(matches!(
        verify_registration(b"{", &att, &reg),
        Err(WebauthnError::ClientData(_))
    ));
}

#[test]
fn a_spent_challenge_is_remembered_for_as_long_as_it_is_accepted() {
    // The service keeps the record of a spent challenge until `spent_record_expiry`, and the
    // store sweeps records whose expiry is before now (in milliseconds), while the check
    // reads whole seconds. At no moment may a challenge be accepted with its record swept.
    let e = expected(Ceremony::StepUp, Uuid::now_v7());
    let c = challenge(&e);
    let kept_until_ms = spent_record_expiry(&c) * 1000;
    let end_ms = (e.now + CHALLENGE_LIFETIME_S + 180) * 1000;
    for ms in (e.now * 1000..=end_ms).step_by(50) {
        let at = Expected {
            now: ms.div_euclid(1000),
            ..e
        };
        if check_challenge(&c, &at).is_ok() {
            assert!(
                kept_until_ms >= ms,
                "accepted {} ms after it was issued, its record swept {} ms before",
                ms - e.now * 1000,
                ms - kept_until_ms
            );
        }
    }
}

/// The seeds of the fuzz targets `verify_registration` and `verify_assertion`
/// (`fuzz/seeds/<target>/valid.bin`): a registration and an assertion this authenticator
/// made for the site, key, subject and time those targets check with (`fuzz/src/webauthn.rs`
/// holds the same values). They must keep verifying, or the fuzzer starts from nothing that
/// passes; `SAYSO_WRITE_FUZZ_SEEDS=1` writes them again.
#[test]
fn the_fuzz_seeds_are_a_valid_registration_and_assertion() {
    let reg = Expected {
        origin: ORIGIN,
        rp_id: RP,
        ceremony: Ceremony::Register,
        subject: Uuid::from_u128(1),
        key: b"sayso fuzz challenge key",
        now: 1_800_000_000,
    };
    let mut auth = Authenticator::new();
    let (cd, att) = auth.register(&challenge(&reg));
    verify_registration(&cd, &att, &reg).expect("the registration seed verifies");
    let mut registration = (cd.len() as u16).to_be_bytes().to_vec();
    registration.extend_from_slice(&cd);
    registration.extend_from_slice(&att);

    let step = Expected {
        ceremony: Ceremony::StepUp,
        ..reg
    };
    let a = auth.sign(&challenge(&step), ORIGIN, RP);
    verify_assertion(&a, &auth.public(), 0, &step).expect("the assertion seed verifies");
    let mut assertion = 0u32.to_be_bytes().to_vec();
    assertion.extend_from_slice(&auth.public());
    for part in [&a.client_data_json, &a.authenticator_data] {
        assertion.extend_from_slice(&(part.len() as u16).to_be_bytes());
        assertion.extend_from_slice(part);
    }
    assertion.extend_from_slice(&a.signature);

    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    for (target, bytes) in [
        ("verify_registration", registration),
        ("verify_assertion", assertion),
    ] {
        let file = seeds.join(target).join("valid.bin");
        if std::env::var_os("SAYSO_WRITE_FUZZ_SEEDS").is_some() {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &bytes).unwrap();
        }
        let committed = std::fs::read(&file).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (SAYSO_WRITE_FUZZ_SEEDS=1 writes it)",
                file.display()
            )
        });
        assert_eq!(
            committed,
            bytes,
            "{} is not what the authenticator makes",
            file.display()
        );
    }
}
