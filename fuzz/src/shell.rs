//! A shell command as the hook reads it: `shell::parse` and `danger::dangers` over any text.
//! Beyond "no panic", the places they report must be places in the command (the page marks
//! them by slicing the command), and a command the grammar refuses must never read as
//! certain (a refused command read as "runs nothing" would pass an allow-list).

use std::io::BufReader;
use std::ops::Range;

use brush_parser::{Parser, ParserOptions};
use sayso::domain::danger::dangers;
use sayso::domain::shell::{Doubt, Parsed, parse, subcommand_reading, unreadable};

/// The fuzzer's bytes as the hook receives a command: JSON strings are UTF-8, so bytes that
/// are not are read with the lossy conversion (each bad sequence becomes U+FFFD).
pub fn command(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// Reads `command` and checks what the reading promises.
pub fn shell_command(command: &str) {
    let parsed = parse(command);
    check_parsed(command, &parsed);
    // The same reading twice, unless one of them ran out of time (a matter of the machine).
    let again = parse(command);
    let slow = |p: &Parsed| p.doubts.contains(&Doubt::TooSlow);
    if !slow(&again) && !slow(&parsed) {
        assert_eq!(again, parsed, "a second reading differs");
    }

    for danger in dangers(command) {
        assert!(!danger.reason.is_empty(), "a danger without a reason");
        assert!(
            !danger.spans.is_empty(),
            "{:?} points at nothing",
            danger.reason
        );
        for span in &danger.spans {
            check_span(command, span, danger.reason);
        }
    }
}

fn check_parsed(command: &str, parsed: &Parsed) {
    for doubt in &parsed.doubts {
        assert!(!doubt.reason().is_empty(), "{doubt:?} gives no reason");
    }
    let count = parsed.parts.len();
    for (i, part) in parsed.parts.iter().enumerate() {
        for arg in part.wrappers.iter().chain(&part.argv) {
            check_span(command, &arg.span, &arg.text);
        }
        if let Some(pipe) = &part.pipe {
            check_span(command, pipe, "the pipe");
        }
        if let Some(from) = part.piped_from {
            assert!(from < count, "part {i} piped from part {from} of {count}");
            assert_ne!(from, i, "part {i} is piped from itself");
        }
        if let Some(outer) = part.inside {
            assert!(outer < count, "part {i} inside part {outer} of {count}");
            assert_ne!(outer, i, "part {i} runs inside itself");
        }
        // What the policy reads of every part: none of it may panic.
        let _ = (
            part.program(),
            part.canonical(),
            part.literal(),
            part.dynamic(),
        );
        let _ = subcommand_reading(part);
    }

    // Text the grammar must not be given (a control character, a here-document without a
    // tag, parentheses nested too deep: it runs without end or for minutes on them) is a
    // doubt before it is read, and no part is made of it; nor is the grammar asked below.
    if let Some(doubt) = unreadable(command) {
        assert!(parsed.doubts.contains(&doubt), "{doubt:?}: {:?}", parsed.doubts);
        assert!(parsed.parts.is_empty(), "parts {:?}", parsed.parts);
        return;
    }

    // Text the grammar did not finish in time is a doubt; the grammar is not asked again.
    if parsed.doubts.contains(&Doubt::TooSlow) {
        assert!(parsed.parts.is_empty(), "parts {:?}", parsed.parts);
        return;
    }

    // Text the grammar refuses says nothing for certain about what runs: it is a doubt, and
    // no part is made of it.
    if refused(command) {
        assert!(
            !parsed.certain(),
            "a command the grammar refuses reads as certain"
        );
        assert!(
            parsed
                .doubts
                .iter()
                .any(|d| matches!(d, Doubt::Unparsed(_))),
            "a command the grammar refuses reads as {:?}",
            parsed.doubts
        );
        assert!(
            parsed.parts.is_empty(),
            "a refused command has parts {:?}",
            parsed.parts
        );
    }
}

/// Whether bash's grammar (as the reading uses it) refuses the whole text. Only for a command
/// short enough to be read at all: a longer one is a doubt of its own.
fn refused(command: &str) -> bool {
    if command.len() > 64 * 1024 {
        return false;
    }
    let options = ParserOptions::default();
    let mut parser = Parser::new(BufReader::new(command.as_bytes()), &options);
    // The grammar panics on some text (a descriptor too large for an i32, some unclosed
    // expansions): refused too.
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parser.parse_program()));
    !matches!(attempt, Ok(Ok(_)))
}

/// A reported place: a range of the command that starts and ends on characters.
fn check_span(command: &str, span: &Range<usize>, what: &str) {
    assert!(
        span.start <= span.end && span.end <= command.len(),
        "{what:?} at {span:?} in a command of {} bytes",
        command.len()
    );
    assert!(
        command.is_char_boundary(span.start) && command.is_char_boundary(span.end),
        "{what:?} at {span:?} splits a character of {command:?}"
    );
}
