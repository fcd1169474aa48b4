//! A passkey assertion (`navigator.credentials.get`) from raw bytes: the stored counter, the
//! public key, the client data JSON and the authenticator data (each framed by its length),
//! then the signature.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sayso_fuzz::webauthn::assertion(data);
});
