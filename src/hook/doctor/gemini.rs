//! gemini-cli (0.61.0): whether it will run the `BeforeTool` hook and obey it.
//!
//! - Folder trust. gemini-cli reads a project's `.gemini/settings.json` only in a trusted
//!   folder, and decides that once, before it reads its command line: trusted by
//!   `GEMINI_CLI_TRUST_WORKSPACE=true`, by `~/.gemini/trustedFolders.json`, or because folder
//!   trust is off (`security.folderTrust.enabled: false`). `gemini -p` in an untrusted folder
//!   stops with an error; with `--skip-trust` it starts, but without the project's settings,
//!   so the project's hook never runs and every tool runs ungated. The user's hook still runs
//!   under `--skip-trust`.
//! - `hooksConfig.enabled: false` turns every hook off; `hooksConfig.disabled` lists hooks by
//!   name (or command) that do not run.
//! - The entry's `matcher` is a regular expression tested against the tool's name: a tool it
//!   does not match runs without the hook.
//! - The entry's `timeout` is in milliseconds, 60 000 when missing; a hook that outlives it is
//!   dropped and the tool runs.
//! - With `security.environmentVariableRedaction.enabled` (or on GitHub Actions, where every
//!   variable not on its short list is withheld) the hook starts without `SAYSO_KEY` unless
//!   it is in `security.environmentVariableRedaction.allowed`: every gated tool is denied.
//! - `gemini -p` without `--yolo` offers the model no shell, write or replace tool (so there is
//!   nothing to gate); `security.disableYoloMode` refuses `--yolo`.
//! - Under `--yolo` an empty answer is a go-ahead, so `SAYSO_HOOK_FALLBACK=ask` runs the tool
//!   whenever sayso cannot answer.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod matcher;
mod trust;

use super::{Finding, Setup, real, strip_comments};
use matcher::matches;
use trust::trust;

/// The tools that change something, which the matcher must cover.
const GATED: [&str; 3] = ["run_shell_command", "write_file", "replace"];
/// gemini-cli's timeout for a hook entry without one, in milliseconds.
const DEFAULT_TIMEOUT_MS: u64 = 60_000;

pub fn check(setup: &Setup) -> Vec<Finding> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    check_with(setup, &env)
}

/// The settings files gemini-cli merges, highest precedence first.
struct Scopes {
    files: Vec<(PathBuf, Value)>,
}

impl Scopes {
    /// The first scope that sets the value at `path`.
    fn get(&self, path: &[&str]) -> Option<(&Path, &Value)> {
        self.files.iter().find_map(|(file, v)| {
            let mut at = v;
            for key in path {
                at = at.get(key)?;
            }
            (!at.is_null()).then_some((file.as_path(), at))
        })
    }

    /// Every string of the list at `path`, over all scopes (gemini-cli unites them).
    fn union(&self, path: &[&str]) -> Vec<String> {
        self.files
            .iter()
            .filter_map(|(_, v)| {
                let mut at = v;
                for key in path {
                    at = at.get(key)?;
                }
                at.as_array()
            })
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    }
}

fn check_with(setup: &Setup, env: &dyn Fn(&str) -> Option<String>) -> Vec<Finding> {
    let mut found = Vec::new();
    // gemini-cli's own home: `$GEMINI_CLI_HOME` in place of `HOME`.
    let Some(home) = env("GEMINI_CLI_HOME")
        .map(PathBuf::from)
        .or_else(|| setup.home.clone())
    else {
        return vec![Finding::fail(
            "HOME is not set; gemini-cli's settings cannot be found",
            "set HOME (or GEMINI_CLI_HOME) as gemini-cli starts with it",
        )];
    };
    let gemini_dir = home.join(".gemini");
    let user_file = gemini_dir.join("settings.json");
    if setup.user && !same_file(&setup.settings_file, &user_file) {
        found.push(Finding::fail(
            format!(
                "gemini-cli reads the user's settings from {}, not {}: the hook there never runs",
                user_file.display(),
                setup.settings_file.display()
            ),
            "run `sayso hook install gemini --user` with HOME set to GEMINI_CLI_HOME",
        ));
    }
    let system_file = env("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"));
    let defaults_file = env("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| system_file.with_file_name("system-defaults.json"));
    let read = |p: &Path| read_json(p).map(|v| (p.to_path_buf(), v));

    // Trust is decided from the system, user and default settings, never the project's.
    let trust_scopes = Scopes {
        files: [&system_file, &user_file, &defaults_file]
            .into_iter()
            .filter_map(|p| read(p))
            .collect(),
    };
    let trusted = trust(setup, env, &trust_scopes, &gemini_dir, &mut found);

    let project_file = setup.project.join(".gemini").join("settings.json");
    let mut files = vec![];
    files.extend(read(&system_file));
    if trusted && !same_file(&setup.project, &home) {
        files.extend(read(&project_file));
    }
    files.extend(read(&user_file));
    files.extend(read(&defaults_file));
    let scopes = Scopes { files };

    if let Some((file, v)) = scopes.get(&["hooksConfig", "enabled"])
        && v == &Value::Bool(false)
    {
        found.push(Finding::fail(
            format!(
                "{}: hooksConfig.enabled is false: gemini-cli runs no hook at all",
                file.display()
            ),
            format!(
                "remove \"enabled\": false from hooksConfig in {}",
                file.display()
            ),
        ));
    }

    if let Some(settings) = &setup.settings
        && let Some((matcher, hook)) = entry(settings, &setup.command)
    {
        found.extend(entry_checks(setup, matcher, hook, &scopes));
    }

    found.extend(redaction(env, &scopes));

    match scopes.get(&["security", "disableYoloMode"]).or_else(|| scopes.get(&["admin", "secureModeEnabled"])) {
        Some((file, Value::Bool(true))) => found.push(Finding::advice(
            format!(
                "{} refuses --yolo: `gemini -p` then offers the model no shell, write or replace tool, so unattended runs cannot change anything",
                file.display()
            ),
            "remove security.disableYoloMode, or run gemini-cli interactively",
        )),
        _ => found.push(Finding::advice(
            "the doctor cannot see gemini-cli's command line: without --yolo, `gemini -p` offers the model no shell, write or replace tool (nothing to gate); with --skip-trust it runs without the project's hook",
            "run unattended as `gemini -p … --yolo`, never with --skip-trust; with --yolo the hook is the only gate",
        )),
    }

    if env("SAYSO_HOOK_FALLBACK").is_some_and(|f| f.trim().eq_ignore_ascii_case("ask")) {
        found.push(Finding::advice(
            "SAYSO_HOOK_FALLBACK=ask hands the call back to gemini-cli when sayso cannot answer; under --yolo that runs the tool",
            "leave SAYSO_HOOK_FALLBACK unset (deny) for unattended runs",
        ));
    }
    found
}

/// The `BeforeTool` definition holding the hook that runs `command`: its matcher and the hook.
fn entry<'a>(settings: &'a Value, command: &str) -> Option<(Option<&'a str>, &'a Value)> {
    settings["hooks"]["BeforeTool"]
        .as_array()?
        .iter()
        .find_map(|def| {
            let hook = def["hooks"]
                .as_array()?
                .iter()
                .find(|h| h["command"].as_str().is_some_and(|c| c.trim() == command))?;
            Some((def["matcher"].as_str(), hook))
        })
}

fn entry_checks(
    setup: &Setup,
    matcher: Option<&str>,
    hook: &Value,
    scopes: &Scopes,
) -> Vec<Finding> {
    let mut found = Vec::new();
    let file = setup.settings_file.display();
    match matcher.map(str::trim).filter(|m| !m.is_empty() && *m != "*") {
        None => found.push(Finding::ok(format!("{file}: the hook's matcher covers every tool"))),
        Some(m) => match GATED.iter().map(|t| (t, matches(m, t))).collect::<Vec<_>>() {
            results if results.iter().any(|(_, r)| r.is_none()) => found.push(Finding::advice(
                format!("{file}: the matcher {m:?} is more than sayso can read; gemini-cli runs the hook only for tools it matches"),
                format!("make sure {m:?} matches {}", GATED.join(", ")),
            )),
            results => {
                let missed: Vec<&str> = results
                    .iter()
                    .filter(|(_, r)| *r == Some(false))
                    .map(|(t, _)| **t)
                    .collect();
                if missed.is_empty() {
                    found.push(Finding::ok(format!(
                        "{file}: the matcher {m:?} covers {}",
                        GATED.join(", ")
                    )));
                } else {
                    found.push(Finding::fail(
                        format!(
                            "{file}: the matcher {m:?} does not match {}: gemini-cli runs those without the hook",
                            missed.join(", ")
                        ),
                        format!("set the matcher to \"{}\" (or \".*\")", GATED.join("|")),
                    ));
                }
            }
        },
    }
    if hook.get("timeout").is_none_or(Value::is_null) {
        found.push(Finding::fail(
            format!(
                "{file}: the hook has no timeout; gemini-cli gives it {} s and then runs the tool without its answer",
                DEFAULT_TIMEOUT_MS / 1000
            ),
            format!(
                "set \"timeout\": {} (milliseconds), as `sayso hook install gemini` writes",
                setup.needed_timeout_s() * 1000
            ),
        ));
    }
    let name = hook["name"]
        .as_str()
        .or(hook["command"].as_str())
        .unwrap_or_default();
    let disabled = scopes.union(&["hooksConfig", "disabled"]);
    if disabled.iter().any(|d| d == name) {
        found.push(Finding::fail(
            format!("hooksConfig.disabled lists {name:?}: gemini-cli skips the hook"),
            format!("remove {name:?} from hooksConfig.disabled"),
        ));
    }
    found
}

/// Whether the variables the hook needs reach it through gemini-cli's redaction.
fn redaction(env: &dyn Fn(&str) -> Option<String>, scopes: &Scopes) -> Vec<Finding> {
    let strict = env("GITHUB_SHA").is_some() || env("SURFACE").as_deref() == Some("Github");
    let on = matches!(
        scopes.get(&["security", "environmentVariableRedaction", "enabled"]),
        Some((_, Value::Bool(true)))
    );
    let allowed: Vec<String> = scopes
        .union(&["security", "environmentVariableRedaction", "allowed"])
        .iter()
        .map(|k| k.to_ascii_uppercase())
        .collect();
    let blocked: Vec<String> = scopes
        .union(&["security", "environmentVariableRedaction", "blocked"])
        .iter()
        .map(|k| k.to_ascii_uppercase())
        .collect();
    let needed: &[&str] = if strict {
        &["SAYSO_URL", "SAYSO_KEY"]
    } else if on {
        // Names with KEY, TOKEN, SECRET, AUTH… are withheld.
        &["SAYSO_KEY"]
    } else {
        &[]
    };
    let mut withheld: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|k| !allowed.iter().any(|a| a == k))
        .collect();
    for k in ["SAYSO_URL", "SAYSO_KEY"] {
        if blocked.iter().any(|b| b == k)
            && !allowed.iter().any(|a| a == k)
            && !withheld.contains(&k)
        {
            withheld.push(k);
        }
    }
    if withheld.is_empty() {
        return vec![];
    }
    let why = if strict {
        "on GitHub Actions gemini-cli starts hooks with almost none of its environment"
    } else {
        "gemini-cli's environment redaction is on"
    };
    vec![Finding::fail(
        format!(
            "{why}: the hook starts without {}, so it cannot ask and denies every gated tool",
            withheld.join(" and ")
        ),
        format!(
            "add {} to security.environmentVariableRedaction.allowed in gemini-cli's settings",
            withheld
                .iter()
                .map(|k| format!("\"{k}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )]
}

/// A settings file as gemini-cli reads it: JSON with comments.
fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&strip_comments(&text)).ok()
}

fn same_file(a: &Path, b: &Path) -> bool {
    real(a) == real(b)
}

#[cfg(test)]
mod tests {
    use super::super::Level;
    use super::super::scratch::Scratch;
    use super::*;
    use crate::hook::call::Harness;
    use serde_json::json;

    struct Fixture {
        root: Scratch,
    }

    impl Fixture {
        fn new() -> Fixture {
            Fixture {
                root: Scratch::new("gemini", &["home/.gemini", "project/.gemini"]),
            }
        }

        fn write(&self, rel: &str, v: &Value) {
            std::fs::write(self.root.0.join(rel), v.to_string()).unwrap();
        }

        fn project(&self) -> PathBuf {
            self.root.0.join("project")
        }

        fn setup(&self, settings: Value) -> Setup {
            self.write("project/.gemini/settings.json", &settings);
            Setup {
                settings: Some(settings),
                ..self
                    .root
                    .setup(Harness::Gemini, "project", "project/.gemini/settings.json")
            }
        }

        fn trust(&self) {
            let rules = json!({ self.project().display().to_string(): "TRUST_FOLDER" });
            self.write("home/.gemini/trustedFolders.json", &rules);
        }
    }

    fn installed(matcher: &str) -> Value {
        json!({"hooks": {"BeforeTool": [{"matcher": matcher, "hooks": [
            {"name": "sayso", "type": "command", "command": "sayso hook gemini", "timeout": 930000}]}]}})
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// The worst finding but the advice every report gives (the doctor cannot see the
    /// command line).
    fn worst(found: &[Finding]) -> (Level, String) {
        let f = found
            .iter()
            .filter(|f| !is_command_line_advice(f))
            .max_by_key(|f| f.level)
            .unwrap();
        (f.level, f.text.clone())
    }

    fn is_command_line_advice(f: &Finding) -> bool {
        f.level == Level::Advice && f.text.starts_with("the doctor cannot see gemini-cli's")
    }

    #[test]
    fn the_command_line_is_advice_never_ok() {
        let fx = Fixture::new();
        fx.trust();
        let found = check_with(&fx.setup(installed(".*")), &no_env);
        let said: Vec<&Finding> = found.iter().filter(|f| f.text.contains("--yolo")).collect();
        assert!(
            !said.is_empty() && said.iter().all(|f| is_command_line_advice(f)),
            "{found:?}"
        );
        assert!(
            said[0]
                .fix
                .as_deref()
                .unwrap()
                .contains("never with --skip-trust")
        );
    }

    #[test]
    fn an_untrusted_project_is_a_failure_and_a_trusted_one_passes() {
        let fx = Fixture::new();
        let setup = fx.setup(installed("run_shell_command|write_file|replace"));
        let (level, text) = worst(&check_with(&setup, &no_env));
        assert_eq!(level, Level::Fail);
        assert!(text.contains("--skip-trust"), "{text}");
        fx.trust();
        let found = check_with(&setup, &no_env);
        assert_eq!(worst(&found).0, Level::Ok, "{found:?}");
        let env = |k: &str| (k == "GEMINI_CLI_TRUST_WORKSPACE").then(|| "true".to_string());
        std::fs::remove_file(fx.root.0.join("home/.gemini/trustedFolders.json")).unwrap();
        assert_eq!(worst(&check_with(&setup, &env)).0, Level::Ok);
    }

    #[test]
    fn a_matcher_that_misses_a_tool_hooks_off_and_redaction_fail() {
        let fx = Fixture::new();
        fx.trust();
        let found = check_with(&fx.setup(installed("run_shell_command")), &no_env);
        assert!(
            found
                .iter()
                .any(|f| f.level == Level::Fail && f.text.contains("write_file, replace")),
            "{found:?}"
        );
        for ok in [
            ".*",
            "*",
            "",
            "^(run_shell_command|write_file|replace)$",
            "run_shell|write|replace",
        ] {
            let found = check_with(&fx.setup(installed(ok)), &no_env);
            assert!(
                found
                    .iter()
                    .all(|f| f.level == Level::Ok || is_command_line_advice(f))
                    || ok.contains('('),
                "{ok}: {found:?}"
            );
        }
        let mut s = installed(".*");
        s["hooksConfig"] = json!({"disabled": ["sayso"]});
        assert!(
            worst(&check_with(&fx.setup(s), &no_env))
                .1
                .contains("hooksConfig.disabled")
        );
        fx.write(
            "home/.gemini/settings.json",
            &json!({"hooksConfig": {"enabled": false}}),
        );
        assert!(
            worst(&check_with(&fx.setup(installed(".*")), &no_env))
                .1
                .contains("runs no hook")
        );
        fx.write(
            "home/.gemini/settings.json",
            &json!({"security": {"environmentVariableRedaction": {"enabled": true}}}),
        );
        assert!(
            worst(&check_with(&fx.setup(installed(".*")), &no_env))
                .1
                .contains("without SAYSO_KEY")
        );
        fx.write("home/.gemini/settings.json", &json!({"security": {"environmentVariableRedaction": {"enabled": true, "allowed": ["SAYSO_KEY"]}}}));
        assert_eq!(
            worst(&check_with(&fx.setup(installed(".*")), &no_env)).0,
            Level::Ok
        );
        let mut s = installed(".*");
        s["hooks"]["BeforeTool"][0]["hooks"][0]
            .as_object_mut()
            .unwrap()
            .remove("timeout");
        assert!(
            worst(&check_with(&fx.setup(s), &no_env))
                .1
                .contains("no timeout")
        );
    }

    #[test]
    fn comments_are_stripped_outside_strings() {
        let text = "{\n // a comment\n \"a\": \"x // y\", /* b */ \"b\": 1\n}";
        assert_eq!(
            serde_json::from_str::<Value>(&strip_comments(text)).unwrap(),
            json!({"a": "x // y", "b": 1})
        );
    }
}
