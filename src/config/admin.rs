//! The arguments of the commands that work on the database directly, where the server runs:
//! `export`, `backup`, `inbox`, `person` (and `key`, in keys.rs).

use clap::{Args, Subcommand};

/// The database an admin command works on: the one `serve` runs on, never created here.
#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// The database `sayso serve` runs on: sqlite://PATH (a relative path is from the
    /// working directory) or postgres://USER@HOST/DB. Never created by this command.
    #[arg(
        long,
        env = "SAYSO_DATABASE_URL",
        default_value = "sqlite://sayso.db",
        global = true
    )]
    pub database_url: String,
}

/// Where the links an admin command prints point.
#[derive(Debug, Clone, Args)]
pub struct LinkArgs {
    /// Base URL of the links printed [default: the public URL the last `sayso serve` on
    /// this database ran with].
    #[arg(long, env = "SAYSO_PUBLIC_URL", global = true)]
    pub public_url: Option<String>,
}

/// `sayso backup PATH`.
#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// The new file to write; an existing one is never overwritten.
    pub path: std::path::PathBuf,
    #[command(flatten)]
    pub db: DatabaseArgs,
}

/// `sayso inbox …`.
#[derive(Debug, Args)]
pub struct InboxArgs {
    #[command(flatten)]
    pub db: DatabaseArgs,
    #[command(flatten)]
    pub links: LinkArgs,
    #[command(subcommand)]
    pub command: InboxCommand,
}

/// `sayso person …`.
#[derive(Debug, Args)]
pub struct PersonGroup {
    #[command(flatten)]
    pub db: DatabaseArgs,
    #[command(flatten)]
    pub links: LinkArgs,
    #[command(subcommand)]
    pub command: PersonCommand,
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
    #[command(flatten)]
    pub db: DatabaseArgs,
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
    /// List an inbox's people, oldest first: name, email, ntfy topic, chats, zone, quiet hours.
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
        /// Print it as a QR code too, for a phone's camera.
        #[arg(long)]
        qr: bool,
    },
    /// Give a person a new name; their feed link, devices and channels stay theirs.
    Rename {
        name: String,
        new_name: String,
        #[arg(long, default_value = "default")]
        inbox: String,
    },
    /// List a person's passkeys (id, added, last used, browser), or remove one.
    Passkeys(super::passkeys::PersonPasskeysArgs),
    /// Send a person a test message on one of their chats, with the server's settings
    /// (SAYSO_SLACK_*, SAYSO_MATRIX_*, SAYSO_TELEGRAM_*), and say how it went.
    Test {
        name: String,
        #[arg(long, default_value = "default")]
        inbox: String,
        /// slack, matrix or telegram.
        #[arg(long, value_parser = ["slack", "matrix", "telegram"])]
        channel: String,
        #[command(flatten)]
        chats: super::ChatArgs,
    },
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
    /// Their Slack member id, e.g. U012AB3CD ("" removes it; docs/CHANNELS.md).
    #[arg(long, value_name = "USER_ID")]
    pub slack: Option<String>,
    /// Their Matrix user, e.g. @ana:example.org ("" removes it).
    #[arg(long, value_name = "@USER:SERVER")]
    pub matrix: Option<String>,
    /// Their Telegram user id, digits, as the bot's /start shows it ("" removes it).
    #[arg(long, value_name = "USER_ID")]
    pub telegram: Option<String>,
    /// Quiet hours, a daily window like 22:00-07:00 during which their notifications wait
    /// (urgent decisions excepted); "" removes them.
    #[arg(long, value_name = "WINDOW")]
    pub quiet: Option<String>,
    /// Their time zone, an IANA name like Europe/Berlin: the times their pages, mails,
    /// notifications and chats state, and their quiet hours, are in it ("" makes it UTC).
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
    /// The language of their pages, mails, notifications and chat messages: en or de
    /// ("" leaves it to their browser, else English).
    #[arg(long, value_name = "LANG")]
    pub lang: Option<String>,
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
    /// The time zone of the inbox's own person, as `sayso person set --tz` sets it ("" makes
    /// it UTC).
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
}

/// A daily quota given on the command line: a number of actions, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota(pub Option<i64>);

pub(super) fn parse_quota(raw: &str) -> Result<Quota, String> {
    match raw.trim() {
        "none" | "0" => Ok(Quota(None)),
        n => match n.parse::<i64>() {
            Ok(n) if n > 0 => Ok(Quota(Some(n))),
            _ => Err(format!("{raw:?} is not a number of actions or \"none\"")),
        },
    }
}
