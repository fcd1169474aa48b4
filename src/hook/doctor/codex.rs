//! Codex (0.169.0): whether it will run the hook at all. It reads a hook only once that
//! entry is trusted in `config.toml` and, for a project's `.codex/hooks.json`, only in a
//! trusted project; otherwise it skips the hook without a word and every command runs. A
//! hand-back (`SAYSO_HOOK_FALLBACK=ask`) prints nothing, which `codex exec` takes as
//! go-ahead: the command runs when sayso cannot answer.

use std::path::Path;

use super::{Finding, Setup};
use crate::hook::codex;

pub fn check(setup: &Setup) -> Vec<Finding> {
    let mut found = Vec::new();
    let Some(home) = &setup.home else {
        return vec![Finding::fail(
            "HOME is not set; Codex's config.toml cannot be found",
            "set HOME (or CODEX_HOME) as Codex starts with it",
        )];
    };
    let config = codex::config_file(home);
    let file = config.display();
    let doc = match codex::read_config(&config) {
        Ok(doc) => doc,
        Err(e) => {
            return vec![Finding::fail(
                format!("{e:#}"),
                format!("repair {file}; Codex does not start on a config it cannot read"),
            )];
        }
    };
    let empty = toml_edit::DocumentMut::new();
    let doc = doc.as_ref().unwrap_or(&empty);
    let install = if setup.user {
        "sayso hook install codex --user"
    } else {
        "sayso hook install codex"
    };

    if !setup.user {
        let project = codex::real_path(&setup.project);
        found.push(match codex::project_trust(doc, &project) {
            Some((_, level)) if level == "trusted" => {
                Finding::ok(format!("{} is a trusted project in {file}", project.display()))
            }
            Some((dir, level)) => Finding::fail(
                format!(
                    "{} is marked {level:?} in {file}: Codex reads no .codex/ there, so it never runs the hook",
                    dir.display()
                ),
                format!(
                    "set trust_level = \"trusted\" under [projects.\"{}\"] in {file}, or install with --user",
                    dir.display()
                ),
            ),
            None => Finding::fail(
                format!(
                    "{} is not a trusted project in {file}: Codex reads no .codex/ there, so it never runs the hook",
                    project.display()
                ),
                format!("run `{install}` again (it marks the project trusted), or `codex exec --trust` once here"),
            ),
        });
    }

    if let Some(settings) = &setup.settings {
        let hooks_file = codex::real_path(setup.settings_file.parent().unwrap_or(Path::new(".")))
            .join("hooks.json");
        if let Some(trust) = codex::hook_trust(&hooks_file, settings, &setup.command) {
            let (hash, off) = codex::hook_state(doc, &trust.key);
            found.push(if off {
                Finding::fail(
                    format!("the hook is turned off in {file} (enabled = false under [hooks.state.\"{}\"])", trust.key),
                    format!("remove `enabled = false` from [hooks.state.\"{}\"] in {file}", trust.key),
                )
            } else {
                match hash {
                    Some(h) if h == trust.hash => {
                        Finding::ok(format!("Codex trusts the hook ({file}, {})", trust.key))
                    }
                    Some(_) => Finding::fail(
                        format!("the hook changed since it was trusted in {file}: Codex skips it without a word"),
                        format!("run `{install}` again to trust it as it is now, or review it in Codex's /hooks"),
                    ),
                    None => Finding::fail(
                        format!("the hook is not trusted in {file}: Codex skips it without a word"),
                        format!("run `{install}` again (it writes the trust), or review it in Codex's /hooks"),
                    ),
                }
            });
        }
    }

    found.extend(super::settled::codex_trust(setup, doc));

    let text = |key: &str| doc.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let hooks_feature = doc
        .get("features")
        .and_then(|f| f.as_table_like())
        .and_then(|f| f.get("hooks"))
        .and_then(|v| v.as_bool());
    if hooks_feature == Some(false) {
        found.push(Finding::fail(
            format!("hooks are turned off in {file} ([features] hooks = false)"),
            format!("remove `hooks = false` from [features] in {file}"),
        ));
    }
    match text("approval_policy").as_deref() {
        Some("untrusted") => found.push(Finding::fail(
            format!("approval_policy = \"untrusted\" in {file}: Codex 0.169.0 refuses to start with it"),
            format!("set approval_policy = \"never\" in {file}"),
        )),
        Some(p) if p != "never" => found.push(Finding::advice(
            format!("approval_policy = {p:?} in {file}: `codex exec` runs with \"never\" anyway, but in the terminal Codex may still ask there after sayso allows"),
            "for unattended runs use `codex exec` (its approval is \"never\")",
        )),
        _ => {}
    }
    if text("sandbox_mode").as_deref() == Some("read-only") {
        found.push(Finding::advice(
            format!(
                "sandbox_mode = \"read-only\" in {file}: a command you allow still cannot write"
            ),
            "use `codex exec -s workspace-write` (or danger-full-access) for commands that write",
        ));
    }
    if doc
        .get("hooks")
        .and_then(|h| h.as_table_like())
        .is_some_and(|h| h.get("PreToolUse").is_some())
        && setup.user
    {
        found.push(Finding::advice(
            format!(
                "{file} has [hooks] entries as well as {}; Codex loads both",
                setup.settings_file.display()
            ),
            "keep one of the two",
        ));
    }
    if std::env::var("SAYSO_HOOK_FALLBACK").is_ok_and(|f| f.trim() == "ask") {
        found.push(Finding::fail(
            "SAYSO_HOOK_FALLBACK=ask: the hand-back prints nothing, and `codex exec` then runs the command; a server that is down lets everything through",
            "unset SAYSO_HOOK_FALLBACK (deny is the default)",
        ));
    }
    found
}
