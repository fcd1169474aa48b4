//! pi: the hook runs from sayso's extension, so what matters is that pi loads that extension
//! (in a directory pi reads, not switched off in its settings), that it is the binary's own
//! copy, and that the command it runs can be started. A tool call the extension cannot put
//! through `sayso hook pi` is blocked, never run.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Finding, Setup, program};
use crate::hook::files::{EXTENSION_FILE, agent_dir, extension_path};
use crate::hook::pi::{extension, settings_of};

/// The pi version the tests ran.
pub const TESTED: &str = "0.73.1";

pub fn check(setup: &Setup) -> Vec<Finding> {
    let mut findings = Vec::new();
    let home = setup.home.clone().unwrap_or_default();
    let project_file = extension_path(&setup.project, false);
    let user_file = extension_path(&home, true);
    let installed: Vec<&PathBuf> = [&project_file, &user_file]
        .into_iter()
        .filter(|f| f.is_file())
        .collect();
    let file = &setup.settings_file;
    if !file.is_file() {
        match installed.first() {
            Some(other) => findings.push(Finding::ok(format!(
                "{} does not exist, but pi loads {}",
                file.display(),
                other.display()
            ))),
            None => {
                findings.push(Finding::fail(
                    format!(
                        "sayso's extension is in neither {} nor {}: pi runs every tool ungated and has no ask_user",
                        project_file.display(),
                        user_file.display()
                    ),
                    format!(
                        "run `sayso hook install pi{}`",
                        if setup.user { " --user" } else { "" }
                    ),
                ));
                return findings;
            }
        }
    }
    if installed.len() == 2 {
        findings.push(Finding::advice(
            format!(
                "pi loads both {} and {}: every tool call is put to the person twice",
                project_file.display(),
                user_file.display()
            ),
            format!("remove one of them (e.g. rm {})", project_file.display()),
        ));
    }
    for f in installed {
        findings.extend(extension_check(f, setup));
    }
    findings.extend(disabled_check(setup, &home));
    findings.push(pi_version());
    findings
}

/// The installed extension is sayso's, as this binary writes it, and can start its command.
fn extension_check(file: &Path, setup: &Setup) -> Vec<Finding> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            return vec![Finding::fail(
                format!("cannot read {}: {e}", file.display()),
                format!("make {} readable", file.display()),
            )];
        }
    };
    let Some((command, timeout)) = settings_of(&text) else {
        return vec![Finding::fail(
            format!("{} is not sayso's extension", file.display()),
            "move it away and run `sayso hook install pi`",
        )];
    };
    let mut findings = vec![];
    if timeout.is_some_and(|t| extension(&command, t) == text) {
        findings.push(Finding::ok(format!(
            "{} is this sayso's extension, running `{command}`",
            file.display()
        )));
    } else {
        findings.push(Finding::fail(
            format!(
                "{} is not the extension this sayso writes (older, or edited)",
                file.display()
            ),
            format!(
                "run `sayso hook install pi{}` again",
                if file.starts_with(&setup.project) {
                    ""
                } else {
                    " --user"
                }
            ),
        ));
    }
    let needed = setup.needed_timeout_s();
    match timeout {
        Some(t) if t < needed => findings.push(Finding::fail(
            format!(
                "{}: pi gives the hook {t} s, less than the hook's wait ({} s) and a margin; the extension gives up first and blocks the call",
                file.display(),
                setup.wait_s
            ),
            format!("reinstall with --timeout-s {}", setup.wait_s),
        )),
        Some(t) => findings.push(Finding::ok(format!(
            "the extension gives the hook {t} s to answer"
        ))),
        None => {}
    }
    for mut found in program::check(&command, setup.harness) {
        if found.level == super::Level::Fail {
            // pi does not go on without the hook: the extension blocks what it cannot ask about.
            found.text = found.text.replace(
                "the harness cannot start the hook (some harnesses then block every gated tool, others run it ungated)",
                "the extension cannot start the hook, so pi blocks every tool call",
            );
        }
        findings.push(found);
    }
    findings
}

/// pi's settings can switch an auto-discovered extension off (`"extensions": ["-…"]` or
/// `["!…"]`); then nothing is gated.
fn disabled_check(setup: &Setup, home: &Path) -> Vec<Finding> {
    let files = [
        setup.project.join(".pi").join("settings.json"),
        agent_dir(home).join("settings.json"),
    ];
    let mut findings = vec![];
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            findings.push(Finding::advice(
                format!("{} is not JSON; pi may not read it as meant", f.display()),
                format!("repair {}", f.display()),
            ));
            continue;
        };
        let off = v["extensions"].as_array().into_iter().flatten().any(|e| {
            e.as_str().is_some_and(|s| {
                (s.starts_with('!') || s.starts_with('-'))
                    && (s.contains("sayso") || s.contains('*') || s.contains(EXTENSION_FILE))
            })
        });
        if off {
            findings.push(Finding::fail(
                format!(
                    "{} switches sayso's extension off (\"extensions\"); pi runs every tool ungated",
                    f.display()
                ),
                format!("remove that entry from \"extensions\" in {}", f.display()),
            ));
        }
    }
    findings
}

/// Which pi is on the PATH, and whether it is the version the tests ran.
fn pi_version() -> Finding {
    let out = std::process::Command::new("pi")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
            if v == TESTED {
                Finding::ok(format!("pi {v} is the version sayso was tested with"))
            } else {
                Finding::advice(
                    format!("pi {v} is on the PATH; sayso's extension was tested with pi {TESTED}"),
                    "try one command that needs approval and check it reaches your phone",
                )
            }
        }
        _ => Finding::advice(
            "pi is not on this PATH",
            "check that pi runs with the PATH it will start with",
        ),
    }
}
