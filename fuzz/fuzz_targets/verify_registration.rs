//! A passkey registration (`navigator.credentials.create`) from raw bytes: the client data
//! JSON, framed by its length, then the attestation object.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sayso_fuzz::webauthn::registration(data);
});
