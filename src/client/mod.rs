//! The command-line client: `sayso ask`, `get`, `await`, `cancel`, `todo`, `list`,
//! `receipts` and `allowances` talk to a sayso server over the agent API (docs/API.md) with the
//! key of one inbox (`verify` checks receipts offline). With `--wait` (and for `await`) the
//! outcome is printed as JSON and becomes the exit code, so shell scripts can branch on a
//! person's answer; see `docs/CLI.md`.
//!
//! Uses `render` and `domain` (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod abandon;
mod allowances;
pub mod args;
mod commands;
mod duration;
mod flags;
pub mod health;
mod hints;
pub mod http;
mod list;
pub mod receipts;
mod uses;
pub mod wait;

use std::io::Write;

pub use allowances::allowances;
pub use commands::{ask, await_decision, cancel, get, todo};
pub use flags::{is_usage, usage};
pub use list::list;
pub use receipts::{receipts, verify_file};
pub use wait::{EXIT_ERROR, EXIT_GONE, EXIT_NO, EXIT_PENDING, EXIT_USAGE, EXIT_YES};

/// Ends the process with a client command's exit code; an error is printed to stderr
/// first and exits with `EXIT_USAGE` when the command line was wrong, else `EXIT_ERROR`.
pub fn exit(result: anyhow::Result<u8>) -> ! {
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sayso: {e:#}");
            if is_usage(&e) { EXIT_USAGE } else { EXIT_ERROR }
        }
    };
    let _ = std::io::stdout().flush();
    std::process::exit(code.into())
}
