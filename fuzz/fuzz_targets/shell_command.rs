//! A shell command, as the hook reads it, from raw bytes (not UTF-8: read lossily).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sayso_fuzz::shell::shell_command(&sayso_fuzz::shell::command(data));
});
