//! The CBOR of a registration: the attestation object's authenticator data, the credential
//! attested in it, and that credential's COSE key (ES256 on P-256 only).

use ciborium::Value as Cbor;
use p256::ecdsa::VerifyingKey;

use super::{ES256, WebauthnError};

/// Longest credential id WebAuthn allows.
const MAX_CREDENTIAL_ID: usize = 1023;

/// The `authData` of an attestation object (`{"fmt", "attStmt", "authData"}`, CBOR).
pub(super) fn auth_data(attestation_object: &[u8]) -> Result<Vec<u8>, WebauthnError> {
    let att: Cbor = ciborium::from_reader(attestation_object)
        .map_err(|_| WebauthnError::Attestation("not CBOR"))?;
    let Cbor::Map(entries) = att else {
        return Err(WebauthnError::Attestation("not a map"));
    };
    entries
        .into_iter()
        .find(|(k, _)| k.as_text() == Some("authData"))
        .and_then(|(_, v)| v.into_bytes().ok())
        .ok_or(WebauthnError::Attestation("no authData"))
}

/// The credential id and public key (SEC1) of the attested credential data, which follows
/// the 37 bytes of rpIdHash, flags and counter: aaguid (16), credential id length (2),
/// credential id, COSE key.
pub(super) fn attested_credential(rest: &[u8]) -> Result<(Vec<u8>, Vec<u8>), WebauthnError> {
    if rest.len() < 18 {
        return Err(WebauthnError::AuthenticatorData("attested data cut short"));
    }
    let id_len = usize::from(u16::from_be_bytes([rest[16], rest[17]]));
    if id_len == 0 || id_len > MAX_CREDENTIAL_ID || rest.len() < 18 + id_len {
        return Err(WebauthnError::AuthenticatorData("bad credential id length"));
    }
    let credential_id = rest[18..18 + id_len].to_vec();
    let mut key_bytes = &rest[18 + id_len..];
    let key: Cbor = ciborium::from_reader(&mut key_bytes)
        .map_err(|_| WebauthnError::AuthenticatorData("the public key is not CBOR"))?;
    Ok((credential_id, es256_key(&key)?))
}

/// The SEC1 point of a COSE EC2 key on P-256 for ES256; any other key is refused.
fn es256_key(key: &Cbor) -> Result<Vec<u8>, WebauthnError> {
    let Cbor::Map(entries) = key else {
        return Err(WebauthnError::UnsupportedKey);
    };
    let get = |label: i64| {
        entries
            .iter()
            .find(|(k, _)| k.as_integer().and_then(|i| i64::try_from(i).ok()) == Some(label))
            .map(|(_, v)| v)
    };
    let int = |label| {
        get(label)
            .and_then(Cbor::as_integer)
            .and_then(|i| i64::try_from(i).ok())
    };
    // kty 2 (EC2), alg -7 (ES256), crv 1 (P-256).
    if int(1) != Some(2) || int(3) != Some(ES256) || int(-1) != Some(1) {
        return Err(WebauthnError::UnsupportedKey);
    }
    let coord = |label| {
        get(label)
            .and_then(Cbor::as_bytes)
            .filter(|b| b.len() == 32)
    };
    let (Some(x), Some(y)) = (coord(-2), coord(-3)) else {
        return Err(WebauthnError::UnsupportedKey);
    };
    let mut point = Vec::with_capacity(65);
    point.push(0x04);
    point.extend_from_slice(x);
    point.extend_from_slice(y);
    VerifyingKey::from_sec1_bytes(&point).map_err(|_| WebauthnError::UnsupportedKey)?;
    Ok(point)
}
