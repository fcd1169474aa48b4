//! Command line and environment (DESIGN.md §7): every flag has a `SAYSO_*` variable and a
//! default, so `sayso` alone serves on SQLite.

mod keys;
pub mod passkeys;
pub mod variables;

pub use keys::KeyCommand;

use std::net::{IpAddr, SocketAddr};

use clap::{Args, Parser, Subcommand, ValueEnum};

/// sayso: a self-hosted decision service for AI agents.
#[derive(Debug, Parser)]
#[command(name = "sayso", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Settings every command shares.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Database: sqlite://PATH (created if missing) or postgres://USER@HOST/DB.
    #[arg(
        long,
        env = "SAYSO_DATABASE_URL",
        default_value = "sqlite://sayso.db",
        global = true
    )]
    pub database_url: String,
    /// Address to listen on.
    #[arg(
        long,
        env = "SAYSO_LISTEN",
        default_value = "127.0.0.1:8080",
        global = true
    )]
    pub listen: SocketAddr,
    /// Base URL of the links sent to people [default: from the listen address].
    #[arg(long, env = "SAYSO_PUBLIC_URL", global = true)]
    pub public_url: Option<String>,
    /// Log filter, e.g. `info` or `sayso=debug,tower_http=info`.
    #[arg(long, env = "SAYSO_LOG", default_value = "info", global = true)]
    pub log: String,
    /// Log line format.
    #[arg(
        long,
        env = "SAYSO_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Text,
        global = true
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
    /// first (same database settings as `serve`).
    Export(ExportArgs),
    /// Copy the live SQLite database to a new file, consistent as of one moment (PostgreSQL:
    /// use pg_dump; docs/OPERATIONS.md).
    Backup {
        /// The new file to write; an existing one is never overwritten.
        path: std::path::PathBuf,
    },
    /// Ask the server on SAYSO_LISTEN (or --url) for /readyz: exit 0 when it and its
    /// database answer, 1 otherwise (the image's health check; the image has no curl).
    Health {
        /// The server's base URL [default: http:// and the listen address, loopback for an
        /// unspecified one].
        #[arg(long)]
        url: Option<String>,
    },
    /// Manage API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Manage inboxes.
    #[command(subcommand)]
    Inbox(InboxCommand),
    /// Manage an inbox's people: who answers, with their own feed links, channels and quiet
    /// hours.
    #[command(subcommand)]
    Person(PersonCommand),

    // The client commands (src/client): they talk to a sayso server with an API key.
    /// Ask a person a question; with --wait, wait for the answer and exit with its code.
    Ask(Box<crate::client::args::AskArgs>),
    /// Print a decision as JSON.
    Get(crate::client::args::GetArgs),
    /// Wait for a decision's answer, print it as JSON and exit with its code.
    Await(crate::client::args::AwaitArgs),
    /// Withdraw a pending decision.
    Cancel(crate::client::args::CancelArgs),
    /// Leave a to-do in the inbox; nothing waits for it.
    Todo(crate::client::args::TodoArgs),
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

/// What `sayso export` takes.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// The inbox whose decisions to write.
    #[arg(long)]
    pub inbox: String,
    /// Only decisions created at or after this time (RFC 3339, or a date: 2026-11-01 is its
    /// midnight UTC).
    #[arg(long, value_parser = parse_moment)]
    pub since: Option<time::OffsetDateTime>,
    /// Only decisions created before this time (same forms).
    #[arg(long, value_parser = parse_moment)]
    pub until: Option<time::OffsetDateTime>,
}

/// An RFC 3339 time, or a date meaning its midnight UTC.
fn parse_moment(s: &str) -> Result<time::OffsetDateTime, String> {
    use time::format_description::well_known::Rfc3339;
    if let Ok(t) = time::OffsetDateTime::parse(s, &Rfc3339) {
        return Ok(t);
    }
    let date_format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(s, &date_format)
        .map(|d| d.midnight().assume_utc())
        .map_err(|_| format!("{s:?} is neither an RFC 3339 time nor a date like 2026-11-01"))
}

/// Settings of `sayso mcp`, the stdio bridge.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    /// The sayso server to forward to: its base URL, e.g. https://ask.example.com.
    #[arg(long, env = "SAYSO_URL", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// The API key (sk_…) of the inbox to ask in.
    #[arg(long, env = "SAYSO_KEY", hide_env_values = true)]
    pub key: String,
    /// Which tools to serve: those of /mcp, or one ask tool agents already know (omp,
    /// gemini, claude or pi, served at /mcp/<profile>).
    #[arg(long, env = "SAYSO_MCP_PROFILE", default_value = "hosted")]
    pub profile: String,
}

/// Settings of the server.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The longest an await request may wait, in seconds.
    #[arg(long, env = "SAYSO_MAX_AWAIT_S", default_value_t = 600)]
    pub max_await_s: u64,
    /// Connections held at once.
    #[arg(long, env = "SAYSO_MAX_CONNECTIONS", default_value_t = 15_000)]
    pub max_connections: usize,
    /// Requests one HTTP/2 connection may have open at once (each parked await is one).
    #[arg(long, env = "SAYSO_H2_MAX_STREAMS", default_value_t = 1_000)]
    pub h2_max_streams: u32,
    /// Requests one API key may have waiting at once: awaits, event streams, MCP calls that
    /// wait for the person. Past it an agent gets 429. 0 for no limit [default: half of
    /// SAYSO_MAX_CONNECTIONS].
    #[arg(long, env = "SAYSO_WAITING_PER_KEY")]
    pub waiting_per_key: Option<usize>,
    /// Connections waiting requests may hold at once, all keys together; must be below
    /// SAYSO_MAX_CONNECTIONS, whose rest stays free for the person's pages [default: nine
    /// tenths of SAYSO_MAX_CONNECTIONS].
    #[arg(long, env = "SAYSO_WAITING_CONNECTIONS")]
    pub waiting_connections: Option<usize>,
    /// Urgent questions (through quiet hours) one API key may ask an hour, if the operator
    /// allows it urgent ones at all (`sayso key create --urgent`); past it they are asked as
    /// not urgent. 0 for no hourly cap.
    #[arg(long, env = "SAYSO_URGENT_PER_HOUR", default_value_t = 10)]
    pub urgent_per_hour: u32,
    /// Notifications (asks, to-dos, reminders) one person gets on one channel in a minute;
    /// past it, the next ones wait and go out together as one "N more are waiting" message.
    /// 0 for no budget.
    #[arg(long, env = "SAYSO_NOTIFY_PER_MINUTE", default_value_t = 3)]
    pub notify_per_minute: u32,
    /// Seconds a client has to send its request head before it is disconnected.
    #[arg(long, env = "SAYSO_HEADER_TIMEOUT_S", default_value_t = 10)]
    pub header_timeout_s: u64,
    /// Seconds a request body may stop arriving before the request is answered 408.
    #[arg(long, env = "SAYSO_BODY_TIMEOUT_S", default_value_t = 30)]
    pub body_timeout_s: u64,
    /// Seconds the server waits at start for an unreachable database before it gives up.
    #[arg(long, env = "SAYSO_DB_WAIT_S", default_value_t = 60)]
    pub db_wait_s: u64,
    /// Where the first run writes its secrets (`first-run.txt`, mode 0600) [default: the
    /// SQLite database's folder; for PostgreSQL, the working directory].
    #[arg(long, env = "SAYSO_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<std::path::PathBuf>,
    /// SMTP server for email: smtp://HOST:PORT (plain), smtp://…?tls=required (STARTTLS),
    /// smtps://… (TLS), with USER:PASSWORD@ if needed. Email is off when unset.
    #[arg(long, env = "SAYSO_SMTP_URL")]
    pub smtp_url: Option<String>,
    /// The From address of email notifications.
    #[arg(
        long,
        env = "SAYSO_MAIL_FROM",
        default_value = "sayso <sayso@localhost>"
    )]
    pub mail_from: String,
    /// Call webhooks and Web Push endpoints on loopback, private and other inner addresses
    /// (home set-ups, tests).
    /// Read the way people write it: 1/0, true/false, yes/no, on/off, in any case.
    #[arg(
        long,
        env = "SAYSO_ALLOW_PRIVATE_WEBHOOKS",
        value_parser = clap::builder::BoolishValueParser::new(),
        num_args = 0..=1,
        require_equals = true,
        default_value_t = false,
        default_missing_value = "true"
    )]
    pub allow_private_webhooks: bool,
    /// Milliseconds before the first retry of a failed notification; each retry waits twice
    /// as long as the one before (with jitter), up to an hour.
    #[arg(long, env = "SAYSO_OUTBOX_RETRY_BASE_MS", default_value_t = 5000)]
    pub outbox_retry_base_ms: u64,
    /// Seconds a worker holds a claimed notification before another may take it over (after
    /// a crash, that is how long an interrupted delivery waits to be retried).
    #[arg(long, env = "SAYSO_OUTBOX_LEASE_S", default_value_t = 120)]
    pub outbox_lease_s: u64,
    /// Requests per second allowed on average per API key (under /v1) and per client address
    /// (elsewhere); 0 turns rate limiting off [default: 100].
    #[arg(long, env = "SAYSO_RATE_LIMIT_PER_S")]
    pub rate_limit_per_s: Option<u32>,
    /// Requests allowed at once above that average (the burst) [default: 400].
    #[arg(long, env = "SAYSO_RATE_LIMIT_BURST")]
    pub rate_limit_burst: Option<u32>,
    /// Host names (or host:port) the MCP endpoint /mcp answers to, comma-separated; `*` for
    /// any [default: the public URL's host, localhost, 127.0.0.1 and ::1].
    #[arg(long, env = "SAYSO_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub mcp_allowed_hosts: Vec<String>,
    /// Browser origins (`https://app.example.com`) allowed to call /mcp besides the public
    /// URL's own, comma-separated; `*` for any. Requests without an `Origin` always pass.
    #[arg(long, env = "SAYSO_MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub mcp_allowed_origins: Vec<String>,
    /// oh-my-pi's `ask.timeout` for /mcp/omp, in seconds: when it runs out, the recommended
    /// option (else the first) is chosen. 0 waits for the person.
    #[arg(long, env = "SAYSO_OMP_ASK_TIMEOUT_S", default_value_t = 0)]
    pub omp_ask_timeout_s: u64,
    /// Days resolved decisions (with their audit trails) are kept; older ones are deleted
    /// in small batches. 0 or unset keeps everything.
    #[arg(long, env = "SAYSO_RETENTION_DAYS")]
    pub retention_days: Option<u32>,
    /// Reverse proxies (CIDRs or addresses, comma-separated) whose `Forwarded` and
    /// `X-Forwarded-For` headers name the client; from anywhere else they are ignored.
    #[arg(long, env = "SAYSO_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<String>,
    /// Serve Prometheus metrics at `GET /metrics` to requests with `Authorization: Bearer`
    /// and this token. Unset, there is no /metrics.
    #[arg(long, env = "SAYSO_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Serve /metrics on this address (e.g. `127.0.0.1:9464`) instead of the main one; the
    /// token is still required.
    #[arg(long, env = "SAYSO_METRICS_LISTEN")]
    pub metrics_listen: Option<std::net::SocketAddr>,
}

impl Default for ServeArgs {
    /// The defaults, with `SAYSO_*` variables applied: what `sayso` alone runs with.
    fn default() -> Self {
        #[derive(Parser)]
        struct Only {
            #[command(flatten)]
            serve: ServeArgs,
        }
        Only::parse_from(["sayso"]).serve
    }
}

#[derive(Debug, Subcommand)]
pub enum InboxCommand {
    /// Make an inbox and print its feed link (its webhook secret goes to stderr).
    Create {
        /// Its name: a–z, 0–9, '-' and '_'.
        name: String,
        #[command(flatten)]
        channels: ChannelArgs,
    },
    /// Change where an inbox's notifications go; options not given stay as they are.
    Set {
        name: String,
        #[command(flatten)]
        channels: ChannelArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum PersonCommand {
    /// Add a person to an inbox and print their own feed link alone on stdout.
    Add {
        /// Their name: a–z, 0–9, '-' and '_' (as decisions' `approvers` name them).
        name: String,
        /// The inbox they answer for.
        #[arg(long, default_value = "default")]
        inbox: String,
        #[command(flatten)]
        settings: PersonArgs,
    },
    /// List an inbox's people, oldest first: name, email, ntfy topic, quiet hours.
    List {
        #[arg(long, default_value = "default")]
        inbox: String,
    },
    /// Change a person's channels or quiet hours; options not given stay, "" removes one.
    Set {
        name: String,
        #[arg(long, default_value = "default")]
        inbox: String,
        #[command(flatten)]
        settings: PersonArgs,
    },
    /// Remove a person with their devices and push subscriptions: their feed link stops
    /// opening. An inbox keeps at least one person.
    Remove {
        name: String,
        #[arg(long, default_value = "default")]
        inbox: String,
    },
    /// Print a person's feed link again.
    Link {
        name: String,
        #[arg(long, default_value = "default")]
        inbox: String,
    },
    /// List a person's passkeys (id, added, last used, browser), or remove one.
    Passkeys(passkeys::PersonPasskeysArgs),
}

/// Where a person's notifications go, and when they wait.
#[derive(Debug, Clone, Args)]
pub struct PersonArgs {
    /// Their email address ("" removes it).
    #[arg(long)]
    pub email: Option<String>,
    /// Their own ntfy topic URL, e.g. https://ntfy.sh/ana-secret-topic ("" removes it).
    #[arg(long)]
    pub ntfy_url: Option<String>,
    /// ntfy access token for that topic ("" removes it).
    #[arg(long)]
    pub ntfy_token: Option<String>,
    /// Quiet hours, a daily window like 22:00-07:00 during which their notifications wait
    /// (urgent decisions excepted); "" removes them.
    #[arg(long, value_name = "WINDOW")]
    pub quiet: Option<String>,
    /// The time zone of the quiet hours, e.g. Europe/Berlin [default: UTC, or the zone
    /// they have].
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
}

/// Where an inbox's notifications go.
#[derive(Debug, Clone, Args)]
pub struct ChannelArgs {
    /// Email address for `notify: email` ("" removes it).
    #[arg(long)]
    pub email: Option<String>,
    /// ntfy topic URL, e.g. https://ntfy.sh/my-secret-topic ("" removes it).
    #[arg(long)]
    pub ntfy_url: Option<String>,
    /// ntfy access token for that topic ("" removes it).
    #[arg(long)]
    pub ntfy_token: Option<String>,
    /// Daily quota of actions (a create costs 2), renewed at 00:00 UTC; 0 or "none" removes it.
    #[arg(long, value_parser = parse_quota)]
    pub quota: Option<Quota>,
}

/// A daily quota given on the command line: a number of actions, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota(pub Option<i64>);

fn parse_quota(raw: &str) -> Result<Quota, String> {
    match raw.trim() {
        "none" | "0" => Ok(Quota(None)),
        n => match n.parse::<i64>() {
            Ok(n) if n > 0 => Ok(Quota(Some(n))),
            _ => Err(format!("{raw:?} is not a number of actions or \"none\"")),
        },
    }
}

impl GlobalArgs {
    /// The public URL without a trailing slash; refuses one that is not an http(s) URL.
    pub fn public_url(&self) -> Result<String, String> {
        match &self.public_url {
            None => Ok(default_public_url(self.listen)),
            Some(raw) => {
                let url = url::Url::parse(raw)
                    .map_err(|e| format!("SAYSO_PUBLIC_URL {raw:?} is not a URL: {e}"))?;
                if !matches!(url.scheme(), "http" | "https") {
                    return Err("SAYSO_PUBLIC_URL must start with http:// or https://".into());
                }
                Ok(raw.trim_end_matches('/').to_string())
            }
        }
    }
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
            matches!(cli.command, Some(Command::Key(KeyCommand::Create { ref inbox, urgent: false })) if inbox == "ops")
        );
        let cli =
            Cli::try_parse_from(["sayso", "inbox", "create", "ops", "--email", "a@b.co"]).unwrap();
        assert!(matches!(
            cli.command,
            Some(Command::Inbox(InboxCommand::Create { .. }))
        ));
    }

    #[test]
    fn person_commands_take_an_inbox_that_defaults_to_default() {
        let cli =
            Cli::try_parse_from(["sayso", "person", "add", "ana", "--quiet", "22-7"]).unwrap();
        let Some(Command::Person(PersonCommand::Add {
            name,
            inbox,
            settings,
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
        let Some(Command::Person(PersonCommand::Set {
            inbox, settings, ..
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
        let Some(Command::Inbox(InboxCommand::Set { channels, .. })) = cli.command else {
            panic!("not inbox set");
        };
        assert_eq!(channels.quota, Some(Quota(Some(20))));
        assert_eq!(parse_quota("none"), Ok(Quota(None)));
        assert_eq!(parse_quota("0"), Ok(Quota(None)));
        assert!(parse_quota("-3").is_err());
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
        assert_eq!(args.server, "https://ask.example.com");
        assert_eq!(args.key, "sk_1");
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
