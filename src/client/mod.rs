//! The command-line client: `sayso ask`, `get`, `await`, `cancel` and `todo` talk to a sayso
//! server over the agent API (DESIGN.md §2) with the key of one inbox. With `--wait` (and
//! for `await`) the outcome is printed as JSON and becomes the exit code, so shell scripts
//! can branch on a person's answer; see `docs/CLI.md`.

pub mod args;
mod commands;
mod duration;
pub mod http;
pub mod wait;

use std::io::Write;

pub use commands::{ask, await_decision, cancel, get, todo};
pub use wait::{EXIT_ERROR, EXIT_GONE, EXIT_NO, EXIT_PENDING, EXIT_YES};

/// The names of the client commands: their usage errors exit with `EXIT_ERROR`, not clap's 2
/// (which would read as "expired or cancelled" to a script).
pub const COMMANDS: [&str; 5] = ["ask", "get", "await", "cancel", "todo"];

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
    args.iter().skip(1).any(|a| COMMANDS.contains(&a.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Cli, Command};
    use clap::Parser;

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
    }

    #[test]
    fn client_commands_parse() {
        let cli = Cli::try_parse_from([
            "sayso",
            "ask",
            "Deploy?",
            "--kind",
            "bool",
            "--wait",
            "--timeout",
            "10m",
            "--key",
            "sk_1",
            "--server",
            "http://h:1",
        ])
        .unwrap();
        let Some(Command::Ask(ask)) = cli.command else {
            panic!("not ask")
        };
        assert_eq!(ask.timeout, Some(std::time::Duration::from_secs(600)));
        assert_eq!(ask.common.server.key.as_deref(), Some("sk_1"));
        // A client-side timeout only makes sense while waiting.
        assert!(
            Cli::try_parse_from(["sayso", "ask", "Q", "--kind", "bool", "--timeout", "1m"])
                .is_err()
        );
        assert!(Cli::try_parse_from(["sayso", "cancel", "id", "--reason", "r"]).is_ok());
        assert!(Cli::try_parse_from(["sayso", "todo", "Renew", "--ttl", "1d"]).is_ok());
    }
}
