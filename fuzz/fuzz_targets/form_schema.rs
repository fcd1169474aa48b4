//! The `schema` of a `form` decision from raw bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(schema) = sayso_fuzz::json(data) {
        sayso_fuzz::form_schema(&schema);
    }
});
