//! The command-line client: `sayso ask`, `get`, `await`, `cancel`, `todo`, `list`,
//! `receipts` and `allowances` talk to a sayso server over the agent API (docs/API.md) with the
//! key of one inbox (`verify` checks receipts offline). With `--wait` (and for `await`) the
//! outcome is printed as JSON and becomes the exit code, so shell scripts can branch on a
//! person's answer; see `docs/CLI.md`.

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
pub mod wait;

use std::io::Write;

pub use allowances::allowances;
pub use commands::{ask, await_decision, cancel, get, todo};
pub use list::list;
pub use receipts::{receipts, verify_file};
pub use wait::{EXIT_ERROR, EXIT_GONE, EXIT_NO, EXIT_PENDING, EXIT_YES};

/// The names of the client commands: their usage errors exit with `EXIT_ERROR`, not clap's 2
/// (which would read as "expired or cancelled" to a script).
pub const COMMANDS: [&str; 9] = [
    "ask",
    "get",
    "await",
    "cancel",
    "todo",
    "list",
    "receipts",
    "verify",
    "allowances",
];

/// Ends the process with a client command's exit code; an error is printed to stderr
/// first and exits with `EXIT_ERROR`.
pub fn exit(result: anyhow::Result<u8>) -> ! {
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sayso: {e:#}");
            EXIT_ERROR
        }
    };
    let _ = std::io::stdout().flush();
    std::process::exit(code.into())
}

/// Whether the command line (as `std::env::args` gives it) runs a client command.
pub fn is_client_invocation(args: &[String]) -> bool {
    // The first word that names a command decides: `person list` is not `list`.
    use clap::CommandFactory;
    let cli = crate::config::Cli::command();
    args.iter()
        .skip(1)
        .find(|a| cli.find_subcommand(a.as_str()).is_some())
        .is_some_and(|a| COMMANDS.contains(&a.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn client_commands_are_told_apart_from_the_servers() {
        assert!(is_client_invocation(&argv(&[
            "sayso", "ask", "Q?", "--kind", "x"
        ])));
        assert!(is_client_invocation(&argv(&[
            "sayso", "--log", "warn", "await", "id"
        ])));
        assert!(!is_client_invocation(&argv(&["sayso", "serve", "--bogus"])));
        assert!(!is_client_invocation(&argv(&["sayso"])));
        assert!(is_client_invocation(&argv(&["sayso", "list", "--bogus"])));
        assert!(!is_client_invocation(&argv(&[
            "sayso", "person", "list", "--bogus"
        ])));
    }
}
