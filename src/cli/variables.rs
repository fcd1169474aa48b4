//! The `SAYSO_*` variables as people set them: which ones exist, which were set that nothing
//! reads (a typo goes unnoticed otherwise), and the settings `serve` would run with, as
//! `sayso config` prints them with secrets masked.

use std::ffi::OsStr;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use crate::app::ServerSettings;
use crate::config::{Cli, Command, GlobalArgs, ServeArgs};

/// Every `SAYSO_*` variable the command line reads, across all commands.
pub fn known() -> Vec<String> {
    fn walk(cmd: &clap::Command, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            if let Some(env) = arg.get_env().and_then(OsStr::to_str)
                && !out.iter().any(|k| k == env)
            {
                out.push(env.to_string());
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, out);
        }
    }
    let mut out = Vec::new();
    walk(&Cli::command(), &mut out);
    out.sort();
    out
}

/// The `SAYSO_*` names among `names` that nothing reads, each with the nearest known one.
pub fn unknown<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<(String, Option<String>)> {
    let known = known();
    names
        .into_iter()
        .filter(|n| n.starts_with("SAYSO_") && !known.iter().any(|k| k == n))
        .map(|n| {
            let nearest = known
                .iter()
                .map(|k| (strsim::levenshtein(n, k), k))
                .min()
                .filter(|(distance, _)| *distance <= (n.len() / 3).max(3))
                .map(|(_, k)| k.clone());
            (n.to_string(), nearest)
        })
        .collect()
}

/// A line for each unknown `SAYSO_*` variable in this process's environment.
pub fn unknown_in_environment() -> Vec<String> {
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .collect();
    unknown(names.iter().map(String::as_str))
        .into_iter()
        .map(|(name, nearest)| match nearest {
            Some(k) => format!("{name} is not a sayso setting and is ignored; did you mean {k}?"),
            None => format!("{name} is not a sayso setting and is ignored"),
        })
        .collect()
}

/// The settings `serve` runs with given `argv` (`sayso config …` or `sayso serve …`), one
/// `NAME=value  # where it came from` line each, with secrets masked: a flag, a variable, a
/// default, or "derived from" the settings a computed default follows. `# unset` is left for
/// a setting that is off.
pub fn effective(argv: impl IntoIterator<Item = String>) -> anyhow::Result<Vec<String>> {
    let argv: Vec<String> = argv
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            if i > 0 && a == "config" {
                "serve".into()
            } else {
                a
            }
        })
        .collect();
    let mut cmd = Cli::command();
    // Built, the `serve` command carries the global arguments too.
    cmd.build();
    let matches = cmd.clone().try_get_matches_from(&argv)?;
    let serve_matches = matches.subcommand_matches("serve").unwrap_or(&matches);
    let cli = Cli::from_arg_matches(&matches)?;
    // `serve` (and `config`, read as serve) carries the server's flags of its own; `sayso`
    // alone takes them at the top.
    let (global, args) = match cli.command {
        Some(Command::Serve(args)) => (args.global.clone(), args),
        _ => (cli.global, ServeArgs::default()),
    };
    let derived = Derived::new(&global, &args)?;
    let serve = cmd
        .find_subcommand("serve")
        .expect("serve is a command")
        .clone();
    let mut lines = Vec::new();
    for arg in serve.get_arguments() {
        let Some(env) = arg.get_env().and_then(OsStr::to_str) else {
            continue;
        };
        let id = arg.get_id().as_str();
        let (value, source) = match value_of(serve_matches, id) {
            Some((value, ValueSource::CommandLine)) => {
                let flag = arg
                    .get_long()
                    .map(|l| format!(" --{l}"))
                    .unwrap_or_default();
                (value, format!("flag{flag}"))
            }
            Some((value, ValueSource::EnvVariable)) => (value, "variable".to_string()),
            Some((value, _)) => (value, "default".to_string()),
            None => derived.of(env),
        };
        lines.push(format!("{env}={}  # {source}", mask(env, &value)));
    }
    lines.sort();
    Ok(lines)
}

/// The value given for `id` and where it came from; `None` when nothing gave one.
fn value_of(matches: &ArgMatches, id: &str) -> Option<(String, ValueSource)> {
    let source = matches.value_source(id)?;
    let value = matches
        .get_raw(id)
        .map(|values| {
            values
                .map(|v| v.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    Some((value, source))
}

/// The values serve computes for settings left unset, from the settings it would run with.
struct Derived {
    settings: ServerSettings,
    listen: std::net::SocketAddr,
    database_url: String,
    state_dir: Option<std::path::PathBuf>,
    metrics_token: bool,
}

impl Derived {
    fn new(global: &GlobalArgs, args: &ServeArgs) -> anyhow::Result<Derived> {
        let settings = ServerSettings::from_args(global, args)
            .map_err(|e| anyhow::anyhow!("sayso serve would refuse these settings: {e}"))?;
        Ok(Derived {
            settings,
            listen: global.listen,
            database_url: global.database_url.clone(),
            state_dir: args.state_dir.clone(),
            metrics_token: args.metrics_token.is_some(),
        })
    }

    /// The value and its source for a setting nothing gave: what serve derives, or `unset`
    /// with what that means when the setting is off.
    fn of(&self, env: &str) -> (String, String) {
        let s = &self.settings;
        let derived = |value: String, from: &str| (value, format!("derived from {from}"));
        let off = |what: &str| (String::new(), format!("unset: {what}"));
        let limits = s.app.limits.waiting();
        match env {
            "SAYSO_PUBLIC_URL" => derived(s.service.public_url.clone(), "SAYSO_LISTEN"),
            "SAYSO_WAITING_PER_KEY" => derived(
                limits.per_key.map(|n| n.to_string()).unwrap_or_default(),
                "SAYSO_MAX_CONNECTIONS (half of it)",
            ),
            "SAYSO_WAITING_CONNECTIONS" => derived(
                limits.connections.to_string(),
                "SAYSO_MAX_CONNECTIONS (nine tenths of it)",
            ),
            "SAYSO_CONNECTIONS_PER_ADDRESS" => derived(
                s.app
                    .limits
                    .per_address()
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
                "SAYSO_WAITING_CONNECTIONS (the same)",
            ),
            "SAYSO_RATE_LIMIT_PER_S" => (
                s.app.http.rate_limit.per_second.to_string(),
                "default".into(),
            ),
            "SAYSO_RATE_LIMIT_BURST" => (s.app.http.rate_limit.burst.to_string(), "default".into()),
            "SAYSO_STATE_DIR" => {
                let dir =
                    super::first_run::state_dir(self.state_dir.as_deref(), &self.database_url);
                let sqlite_file = self.database_url.starts_with("sqlite:")
                    && !self.database_url.contains(":memory:");
                let which = if sqlite_file {
                    "SAYSO_DATABASE_URL (the SQLite file's folder)"
                } else {
                    "SAYSO_DATABASE_URL (not a SQLite file: the working directory)"
                };
                derived(dir.display().to_string(), which)
            }
            "SAYSO_MCP_ALLOWED_HOSTS" => derived(
                crate::mcp::allowed_hosts(&s.service.public_url, &[])
                    .map(|h| h.join(","))
                    .unwrap_or_else(|| "*".into()),
                "SAYSO_PUBLIC_URL (its host, and localhost)",
            ),
            "SAYSO_METRICS_LISTEN" if self.metrics_token => derived(
                self.listen.to_string(),
                "SAYSO_LISTEN (/metrics is served on the main address)",
            ),
            "SAYSO_METRICS_LISTEN" | "SAYSO_METRICS_TOKEN" => off("there is no /metrics"),
            "SAYSO_SMTP_URL" => off("email is off"),
            "SAYSO_RETENTION_DAYS" => off("resolved decisions are kept for ever"),
            "SAYSO_TRUSTED_PROXIES" => off("Forwarded and X-Forwarded-For are ignored"),
            "SAYSO_MCP_ALLOWED_ORIGINS" => {
                off("no browser origin but the public URL's own may call /mcp")
            }
            "SAYSO_SLACK_BOT_TOKEN" => off("Slack is off"),
            "SAYSO_SLACK_SIGNING_SECRET" => off("no Slack interactivity URL"),
            "SAYSO_SLACK_APP_TOKEN" => off("no Slack Socket Mode"),
            "SAYSO_SLACK_API_URL" => ("https://slack.com/api/".into(), "default".into()),
            "SAYSO_MATRIX_HOMESERVER" | "SAYSO_MATRIX_USER" => off("Matrix is off"),
            "SAYSO_MATRIX_PASSWORD" | "SAYSO_MATRIX_ACCESS_TOKEN" => off("no Matrix login"),
            "SAYSO_TELEGRAM_BOT_TOKEN" => off("Telegram is off"),
            "SAYSO_TELEGRAM_WEBHOOK_SECRET" => off("Telegram updates by long polling"),
            "SAYSO_TELEGRAM_API_URL" => ("https://api.telegram.org/".into(), "default".into()),
            _ => off("off"),
        }
    }
}

/// The settings that are off when unset, where `# unset` is the truth.
#[cfg(test)]
const OFF_WHEN_UNSET: [&str; 15] = [
    "SAYSO_METRICS_TOKEN",
    "SAYSO_SMTP_URL",
    "SAYSO_RETENTION_DAYS",
    "SAYSO_TRUSTED_PROXIES",
    "SAYSO_MCP_ALLOWED_ORIGINS",
    "SAYSO_METRICS_LISTEN",
    "SAYSO_SLACK_BOT_TOKEN",
    "SAYSO_SLACK_SIGNING_SECRET",
    "SAYSO_SLACK_APP_TOKEN",
    "SAYSO_MATRIX_HOMESERVER",
    "SAYSO_MATRIX_USER",
    "SAYSO_MATRIX_PASSWORD",
    "SAYSO_MATRIX_ACCESS_TOKEN",
    "SAYSO_TELEGRAM_BOT_TOKEN",
    "SAYSO_TELEGRAM_WEBHOOK_SECRET",
];

/// Secrets as `****`; a URL keeps everything but its password.
fn mask(name: &str, value: &str) -> String {
    if value.is_empty() {
        return String::new();
    }
    // By the name's words: SAYSO_KEY is a key, SAYSO_WAITING_PER_KEY a number.
    let words: Vec<&str> = name.split('_').collect();
    let secret = words
        .iter()
        .any(|w| ["TOKEN", "SECRET", "PASSWORD"].contains(w))
        || (words.last() == Some(&"KEY") && words.iter().rev().nth(1) != Some(&"PER"));
    if secret {
        return "****".into();
    }
    match url::Url::parse(value) {
        Ok(mut url) if url.password().is_some() => {
            let _ = url.set_password(Some("****"));
            url.to_string()
        }
        _ => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_variables_come_from_the_command_line() {
        let known = known();
        for name in [
            "SAYSO_DATABASE_URL",
            "SAYSO_SMTP_URL",
            "SAYSO_KEY",
            "SAYSO_URL",
        ] {
            assert!(known.iter().any(|k| k == name), "{name} in {known:?}");
        }
    }

    #[test]
    fn an_unknown_variable_is_named_with_the_nearest_known_one() {
        let found = unknown([
            "SAYSO_DATABSE_URL",
            "SAYSO_LISTEN",
            "PATH",
            "SAYSO_SOMETHING_ELSE_ENTIRELY",
        ]);
        assert_eq!(
            found,
            [
                (
                    "SAYSO_DATABSE_URL".to_string(),
                    Some("SAYSO_DATABASE_URL".to_string())
                ),
                ("SAYSO_SOMETHING_ELSE_ENTIRELY".to_string(), None),
            ]
        );
    }

    #[test]
    fn secrets_are_masked() {
        assert_eq!(mask("SAYSO_METRICS_TOKEN", "abc"), "****");
        assert_eq!(mask("SAYSO_KEY", "sk_abc"), "****");
        assert_eq!(mask("SAYSO_WAITING_PER_KEY", "50"), "50");
        assert_eq!(
            mask("SAYSO_SMTP_URL", "smtp://user:hunter2@mail.example.com:587"),
            "smtp://user:****@mail.example.com:587"
        );
        assert_eq!(
            mask("SAYSO_DATABASE_URL", "postgres://sayso@db/sayso"),
            "postgres://sayso@db/sayso"
        );
        assert_eq!(mask("SAYSO_SMTP_URL", ""), "");
    }

    #[test]
    fn the_effective_settings_say_where_each_came_from() {
        let lines = effective(
            [
                "sayso",
                "config",
                "--smtp-url",
                "smtp://u:pw@mail:25",
                "--max-await-s",
                "30",
            ]
            .map(String::from),
        )
        .unwrap();
        let line = |name: &str| {
            lines
                .iter()
                .find(|l| l.starts_with(&format!("{name}=")))
                .cloned()
                .unwrap_or_else(|| panic!("no {name} in {lines:?}"))
        };
        assert_eq!(
            line("SAYSO_SMTP_URL"),
            "SAYSO_SMTP_URL=smtp://u:****@mail:25  # flag --smtp-url"
        );
        assert_eq!(
            line("SAYSO_MAX_AWAIT_S"),
            "SAYSO_MAX_AWAIT_S=30  # flag --max-await-s"
        );
        // The limits on what agents can make of the person.
        for name in [
            "SAYSO_WAITING_PER_KEY",
            "SAYSO_WAITING_CONNECTIONS",
            "SAYSO_CONNECTIONS_PER_ADDRESS",
            "SAYSO_IDLE_TIMEOUT_S",
            "SAYSO_URGENT_PER_HOUR",
            "SAYSO_NOTIFY_PER_MINUTE",
        ] {
            assert!(!line(name).contains("****"), "{}", line(name));
        }
        assert!(
            line("SAYSO_DATABASE_URL").ends_with("# default")
                || line("SAYSO_DATABASE_URL").ends_with("# variable")
        );
    }

    #[test]
    fn computed_defaults_are_shown_with_what_they_follow_and_unset_means_off() {
        let lines = effective(
            [
                "sayso",
                "config",
                "--max-connections",
                "100",
                "--listen",
                "0.0.0.0:9000",
                "--database-url",
                "sqlite:///srv/sayso/sayso.db",
            ]
            .map(String::from),
        )
        .unwrap();
        for want in [
            "SAYSO_WAITING_PER_KEY=50  # derived from SAYSO_MAX_CONNECTIONS (half of it)",
            "SAYSO_WAITING_CONNECTIONS=90  # derived from SAYSO_MAX_CONNECTIONS (nine tenths of it)",
            "SAYSO_CONNECTIONS_PER_ADDRESS=90  # derived from SAYSO_WAITING_CONNECTIONS (the same)",
            "SAYSO_PUBLIC_URL=http://localhost:9000  # derived from SAYSO_LISTEN",
            "SAYSO_STATE_DIR=/srv/sayso  # derived from SAYSO_DATABASE_URL (the SQLite file's folder)",
        ] {
            assert!(lines.iter().any(|l| l == want), "{want} in {lines:#?}");
        }
        // Unless a variable sets them, the rate limits are their defaults.
        if std::env::var_os("SAYSO_RATE_LIMIT_PER_S").is_none() {
            assert!(
                lines
                    .iter()
                    .any(|l| l == "SAYSO_RATE_LIMIT_PER_S=100  # default")
            );
        }
        for line in lines.iter().filter(|l| l.contains("# unset")) {
            let name = line.split('=').next().unwrap();
            assert!(
                OFF_WHEN_UNSET.contains(&name) && line.contains("=  # unset: "),
                "{line}: a setting with a value in effect is shown unset"
            );
        }
    }

    #[test]
    fn settings_serve_would_refuse_are_named() {
        let err = effective(["sayso", "config", "--public-url", "ftp://x"].map(String::from))
            .unwrap_err()
            .to_string();
        assert!(err.contains("SAYSO_PUBLIC_URL"), "{err}");
    }
}
