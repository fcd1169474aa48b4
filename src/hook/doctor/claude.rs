//! Claude Code (2.1.328): whether a setting turns the hook off. `disableAllHooks` skips every
//! hook from every settings file, and the file of highest precedence that sets it decides:
//! managed settings, then the project's `.claude/settings.local.json`, then
//! `.claude/settings.json`, then the user's `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR`
//! when set). Managed settings' `allowManagedHooksOnly` skips every hook but their own. Under
//! `claude -p` a skipped hook leaves Claude Code's own rules, which refuse a tool nobody allowed;
//! with an allow rule or a bypass mode the tool then runs ungated.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Finding, Setup};

/// Where Claude Code reads managed settings on Linux.
const MANAGED: &str = "/etc/claude-code/managed-settings.json";

pub fn check(setup: &Setup) -> Vec<Finding> {
    check_with(setup, Path::new(MANAGED), user_dir(setup))
}

/// The user's settings directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn user_dir(setup: &Setup) -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| setup.home.as_ref().map(|h| h.join(".claude")))
}

/// One settings file, in precedence order.
struct Layer {
    file: PathBuf,
    settings: Option<Value>,
}

fn read(file: PathBuf) -> Layer {
    let settings = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    Layer { file, settings }
}

fn check_with(setup: &Setup, managed: &Path, user: Option<PathBuf>) -> Vec<Finding> {
    let managed = read(managed.to_path_buf());
    // Highest precedence first; managed settings are taken apart below, since they win.
    let mut layers = vec![
        read(setup.project.join(".claude").join("settings.local.json")),
        read(setup.project.join(".claude").join("settings.json")),
    ];
    if let Some(dir) = user {
        layers.push(read(dir.join("settings.json")));
    }
    let mut found = Vec::new();

    let flag = |layer: &Layer, key: &str| layer.settings.as_ref()?.get(key)?.as_bool();
    let disabled_by = if flag(&managed, "disableAllHooks") == Some(true) {
        Some(&managed)
    } else {
        layers
            .iter()
            .find_map(|l| flag(l, "disableAllHooks").map(|on| (l, on)))
            .and_then(|(l, on)| on.then_some(l))
    };
    match disabled_by {
        Some(layer) => found.push(Finding::fail(
            format!(
                "{} sets \"disableAllHooks\": true: Claude Code runs no hook, sayso's included",
                layer.file.display()
            ),
            format!("remove \"disableAllHooks\" from {}", layer.file.display()),
        )),
        None => found.push(Finding::ok("no settings file disables hooks")),
    }

    if flag(&managed, "allowManagedHooksOnly") == Some(true) {
        let in_managed = managed
            .settings
            .as_ref()
            .is_some_and(|s| runs_command(s, &setup.command));
        if !in_managed {
            found.push(Finding::fail(
                format!(
                    "{} sets \"allowManagedHooksOnly\": true: Claude Code runs only the hooks of managed settings",
                    managed.file.display()
                ),
                format!(
                    "add the hook to {} (an administrator's file), or turn allowManagedHooksOnly off",
                    managed.file.display()
                ),
            ));
        }
    }
    found
}

/// Whether any `hooks` entry of `settings` runs `command`.
fn runs_command(settings: &Value, command: &str) -> bool {
    fn walk(v: &Value, command: &str) -> bool {
        match v {
            Value::Object(m) => {
                m.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| c.trim() == command)
                    || m.values().any(|v| walk(v, command))
            }
            Value::Array(items) => items.iter().any(|v| walk(v, command)),
            _ => false,
        }
    }
    settings.get("hooks").is_some_and(|h| walk(h, command))
}

#[cfg(test)]
mod tests {
    use super::super::Level;
    use super::super::scratch::Scratch;
    use super::*;
    use crate::hook::call::Harness;

    fn tmp() -> Scratch {
        Scratch::new("claude", &["project/.claude", "home/.claude"])
    }

    fn setup(t: &Scratch) -> Setup {
        t.setup(Harness::Claude, "project", "project/.claude/settings.json")
    }

    fn write(t: &Scratch, rel: &str, text: &str) {
        std::fs::write(t.0.join(rel), text).unwrap();
    }

    fn run(t: &Scratch) -> Vec<Finding> {
        check_with(
            &setup(t),
            &t.0.join("managed-settings.json"),
            Some(t.0.join("home/.claude")),
        )
    }

    fn worst(found: &[Finding]) -> Level {
        found.iter().map(|f| f.level).max().unwrap()
    }

    #[test]
    fn disable_all_hooks_is_read_in_claude_codes_precedence() {
        let t = tmp();
        assert_eq!(worst(&run(&t)), Level::Ok);

        write(
            &t,
            "home/.claude/settings.json",
            r#"{"disableAllHooks": true}"#,
        );
        let found = run(&t);
        assert_eq!(worst(&found), Level::Fail);
        assert!(
            found[0].text.contains("home/.claude/settings.json"),
            "{found:?}"
        );

        // The project's local file is of higher precedence: its false wins.
        write(
            &t,
            "project/.claude/settings.local.json",
            r#"{"disableAllHooks": false}"#,
        );
        assert_eq!(worst(&run(&t)), Level::Ok);

        write(
            &t,
            "project/.claude/settings.local.json",
            r#"{"disableAllHooks": true}"#,
        );
        write(&t, "home/.claude/settings.json", "{}");
        let found = run(&t);
        assert!(found[0].text.contains("settings.local.json"), "{found:?}");

        // Managed settings win over everything.
        write(
            &t,
            "project/.claude/settings.local.json",
            r#"{"disableAllHooks": false}"#,
        );
        write(&t, "managed-settings.json", r#"{"disableAllHooks": true}"#);
        let found = run(&t);
        assert_eq!(worst(&found), Level::Fail);
        assert!(found[0].text.contains("managed-settings.json"), "{found:?}");
    }

    #[test]
    fn managed_hooks_only_skips_the_projects_hook() {
        let t = tmp();
        write(
            &t,
            "managed-settings.json",
            r#"{"allowManagedHooksOnly": true}"#,
        );
        let found = run(&t);
        assert_eq!(worst(&found), Level::Fail);
        assert!(
            found
                .iter()
                .any(|f| f.text.contains("allowManagedHooksOnly"))
        );
        write(
            &t,
            "managed-settings.json",
            r#"{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"matcher": "*",
                "hooks": [{"type": "command", "command": "sayso hook claude"}]}]}}"#,
        );
        assert_eq!(worst(&run(&t)), Level::Ok);
    }
}
