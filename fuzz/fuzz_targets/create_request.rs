//! A create request body (`POST /v1/decisions`, MCP `ask_user`) from raw bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(body) = sayso_fuzz::json(data) {
        sayso_fuzz::create_request(&body);
    }
});
