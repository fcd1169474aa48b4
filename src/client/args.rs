//! The flags of the client commands (`ask`, `get`, `await`, `cancel`, `todo`, `list`).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::duration::parse_duration;
use crate::domain::people::{self, MAX_NAMED};
use crate::render::Zone;

/// Which sayso server to talk to, and as whom.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// The sayso server: its base URL, as the person's links start (e.g.
    /// https://ask.example.com), without /v1.
    #[arg(
        long,
        env = "SAYSO_URL",
        default_value = "http://127.0.0.1:8080",
        value_name = "URL"
    )]
    pub server: String,
    /// The API key (`sk_…`) of the inbox, from `sayso key create` where the server runs.
    #[arg(long, env = "SAYSO_KEY", hide_env_values = true, value_name = "KEY")]
    pub key: Option<String>,
}

/// The kinds of decision, as the API names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    Bool,
    Choose,
    Text,
    Form,
    Todo,
}

impl KindArg {
    pub fn as_str(self) -> &'static str {
        match self {
            KindArg::Bool => "bool",
            KindArg::Choose => "choose",
            KindArg::Text => "text",
            KindArg::Form => "form",
            KindArg::Todo => "todo",
        }
    }
}

/// How the person hears of a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NotifyArg {
    Push,
    Email,
    None,
}

impl NotifyArg {
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyArg::Push => "push",
            NotifyArg::Email => "email",
            NotifyArg::None => "none",
        }
    }
}

/// `sayso ask`: create a decision, and with `--wait` wait for its answer.
#[derive(Debug, Clone, Args)]
pub struct AskArgs {
    /// The question, as the person will read it.
    pub question: String,
    /// What sort of answer is wanted: yes or no (`bool`), one of the options (`choose`), a
    /// text, a form, or a to-do.
    #[arg(long, value_enum, default_value_t = KindArg::Bool)]
    pub kind: KindArg,
    /// `choose`: an option, as `LABEL` or `LABEL: DESCRIPTION` (the description is shown
    /// under the label); repeat for each option, in order. A label that itself holds ": "
    /// writes it as "\: ".
    #[arg(long = "option", value_name = "LABEL[: DESCRIPTION]")]
    pub options: Vec<String>,
    /// `choose`: several options may be picked.
    #[arg(long)]
    pub multi: bool,
    /// `choose`: the index (from 0) of the recommended option.
    #[arg(long, value_name = "N")]
    pub recommended: Option<u32>,
    /// `bool`: the text of the yes button.
    #[arg(long, value_name = "TEXT")]
    pub yes_label: Option<String>,
    /// `bool`: the text of the no button.
    #[arg(long, value_name = "TEXT")]
    pub no_label: Option<String>,
    /// `text` (and the Other box of `choose`): hint text in the empty box.
    #[arg(long, value_name = "TEXT")]
    pub placeholder: Option<String>,
    /// Markdown context shown under the question.
    #[arg(long, value_name = "TEXT")]
    pub context: Option<String>,
    /// Markdown context read from a file (`-` reads stdin); after `--context` if both are given.
    #[arg(long, value_name = "FILE")]
    pub context_file: Option<PathBuf>,
    /// `form`: a JSON file holding the form's schema (an object), or a list of
    /// coding-agent style questions (an array).
    #[arg(long, value_name = "FILE")]
    pub schema_file: Option<PathBuf>,
    #[command(flatten)]
    pub people: PeopleArgs,
    #[command(flatten)]
    pub common: CreateArgs,
    /// The outcome applied if nobody answers in time: JSON (`true`, `["a","b"]`, `{"n":1}`),
    /// or else taken as a plain string.
    #[arg(long, value_name = "JSON")]
    pub default: Option<String>,
    /// An http(s) URL that receives a signed webhook when the decision resolves.
    #[arg(long, value_name = "URL")]
    pub callback_url: Option<String>,
    /// Wait for the answer, print it as JSON and exit with its code (see `docs/CLI.md`).
    #[arg(long)]
    pub wait: bool,
    /// With `--wait`: stop waiting after this long (exit 4, still pending), e.g. `10m`.
    #[arg(long, value_parser = parse_duration, requires = "wait")]
    pub timeout: Option<Duration>,
    /// With `--wait`: leave the question open when the wait is interrupted (Ctrl-C,
    /// SIGTERM, SIGHUP); by default it is withdrawn, since nothing waits for its answer then.
    #[arg(long, requires = "wait")]
    pub keep: bool,
}

/// Who is asked, how many must agree, and when it moves on to others (`ask` only; `todo`
/// takes `--approvers` alone).
#[derive(Debug, Clone, Args)]
pub struct PeopleArgs {
    /// Ask only these people of the inbox, by name: `--approvers ana,ben` (or the flag
    /// repeated) [default: everyone in the inbox].
    #[arg(long, value_name = "NAMES", value_delimiter = ',', value_parser = person_name)]
    pub approvers: Vec<String>,
    /// How many of them must say yes (`bool`) or Allow before it resolves; any no resolves
    /// it at once [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_NAMED as i64))]
    pub required: Option<u32>,
    /// Still pending after this long (`10m`, `1h`), it goes to `--escalate-to` too, who may
    /// then answer it; must be shorter than `--ttl`.
    #[arg(long, value_name = "DURATION", value_parser = escalate_after)]
    pub escalate_after: Option<Duration>,
    /// Who an escalation reaches, by name [default: everyone not among the approvers].
    #[arg(long, value_name = "NAMES", value_delimiter = ',', value_parser = person_name, requires = "escalate_after")]
    pub escalate_to: Vec<String>,
    /// Notify through the people's quiet hours.
    #[arg(long)]
    pub urgent: bool,
}

/// A person's name as the server takes it (a–z, 0–9, `-`, `_`).
fn person_name(raw: &str) -> Result<String, String> {
    let name = raw.trim();
    people::check_name(name)?;
    Ok(name.to_string())
}

/// A duration of at least a second, in whole seconds the API can carry.
fn escalate_after(raw: &str) -> Result<Duration, String> {
    let d = parse_duration(raw)?;
    if d.is_zero() {
        return Err(format!(
            "{raw:?} is no time at all; escalate after 1s or more"
        ));
    }
    if d.as_secs() > u64::from(u32::MAX) {
        return Err(format!("{raw:?} is too long"));
    }
    Ok(d)
}

/// The zone a command prints its times in.
#[derive(Debug, Clone, Args)]
pub struct ZoneArgs {
    /// The time zone of the times printed, an IANA name like Europe/Berlin [default: the
    /// machine's: TZ, else /etc/localtime]. JSON output stays in RFC 3339 UTC.
    #[arg(long, value_name = "ZONE", value_parser = Zone::parse)]
    pub tz: Option<Zone>,
}

impl ZoneArgs {
    /// The zone given, else the machine's.
    pub fn zone(&self) -> Zone {
        self.tz.clone().unwrap_or_else(Zone::system)
    }
}

/// Settings shared by `ask` and `todo`.
#[derive(Debug, Clone, Args)]
pub struct CreateArgs {
    /// A project name, to group and filter by.
    #[arg(long)]
    pub project: Option<String>,
    /// How long it stays open, from 10s to 30d: `90s`, `30m`, `2h`, `1d`, `1h30m` [server
    /// default: 1h].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub ttl: Option<Duration>,
    /// How the person hears of it [server default: push].
    #[arg(long, value_enum)]
    pub notify: Option<NotifyArg>,
    /// Makes a retried command safe: the same key returns what the first one made. One is
    /// made up when not given, so the client's own retries never ask twice.
    #[arg(long, value_name = "K")]
    pub idempotency_key: Option<String>,
    /// Print what the server answered (id, link, expiry) as JSON instead of the short form.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub zone: ZoneArgs,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `sayso todo`: leave a to-do in the inbox; nothing waits for it.
#[derive(Debug, Clone, Args)]
pub struct TodoArgs {
    /// What is to be done, as the person will read it.
    pub text: String,
    /// Markdown notes shown under it.
    #[arg(long, value_name = "TEXT")]
    pub context: Option<String>,
    /// Put it in the feeds of these people of the inbox only, by name: `--approvers ana,ben`
    /// [default: everyone in the inbox].
    #[arg(long, value_name = "NAMES", value_delimiter = ',', value_parser = person_name)]
    pub approvers: Vec<String>,
    #[command(flatten)]
    pub common: CreateArgs,
}

/// `sayso get`: print a decision or a to-do as JSON.
#[derive(Debug, Clone, Args)]
pub struct GetArgs {
    /// Its id, as `ask`, `todo` and `list` print it.
    pub id: String,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `sayso await`: wait for a decision, print its outcome as JSON and exit with its code.
#[derive(Debug, Clone, Args)]
pub struct AwaitArgs {
    /// Its id, as `ask`, `todo` and `list` print it.
    pub id: String,
    /// Stop waiting after this long (exit 4, still pending), e.g. `10m`.
    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `sayso cancel`: withdraw a pending decision or to-do.
#[derive(Debug, Clone, Args)]
pub struct CancelArgs {
    /// Its id, as `ask`, `todo` and `list` print it.
    pub id: String,
    /// Why, for the audit trail and the agent's records.
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// What `sayso list` shows, by status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatusArg {
    Pending,
    Answered,
    Declined,
    Expired,
    Cancelled,
}

impl StatusArg {
    pub fn as_str(self) -> &'static str {
        match self {
            StatusArg::Pending => "pending",
            StatusArg::Answered => "answered",
            StatusArg::Declined => "declined",
            StatusArg::Expired => "expired",
            StatusArg::Cancelled => "cancelled",
        }
    }
}

/// `sayso list`: the inbox's decisions and to-dos, newest first, every page of them.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Only those in this state, e.g. `pending` for what still waits for an answer.
    #[arg(long, value_enum)]
    pub status: Option<StatusArg>,
    /// Only those of this kind.
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// Only those of this project.
    #[arg(long)]
    pub project: Option<String>,
    /// Instead of decisions, the calls this standing allowance (its id, as `sayso
    /// allowances` prints it) let through without asking, oldest first.
    #[arg(long, value_name = "ALLOWANCE_ID", conflicts_with_all = ["status", "kind", "project"])]
    pub allowed_by: Option<String>,
    /// One JSON object a line, as the API returns each, instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub zone: ZoneArgs,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `sayso allowances`: the standing allowances the person gave, and revoking them.
#[derive(Debug, Clone, Args)]
pub struct AllowancesArgs {
    #[command(subcommand)]
    pub action: Option<AllowancesAction>,
    /// One JSON object a line, as the API returns each, instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub zone: ZoneArgs,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum AllowancesAction {
    /// Revoke one allowance by its id, or all of them with --all: those calls are asked
    /// again from now on.
    Revoke {
        /// The allowance's id, as `sayso allowances` prints it.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        id: Option<String>,
        /// Revoke every allowance of the inbox.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
}
