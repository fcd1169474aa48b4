//! The `SAYSO_*` variables as people set them: which ones exist, which were set that nothing
//! reads (a typo goes unnoticed otherwise), and the settings `serve` would run with, as
//! `sayso config` prints them with secrets masked.

use std::ffi::OsStr;

use clap::parser::ValueSource;
use clap::{ArgMatches, Command, CommandFactory};

use super::Cli;

/// Every `SAYSO_*` variable the command line reads, across all commands.
pub fn known() -> Vec<String> {
    fn walk(cmd: &Command, out: &mut Vec<String>) {
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
/// `NAME=value  # where it came from` line each, with secrets masked.
pub fn effective(argv: impl IntoIterator<Item = String>) -> Result<Vec<String>, clap::Error> {
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
        let (value, source) = value_of(serve_matches, id);
        lines.push(format!("{env}={}  # {source}", mask(env, &value)));
    }
    lines.sort();
    Ok(lines)
}

fn value_of(matches: &ArgMatches, id: &str) -> (String, &'static str) {
    let value = matches
        .get_raw(id)
        .map(|values| {
            values
                .map(|v| v.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let source = match matches.value_source(id) {
        Some(ValueSource::CommandLine) => "command line",
        Some(ValueSource::EnvVariable) => "environment",
        Some(ValueSource::DefaultValue) => "default",
        _ => "unset",
    };
    (value, source)
}

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
            "SAYSO_SMTP_URL=smtp://u:****@mail:25  # command line"
        );
        assert_eq!(
            line("SAYSO_MAX_AWAIT_S"),
            "SAYSO_MAX_AWAIT_S=30  # command line"
        );
        // The limits on what agents can make of the person.
        for name in [
            "SAYSO_WAITING_PER_KEY",
            "SAYSO_WAITING_CONNECTIONS",
            "SAYSO_URGENT_PER_HOUR",
            "SAYSO_NOTIFY_PER_MINUTE",
        ] {
            assert!(!line(name).contains("****"), "{}", line(name));
        }
        assert!(
            line("SAYSO_DATABASE_URL").ends_with("# default")
                || line("SAYSO_DATABASE_URL").ends_with("# environment")
        );
    }
}
