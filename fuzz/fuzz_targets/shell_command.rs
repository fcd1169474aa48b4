//! A shell command, as the hook reads it, from raw bytes (not UTF-8: read lossily).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    // libfuzzer-sys aborts on every panic, even one caught: the reading catches the grammar's
    // own panics (brush-parser on a descriptor too large for an i32, and in its tokenizer on
    // some unclosed expansions) and calls the text a doubt. With the default hook, a caught
    // panic is only printed; one that escapes the target still aborts (libfuzzer-sys aborts
    // when its `catch_unwind` sees it).
    init: {
        let _ = std::panic::take_hook();
    },
    |data: &[u8]| {
        sayso_fuzz::shell::shell_command(&sayso_fuzz::shell::command(data));
    }
);
