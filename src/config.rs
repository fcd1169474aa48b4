//! Command line and environment (docs/CLI.md, docs/OPERATIONS.md): every flag has a `SAYSO_*` variable and a
//! default, so `sayso` alone serves on SQLite.
//!
//! Each command takes only the flags it uses: the server's (database, listen address, public
//! URL, log) belong to `serve` and to `sayso` alone, the database's to the admin commands,
//! and a server URL and an API key to the client commands.
//!
//! Uses `hook`, `client` and `domain` (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod admin;
mod chats;
mod keys;
pub mod passkeys;
mod reach;
mod serve;

pub use admin::{
    BackupArgs, ChannelArgs, DatabaseArgs, ExportArgs, InboxArgs, InboxCommand, LinkArgs,
    PersonArgs, PersonCommand, PersonGroup, Quota,
};
pub use chats::ChatArgs;
pub use keys::{KeyArgs, KeyCommand};
pub use serve::ServeArgs;

use std::net::{IpAddr, SocketAddr};

use clap::{Args, Parser, Subcommand, ValueEnum};

/// sayso: a self-hosted decision service for AI agents.
#[derive(Debug, Parser)]
#[command(name = "sayso", version, about, long_about = None)]
// `sayso --listen … key create` would otherwise take the server's flags and then ignore them.
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// The server's settings, for `sayso` alone (which serves).
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The server's own settings: where its data is, where it listens, its links and its log.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Database: sqlite://PATH (created if missing) or postgres://USER@HOST/DB.
    #[arg(long, env = "SAYSO_DATABASE_URL", default_value = "sqlite://sayso.db")]
    pub database_url: String,
    /// Address to listen on.
    #[arg(long, env = "SAYSO_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Base URL of the links sent to people [default: from the listen address]. Recorded in
    /// the database, where the admin commands read it for the links they print.
    #[arg(long, env = "SAYSO_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Log filter, e.g. `info` or `sayso=debug,tower_http=info`.
    #[arg(long, env = "SAYSO_LOG", default_value = "info")]
    pub log: String,
    /// Log line format.
    #[arg(
        long,
        env = "SAYSO_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Text
    )]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service (the default).
    Serve(ServeArgs),
    /// Print the settings `serve` would run with (flags, `SAYSO_*` variables, defaults),
    /// secrets masked, and any `SAYSO_*` variable that nothing reads.
    Config(ServeArgs),
    /// Write an inbox's decisions with their audit trails to stdout as JSON lines, newest
    /// first (on the database `serve` runs on).
    Export(ExportArgs),
    /// Copy the live SQLite database to a new file, consistent as of one moment (PostgreSQL:
    /// use pg_dump; docs/OPERATIONS.md).
    Backup(BackupArgs),
    /// Ask the server on SAYSO_LISTEN (or --url) for /readyz: exit 0 when it and its
    /// database answer, 1 otherwise (the image's health check; the image has no curl).
    Health {
        /// The server's base URL [default: http:// and the listen address, loopback for an
        /// unspecified one].
        #[arg(long)]
        url: Option<String>,
    },
    /// Manage API keys (on the database `serve` runs on).
    Key(KeyArgs),
    /// Manage inboxes (on the database `serve` runs on).
    Inbox(InboxArgs),
    /// Manage an inbox's people: who answers, with their own feed links, channels and quiet
    /// hours (on the database `serve` runs on).
    Person(PersonGroup),

    // The client commands (src/client): they talk to a sayso server with an API key.
    /// Ask a person something; with --wait, wait for the answer and exit with its code.
    Ask(Box<crate::client::args::AskArgs>),
    /// Print a decision or a to-do as JSON.
    Get(crate::client::args::GetArgs),
    /// Wait for the answer to a decision (or a to-do to be done), print it as JSON and exit
    /// with its code.
    Await(crate::client::args::AwaitArgs),
    /// Withdraw a pending decision or to-do.
    Cancel(crate::client::args::CancelArgs),
    /// Leave a to-do in the inbox; nothing waits for it.
    Todo(crate::client::args::TodoArgs),
    /// List the inbox's decisions and to-dos, newest first.
    List(crate::client::args::ListArgs),
    /// Print the inbox's signed receipts (JSON lines), one decision's, or the server's
    /// public receipt key.
    Receipts(crate::client::receipts::ReceiptsArgs),
    /// Check receipts offline against the server's public key: each signature, what was
    /// asked, and that a chain is unbroken.
    Verify(crate::client::receipts::VerifyArgs),
    /// List the standing allowances the person gave ("Allow for 15 min", …), or revoke
    /// them; with the inbox's API key, which can only read and revoke them.
    Allowances(crate::client::args::AllowancesArgs),
    /// Be a coding agent's permission hook (claude, codex, gemini, copilot, cursor, pi), or
    /// install it into the agent's settings (docs/HARNESSES.md).
    #[command(subcommand)]
    Hook(crate::hook::HookCommand),
    // --- MCP stdio bridge ---
    /// Serve MCP on stdin/stdout, forwarding to a sayso server (for clients that only start
    /// stdio MCP servers).
    Mcp(McpArgs),
    // --- end MCP stdio bridge ---
}

/// Settings of `sayso mcp`, the stdio bridge.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub server: crate::client::args::ServerArgs,
    /// Which tools to serve: those of /mcp, or one ask tool agents already know (omp,
    /// gemini, claude or pi, served at /mcp/<profile>).
    #[arg(long, env = "SAYSO_MCP_PROFILE", default_value = "hosted")]
    pub profile: String,
}

impl GlobalArgs {
    /// The public URL without a trailing slash; refuses one that is not an http(s) URL.
    pub fn public_url(&self) -> Result<String, String> {
        match &self.public_url {
            None => Ok(default_public_url(self.listen)),
            Some(raw) => checked_public_url(raw),
        }
    }
}

/// A public URL as given (`--public-url` / `SAYSO_PUBLIC_URL`), without its trailing slash;
/// refuses one that is not an http(s) URL.
pub fn checked_public_url(raw: &str) -> Result<String, String> {
    let url = url::Url::parse(raw)
        .map_err(|e| format!("--public-url / SAYSO_PUBLIC_URL {raw:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("--public-url / SAYSO_PUBLIC_URL must start with http:// or https://".into());
    }
    Ok(raw.trim_end_matches('/').to_string())
}

/// The address to print and to build links from when `SAYSO_PUBLIC_URL` is not set.
pub fn default_public_url(bound: SocketAddr) -> String {
    let host = match bound.ip() {
        ip if ip.is_unspecified() => "localhost".to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
        ip => ip.to_string(),
    };
    format!("http://{host}:{}", bound.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_arguments_means_serve_on_sqlite() {
        let cli = Cli::try_parse_from(["sayso"]).unwrap();
        assert!(cli.command.is_none());
        assert!(
            cli.global.database_url.starts_with("sqlite:")
                || std::env::var("SAYSO_DATABASE_URL").is_ok()
        );
    }

    #[test]
    fn subcommands_parse() {
        let cli = Cli::try_parse_from(["sayso", "key", "create", "--inbox", "ops"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::Key(KeyArgs { command: KeyCommand::Create { ref inbox, urgent: false }, .. })) if inbox == "ops")
        );
        let cli =
            Cli::try_parse_from(["sayso", "inbox", "create", "ops", "--email", "a@b.co"]).unwrap();
        assert!(matches!(
            cli.command,
            Some(Command::Inbox(InboxArgs {
                command: InboxCommand::Create { .. },
                ..
            }))
        ));
    }

    /// A receipt key is URL-safe base64, so one in 64 begins with `-`: the flags that take
    /// one take it as their value, not as another flag.
    #[test]
    fn a_receipt_key_that_begins_with_a_hyphen_is_a_value() {
        let key = "-XkZ0Qb1m3cV5n7p9r2t4v6x8z0B2D4F6H8J0L2N4P";
        let cli = Cli::try_parse_from(["sayso", "hook", "claude", "--receipt-key", key]).unwrap();
        assert!(format!("{:?}", cli.command).contains(key));
        let cli = Cli::try_parse_from(["sayso", "verify", "r.jsonl", "--key", key]).unwrap();
        assert!(format!("{:?}", cli.command).contains(key));
        // So may a secret of the person's choosing.
        let cli = Cli::try_parse_from([
            "sayso",
            "serve",
            "--telegram-webhook-secret",
            "-my_secret",
            "--matrix-password",
            "--hunter2",
            "--metrics-token",
            "-t",
        ])
        .unwrap();
        let Some(Command::Serve(serve)) = cli.command else {
            panic!("not serve");
        };
        assert_eq!(
            serve.chats.telegram_webhook_secret.as_deref(),
            Some("-my_secret")
        );
        assert_eq!(serve.chats.matrix_password.as_deref(), Some("--hunter2"));
        assert_eq!(serve.metrics_token.as_deref(), Some("-t"));
    }

    #[test]
    fn person_commands_take_an_inbox_that_defaults_to_default() {
        let cli =
            Cli::try_parse_from(["sayso", "person", "add", "ana", "--quiet", "22-7"]).unwrap();
        let Some(Command::Person(PersonGroup {
            command:
                PersonCommand::Add {
                    name,
                    inbox,
                    settings,
                },
            ..
        })) = cli.command
        else {
            panic!("not person add");
        };
        assert_eq!((name.as_str(), inbox.as_str()), ("ana", "default"));
        assert_eq!(settings.quiet.as_deref(), Some("22-7"));
        let cli = Cli::try_parse_from([
            "sayso", "person", "set", "ana", "--inbox", "ops", "--email", "",
        ])
        .unwrap();
        let Some(Command::Person(PersonGroup {
            command: PersonCommand::Set {
                inbox, settings, ..
            },
            ..
        })) = cli.command
        else {
            panic!("not person set");
        };
        assert_eq!(inbox, "ops");
        assert_eq!(settings.email.as_deref(), Some(""));
    }

    #[test]
    fn quotas_are_numbers_or_none() {
        let cli = Cli::try_parse_from(["sayso", "inbox", "set", "ops", "--quota", "20"]).unwrap();
        let Some(Command::Inbox(InboxArgs {
            command: InboxCommand::Set { channels, .. },
            ..
        })) = cli.command
        else {
            panic!("not inbox set");
        };
        assert_eq!(channels.quota, Some(Quota(Some(20))));
        assert_eq!(admin::parse_quota("none"), Ok(Quota(None)));
        assert_eq!(admin::parse_quota("0"), Ok(Quota(None)));
        assert!(admin::parse_quota("-3").is_err());
    }

    #[test]
    fn mcp_takes_a_server_and_a_key() {
        let cli = Cli::try_parse_from([
            "sayso",
            "mcp",
            "--server",
            "https://ask.example.com",
            "--key",
            "sk_1",
        ])
        .unwrap();
        let Some(Command::Mcp(args)) = cli.command else {
            panic!("not mcp")
        };
        assert_eq!(args.server.server, "https://ask.example.com");
        assert_eq!(args.server.key.as_deref(), Some("sk_1"));
    }

    #[test]
    fn mcp_allowed_hosts_are_a_comma_list() {
        let cli = Cli::try_parse_from([
            "sayso",
            "serve",
            "--mcp-allowed-hosts",
            "a.example.com,b.example.com:8443",
        ])
        .unwrap();
        let Some(Command::Serve(args)) = cli.command else {
            panic!("not serve")
        };
        assert_eq!(
            args.mcp_allowed_hosts,
            ["a.example.com", "b.example.com:8443"]
        );
    }

    #[test]
    fn a_public_url_must_be_http() {
        let mut g = Cli::try_parse_from(["sayso"]).unwrap().global;
        g.public_url = Some("https://ask.example.com/".into());
        assert_eq!(g.public_url().unwrap(), "https://ask.example.com");
        g.public_url = Some("ftp://x".into());
        assert!(g.public_url().is_err());
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

    #[test]
    fn booleans_are_read_the_way_people_write_them() {
        let allow = |args: &[&str]| {
            let mut argv = vec!["sayso", "serve"];
            argv.extend_from_slice(args);
            match Cli::try_parse_from(argv).map(|c| c.command) {
                Ok(Some(Command::Serve(serve))) => Ok(serve.allow_private_webhooks),
                Ok(_) => panic!("not serve"),
                Err(e) => Err(e.to_string()),
            }
        };
        assert_eq!(allow(&[]), Ok(false));
        assert_eq!(allow(&["--allow-private-webhooks"]), Ok(true));
        for yes in ["1", "true", "YES", "on", "True"] {
            assert_eq!(
                allow(&[&format!("--allow-private-webhooks={yes}")]),
                Ok(true),
                "{yes}"
            );
        }
        for no in ["0", "false", "No", "OFF"] {
            assert_eq!(
                allow(&[&format!("--allow-private-webhooks={no}")]),
                Ok(false),
                "{no}"
            );
        }
        let err = allow(&["--allow-private-webhooks=maybe"]).unwrap_err();
        assert!(err.contains("maybe"), "{err}");
    }
}
