//! The settings of `sayso serve` (and of `sayso config`, which prints them).

use clap::{Args, Parser};

use super::GlobalArgs;

/// Settings of the server.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Where it keeps its data, where it listens, its links and its log.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The longest an await request may wait, in seconds.
    #[arg(long, env = "SAYSO_MAX_AWAIT_S", default_value_t = 600)]
    pub max_await_s: u64,
    /// Connections held at once.
    #[arg(long, env = "SAYSO_MAX_CONNECTIONS", default_value_t = 15_000)]
    pub max_connections: usize,
    /// Connections one client address may hold at once (an IPv6 /64 counts as one address);
    /// past it, one of its idle connections is closed to make way, or with none idle the new
    /// one is refused. Loopback and SAYSO_TRUSTED_PROXIES are not capped. 0 for no cap
    /// [default: SAYSO_WAITING_CONNECTIONS' value].
    #[arg(long, env = "SAYSO_CONNECTIONS_PER_ADDRESS")]
    pub connections_per_address: Option<usize>,
    /// Seconds a connection that has been answered may stay open with no request (HTTP/1.1
    /// keep-alive, HTTP/2 with no stream open) before it is closed.
    #[arg(long, env = "SAYSO_IDLE_TIMEOUT_S", default_value_t = 5)]
    pub idle_timeout_s: u64,
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
    #[arg(
        long,
        env = "SAYSO_METRICS_TOKEN",
        hide_env_values = true,
        allow_hyphen_values = true
    )]
    pub metrics_token: Option<String>,
    /// Serve /metrics on this address (e.g. `127.0.0.1:9464`) instead of the main one; the
    /// token is still required.
    #[arg(long, env = "SAYSO_METRICS_LISTEN")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Slack, Matrix and Telegram (docs/CHANNELS.md).
    #[command(flatten)]
    pub chats: super::ChatArgs,
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
