//! The arguments of `sayso key`: making, listing, changing and revoking API keys.

use clap::{Args, Subcommand};

use super::DatabaseArgs;

/// `sayso key …`.
#[derive(Debug, Args)]
pub struct KeyArgs {
    #[command(flatten)]
    pub db: DatabaseArgs,
    #[command(subcommand)]
    pub command: KeyCommand,
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Make a new API key and print it alone on stdout.
    Create {
        /// The inbox the key belongs to.
        #[arg(long, default_value = "default")]
        inbox: String,
        /// Let the key ask urgent questions, which ring through people's quiet hours (at
        /// most SAYSO_URGENT_PER_HOUR an hour).
        #[arg(long)]
        urgent: bool,
    },
    /// List an inbox's keys, oldest first: id, made, revoked, urgent (never the keys
    /// themselves: only their hashes are kept).
    List {
        #[arg(long, default_value = "default")]
        inbox: String,
    },
    /// Change a live key: give its id (from `key list`), the key itself, or `-` to read the
    /// key from stdin.
    Set {
        /// The key's id, the key (`sk_…`), or `-`.
        key: String,
        /// Whether it may ask urgent questions: yes or no (1/0, true/false, on/off).
        #[arg(
            long,
            required = true,
            action = clap::ArgAction::Set,
            value_name = "yes|no",
            value_parser = clap::builder::BoolishValueParser::new()
        )]
        urgent: bool,
    },
    /// Revoke an API key: it stops working at once. Give the key, or `-` to read it from
    /// stdin (kept out of the shell's history), or `--all-of INBOX` for every key of an inbox.
    Revoke {
        /// The key to revoke (`sk_…`), or `-` to read it from stdin.
        #[arg(required_unless_present = "all_of", conflicts_with = "all_of")]
        key: Option<String>,
        /// Revoke every key of this inbox instead.
        #[arg(long, value_name = "INBOX")]
        all_of: Option<String>,
    },
}
