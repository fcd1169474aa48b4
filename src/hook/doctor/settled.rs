//! Whether the harness tells the hook of a call it settled itself (the person answered at its
//! terminal, the tool ran, it refused the call): without those entries the question stays on
//! the phone until the hook's wait ends, where a press answers nothing (src/hook/elsewhere.rs).

use std::path::Path;

use serde_json::Value;

use super::{Finding, Setup};
use crate::hook::{codex, elsewhere};

pub fn check(setup: &Setup) -> Option<Finding> {
    let settings = setup.settings.as_ref()?;
    let events = elsewhere::events(setup.harness);
    let missing: Vec<&str> = events
        .iter()
        .copied()
        .filter(|e| !runs(settings, e, &setup.command))
        .collect();
    let install = format!("sayso hook install {}", setup.harness.as_str());
    let file = setup.settings_file.display();
    if !missing.is_empty() {
        return Some(Finding::advice(
            format!(
                "{file} does not run the hook on {}: a question settled at the terminal stays open on the phone until the hook's wait ends",
                missing.join(", ")
            ),
            format!("run `{install}` again (it adds them, keeping what is there)"),
        ));
    }
    Some(Finding::ok(format!(
        "the hook hears of calls settled without it ({})",
        events.join(", ")
    )))
}

/// For Codex: whether the `PostToolUse` entry is trusted as it is (Codex skips it otherwise).
pub fn codex_trust(setup: &Setup, doc: &toml_edit::DocumentMut) -> Option<Finding> {
    let settings = setup.settings.as_ref()?;
    let hooks_file =
        codex::real_path(setup.settings_file.parent().unwrap_or(Path::new("."))).join("hooks.json");
    let trust = codex::event_trust(&hooks_file, settings, &setup.command, codex::EVENTS[1])?;
    let (hash, off) = codex::hook_state(doc, &trust.key);
    (off || hash.as_deref() != Some(trust.hash.as_str())).then(|| {
        Finding::advice(
            format!(
                "the PostToolUse hook is not trusted as it is ([hooks.state.\"{}\"]): Codex skips it, so a question settled at the terminal stays open on the phone",
                trust.key
            ),
            format!("run `sayso hook install codex{}` again", if setup.user { " --user" } else { "" }),
        )
    })
}

/// Whether the list `hooks.<event>` of `settings` holds an entry running `command`.
fn runs(settings: &Value, event: &str, command: &str) -> bool {
    let Some(groups) = settings["hooks"][event].as_array() else {
        return false;
    };
    groups.iter().any(|g| {
        g["hooks"].as_array().is_some_and(|hooks| {
            hooks
                .iter()
                .any(|h| h["command"].as_str().is_some_and(|c| c.trim() == command))
        })
    })
}
