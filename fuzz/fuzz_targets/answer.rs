//! `[create body, answer body]` from raw bytes: a decision made from the first, answered with
//! the second.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(serde_json::Value::Array(parts)) = sayso_fuzz::json(data)
        && let [spec, answer, ..] = parts.as_slice()
    {
        sayso_fuzz::answer(spec, answer);
    }
});
