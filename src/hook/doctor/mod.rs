//! `sayso hook doctor <harness>`: whether that harness, as configured here, will really run
//! the hook and obey it. A hook the harness silently skips is the worst failure: the run is
//! ungated and looks gated. So the doctor reads what the harness reads (its settings, its
//! trust, its modes), checks the server with the key, and names the one thing to fix first.
//!
//! The checks every harness shares live here; what only one harness does (Codex's hook trust,
//! gemini-cli's headless tool list, Copilot's folder trust) lives in that harness's module.

mod claude;
mod codex;
mod copilot;
mod database;
mod gemini;
mod journal;
mod listener;
mod pi;
mod program;
#[cfg(test)]
mod scratch;
mod settled;
mod writable;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;

use clap::Args;
use reqwest::Method;
use serde_json::Value;

use super::DEFAULT_WAIT_S;
use super::call::Harness;
use super::files::{self, MARGIN_S};
use crate::client::args::ServerArgs;
use crate::client::http::Api;

/// The settings of `sayso hook doctor`.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// The harness to check.
    #[arg(value_enum)]
    pub harness: Harness,
    /// Check the user's settings (under $HOME) instead of the project's.
    #[arg(long)]
    pub user: bool,
    /// The project directory [default: the current one].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The command the harness runs [default: `sayso hook <harness>`].
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
    /// How long the hook waits for the person, in seconds (the harness's timeout must be
    /// longer).
    #[arg(long, env = "SAYSO_HOOK_TIMEOUT_S", default_value_t = DEFAULT_WAIT_S)]
    pub timeout_s: u64,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// How bad one finding is. The report prints them worst first, each under its own heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// A check that passed; the only thing labelled "ok".
    Ok,
    /// Nothing here fails, but something decides whether the hook runs that the doctor
    /// cannot see (a flag on the harness's command line, a mode that hands control back):
    /// what to do about it. Never labelled "ok".
    Advice,
    /// The hook runs and is obeyed, but an agent told to misbehave could get around it (it
    /// can read sayso's state, or rewrite what decides): docs/SECURITY.md.
    Risk,
    /// The hook will not run, or will not be obeyed.
    Fail,
}

impl Level {
    /// The heading of this level's group, and the mark before each of its lines.
    fn heading(self) -> (&'static str, &'static str) {
        match self {
            Level::Fail => (
                "Failures: the hook will not run, or will not be obeyed",
                "FAIL  ",
            ),
            Level::Risk => (
                "Risks: the hook runs, but an agent told to misbehave could get around it",
                "risk  ",
            ),
            Level::Advice => ("Advice: what to know before an unattended run", "advice"),
            Level::Ok => ("Passed", "ok    "),
        }
    }

    /// What the line under a finding is called: a fix for what is wrong, a step for advice.
    fn fix_label(self) -> &'static str {
        match self {
            Level::Advice => "do",
            _ => "fix",
        }
    }
}

/// One thing the doctor checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub level: Level,
    pub text: String,
    /// What to do about it, for a failure, a risk or advice.
    pub fix: Option<String>,
}

impl Finding {
    pub fn ok(text: impl Into<String>) -> Finding {
        Finding {
            level: Level::Ok,
            text: text.into(),
            fix: None,
        }
    }

    pub fn advice(text: impl Into<String>, what_to_do: impl Into<String>) -> Finding {
        Finding {
            level: Level::Advice,
            text: text.into(),
            fix: Some(what_to_do.into()),
        }
    }

    pub fn risk(text: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            level: Level::Risk,
            text: text.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn fail(text: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            level: Level::Fail,
            text: text.into(),
            fix: Some(fix.into()),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (_, mark) = self.level.heading();
        write!(f, "  {mark} {}", self.text)?;
        if let Some(fix) = &self.fix {
            write!(f, "\n         {}: {fix}", self.level.fix_label())?;
        }
        Ok(())
    }
}

/// What a harness's own checks are given.
#[derive(Debug, Clone)]
pub struct Setup {
    pub harness: Harness,
    /// The project directory (also for `--user`: trust is per project).
    pub project: PathBuf,
    pub home: Option<PathBuf>,
    pub user: bool,
    /// The settings file `install` writes, and its JSON when it could be read.
    pub settings_file: PathBuf,
    pub settings: Option<Value>,
    pub command: String,
    pub wait_s: u64,
}

impl Setup {
    /// The least timeout the harness must give the hook, in seconds.
    pub fn needed_timeout_s(&self) -> u64 {
        self.wait_s + MARGIN_S
    }
}

/// Every finding, worst first, and the one thing to fix.
#[derive(Debug, Clone)]
pub struct Report {
    pub harness: Harness,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn worst(&self) -> Level {
        self.findings
            .iter()
            .map(|f| f.level)
            .max()
            .unwrap_or(Level::Ok)
    }

    /// The first failure: the one thing to fix. Risks and advice are not: the hook runs and
    /// is obeyed, and they are listed beside it.
    pub fn first_fix(&self) -> Option<&Finding> {
        self.findings.iter().find(|f| f.level == Level::Fail)
    }

    fn has(&self, level: Level) -> bool {
        self.findings.iter().any(|f| f.level == level)
    }
}

impl fmt::Display for Report {
    /// Failures, then risks, then advice, then what passed, each group under its heading.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "sayso hook doctor {}:", self.harness.as_str())?;
        for level in [Level::Fail, Level::Risk, Level::Advice, Level::Ok] {
            if !self.has(level) {
                continue;
            }
            writeln!(f, "{}:", level.heading().0)?;
            for finding in self.findings.iter().filter(|x| x.level == level) {
                writeln!(f, "{finding}")?;
            }
        }
        let agent = crate::render::approval::agent_name(self.harness.as_str());
        let hook = format!("`sayso hook {}`", self.harness.as_str());
        if let Some(first) = self.first_fix() {
            return write!(
                f,
                "The one thing to fix first: {}",
                first.fix.as_deref().unwrap_or(&first.text)
            );
        }
        if self.has(Level::Advice) {
            write!(
                f,
                "Nothing fails: {agent} can run {hook} and obey it, started as the advice above says."
            )?;
        } else {
            write!(f, "{agent} will run {hook} and obey it.")?;
        }
        if self.has(Level::Risk) {
            write!(
                f,
                " An agent told to misbehave could still get around it: see each risk above (docs/SECURITY.md)."
            )?;
        }
        Ok(())
    }
}

/// Runs `sayso hook doctor`: prints the report, exit 1 when anything fails.
pub async fn run(args: DoctorArgs) -> anyhow::Result<u8> {
    let report = check(&args).await?;
    println!("{report}");
    Ok(u8::from(report.worst() == Level::Fail))
}

/// Every check for `args.harness`.
pub async fn check(args: &DoctorArgs) -> anyhow::Result<Report> {
    let project = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::current_dir()?,
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let root = if args.user {
        home.clone()
            .ok_or_else(|| anyhow::anyhow!("HOME is not set; leave out --user"))?
    } else {
        project.clone()
    };
    let command = args
        .command
        .clone()
        .unwrap_or_else(|| format!("sayso hook {}", args.harness.as_str()));
    let plan = files::plan(args.harness, &root, args.user, &command, args.timeout_s)?;
    let mut findings = Vec::new();
    // pi's "settings file" is the extension itself, which its own check reads.
    let settings = match args.harness {
        Harness::Pi => None,
        _ => read_settings(&plan.file, &mut findings),
    };
    let setup = Setup {
        harness: args.harness,
        project,
        home,
        user: args.user,
        settings_file: plan.file.clone(),
        settings,
        command: command.clone(),
        wait_s: args.timeout_s,
    };
    if setup.settings.is_some() {
        findings.push(entry_check(&setup, &plan));
    }
    if args.harness != Harness::Pi {
        // pi's command line is the one in its extension, checked there.
        findings.extend(program::check(&command, args.harness));
    }
    if matches!(args.harness, Harness::Claude | Harness::Codex) {
        findings.extend(settled::check(&setup));
    }
    findings.extend(match args.harness {
        Harness::Claude => claude::check(&setup),
        Harness::Codex => codex::check(&setup),
        Harness::Gemini => gemini::check(&setup),
        Harness::Copilot => copilot::check(&setup),
        Harness::Pi => pi::check(&setup),
        Harness::Cursor => vec![Finding::advice(
            "Cursor's agent has not been run against sayso here; its hooks are written as its documents describe them",
            "try one command that needs approval and check it reaches your phone",
        )],
    });
    findings.push(server_check(&args.server).await);
    findings.push(receipt_check(&args.server.server).await);
    findings.extend(writable::check(&setup));
    // Only the server SAYSO_URL names, and only if it runs as this user, is looked into.
    let uid = nix::unistd::geteuid().as_raw();
    let served = listener::served(&args.server.server, uid).await;
    findings.extend(database::check(&args.server.server, &served, uid));
    findings.extend(journal::check(&served));
    findings.sort_by_key(|f| std::cmp::Reverse(f.level));
    Ok(Report {
        harness: args.harness,
        findings,
    })
}

fn read_settings(file: &Path, findings: &mut Vec<Finding>) -> Option<Value> {
    match std::fs::read_to_string(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            findings.push(Finding::fail(
                format!("{} does not exist", file.display()),
                "run `sayso hook install` for this harness",
            ));
            None
        }
        Err(e) => {
            findings.push(Finding::fail(
                format!("cannot read {}: {e}", file.display()),
                format!("make {} readable", file.display()),
            ));
            None
        }
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                findings.push(Finding::fail(
                    format!(
                        "{} is not JSON ({e}); the harness ignores it",
                        file.display()
                    ),
                    format!("repair {}", file.display()),
                ));
                None
            }
        },
    }
}

/// The entry install writes is there, with a timeout longer than the hook's wait.
fn entry_check(setup: &Setup, plan: &files::Plan) -> Finding {
    let file = setup.settings_file.display();
    let settings = setup.settings.as_ref().expect("checked by the caller");
    let Some(timeout) = files::find_entry(settings, plan, &setup.command) else {
        return Finding::fail(
            format!("{file} has no hook running `{}`", setup.command),
            "run `sayso hook install` for this harness",
        );
    };
    let needed = setup.needed_timeout_s();
    match timeout {
        Some(t) if t < needed => Finding::fail(
            format!(
                "{file}: the harness gives the hook {t} s, less than the hook's wait ({} s) and a margin; the harness kills it first",
                setup.wait_s
            ),
            format!(
                "set the entry's timeout to at least {needed} s (in the harness's unit), or lower SAYSO_HOOK_TIMEOUT_S"
            ),
        ),
        Some(t) => Finding::ok(format!(
            "{file} runs `{}` with {t} s to answer",
            setup.command
        )),
        None => Finding::advice(
            format!(
                "{file} runs `{}` with the harness's default timeout",
                setup.command
            ),
            format!(
                "give the entry a timeout of at least {needed} s, as `sayso hook install` writes"
            ),
        ),
    }
}

/// The server answers with this key.
async fn server_check(server: &ServerArgs) -> Finding {
    let api = match Api::new(&server.server, server.key.as_deref()) {
        Ok(api) => api.quiet(),
        Err(e) => {
            return Finding::fail(
                format!("{e}"),
                "set SAYSO_KEY (and SAYSO_URL) where the harness starts",
            );
        }
    };
    let mut url = api.url(&["v1", "decisions"]);
    url.set_query(Some("limit=1"));
    let give_up = Instant::now() + Duration::from_secs(5);
    match api
        .send(
            || api.request(Method::GET, url.clone(), Duration::from_secs(5)),
            give_up,
        )
        .await
    {
        Ok(_) => Finding::ok(format!("{} takes the key", server.server)),
        Err(e) => Finding::fail(
            format!("the server refuses or cannot be reached: {e}"),
            "check SAYSO_URL and SAYSO_KEY in the environment the harness starts with",
        ),
    }
}

/// Whether the hook holds the server to a pinned receipt key, and whether the server still
/// signs with it.
async fn receipt_check(server: &str) -> Finding {
    let reinstall = "run `sayso hook install` again: it pins the server's receipt key";
    let pinned = match super::pins::pinned(server) {
        Ok(Some(key)) => key,
        Ok(None) => {
            return Finding::risk(
                format!(
                    "no receipt key is pinned for {server}: the hook takes an Allow it cannot \
                     check, so a proxy or a server posing as sayso could forge one"
                ),
                reinstall,
            );
        }
        Err(e) => return Finding::fail(e, "fix or remove the file, then ".to_string() + reinstall),
    };
    match crate::client::receipts::fetch_public_key(server).await {
        Ok(current) if current == pinned => Finding::ok(format!(
            "the hook allows only on receipts signed by the pinned key {} of {server}",
            pinned.key_id()
        )),
        Ok(current) => Finding::fail(
            format!(
                "{server} signs receipts with key {}, but key {} is pinned: every Allow will be \
                 denied",
                current.key_id(),
                pinned.key_id()
            ),
            format!(
                "if the server's key was rotated on purpose, {reinstall}; if not, something \
                 between here and sayso is answering in its name"
            ),
        ),
        Err(e) => Finding::advice(
            format!(
                "the hook allows only on receipts signed by the pinned key {}, but the server's \
                 current key could not be read: {e:#}",
                pinned.key_id()
            ),
            "check that SAYSO_URL leads to your sayso server",
        ),
    }
}

/// `text` without its `//` and `/* */` comments (outside strings).
pub(super) fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// A path with its links resolved, as the harnesses compare folders; the path itself when it
/// does not exist.
pub(super) fn real(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
