//! The files a harness keeps sayso's hook in: where each harness's settings file is and the
//! entry that goes there (`plan`), merging it into what is there and finding it again, where
//! pi loads its extension from, and writing a file so that a crash leaves the old one whole.
//! `install` writes them, `doctor` reads them, and `pins` and pi's extension are written
//! through `write_atomically`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use super::call::Harness;

/// Seconds the harness's own timeout is given beyond the hook's wait: reading stdin,
/// creating the question, printing the answer.
pub const MARGIN_S: u64 = 30;

/// What install adds for one harness: the file, the path of the list in it, the entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub file: PathBuf,
    /// Keys from the top of the file to each list the entry goes into.
    pub lists: Vec<Vec<&'static str>>,
    /// Lists of other events the same entry serves, each added on its own when it lacks the
    /// entry (Claude Code's `Elicitation`; the events of a call settled without the hook,
    /// elsewhere.rs): an install made before sayso served them gets them when it is run
    /// again.
    pub also: Vec<Vec<&'static str>>,
    pub entry: Value,
    /// Top-level keys the file must have (Copilot's and Cursor's `version`).
    pub top: Vec<(&'static str, Value)>,
    /// The harness counts the hook's timeout in milliseconds (gemini-cli), not seconds.
    pub timeout_in_ms: bool,
}

/// Where and what each harness needs (docs/HARNESSES.md).
pub fn plan(
    harness: Harness,
    root: &Path,
    user: bool,
    command: &str,
    wait_s: u64,
) -> anyhow::Result<Plan> {
    let timeout_s = wait_s + MARGIN_S;
    let claude_entry = || {
        json!({"matcher": "*", "hooks": [
            {"type": "command", "command": command, "timeout": timeout_s}
        ]})
    };
    Ok(match harness {
        Harness::Claude => Plan {
            file: root.join(".claude").join("settings.json"),
            lists: vec![vec!["hooks", "PreToolUse"]],
            also: [super::elicitation::EVENT]
                .iter()
                .chain(super::elsewhere::events(Harness::Claude))
                .map(|e| vec!["hooks", *e])
                .collect(),
            entry: claude_entry(),
            top: vec![],
            timeout_in_ms: false,
        },
        Harness::Codex => Plan {
            // The user's hooks are in Codex's own directory, `$CODEX_HOME` when set.
            file: if user {
                super::codex::home_dir(root).join("hooks.json")
            } else {
                root.join(".codex").join("hooks.json")
            },
            lists: vec![vec!["hooks", "PreToolUse"]],
            also: super::elsewhere::events(Harness::Codex)
                .iter()
                .map(|e| vec!["hooks", *e])
                .collect(),
            entry: claude_entry(),
            top: vec![],
            timeout_in_ms: false,
        },
        Harness::Gemini => Plan {
            file: root.join(".gemini").join("settings.json"),
            lists: vec![vec!["hooks", "BeforeTool"]],
            also: vec![],
            entry: json!({"matcher": "run_shell_command|write_file|replace", "hooks": [
                {"name": "sayso", "type": "command", "command": command,
                 "timeout": timeout_s * 1000}
            ]}),
            top: vec![],
            timeout_in_ms: true,
        },
        Harness::Copilot => {
            if user {
                bail!(
                    "Copilot CLI reads hooks from the repository's .github/hooks/; use --project"
                );
            }
            Plan {
                file: root.join(".github").join("hooks").join("sayso.json"),
                lists: vec![vec!["hooks", "preToolUse"]],
                also: vec![],
                entry: json!({"type": "command", "bash": command, "timeoutSec": timeout_s}),
                top: vec![("version", json!(1))],
                timeout_in_ms: false,
            }
        }
        Harness::Cursor => Plan {
            file: root.join(".cursor").join("hooks.json"),
            lists: vec![
                vec!["hooks", "beforeShellExecution"],
                vec!["hooks", "beforeMCPExecution"],
            ],
            also: vec![],
            entry: json!({"command": command, "timeout": timeout_s}),
            top: vec![("version", json!(1))],
            timeout_in_ms: false,
        },
        // Not a settings entry: the extension pi loads from its extensions directory.
        Harness::Pi => Plan {
            file: extension_path(root, user),
            lists: vec![],
            also: vec![],
            entry: Value::Null,
            top: vec![],
            timeout_in_ms: false,
        },
    })
}

/// The file's new text, or `None` when the hook is there already.
pub fn merge(before: Option<&str>, plan: &Plan, command: &str) -> anyhow::Result<Option<String>> {
    Ok(merge_lists(before, plan, command)?.map(|(text, _)| text))
}

/// The file's new text and the lists the entry was added to (`hooks.PreToolUse`), or `None`
/// when the hook is there already.
pub fn merge_lists(
    before: Option<&str>,
    plan: &Plan,
    command: &str,
) -> anyhow::Result<Option<(String, Vec<String>)>> {
    let mut root = match before.map(str::trim) {
        None | Some("") => Value::Object(Map::new()),
        Some(text) => serde_json::from_str::<Value>(text).context("it is not JSON")?,
    };
    if !root.is_object() {
        bail!("it does not hold a JSON object");
    }
    // The entry anywhere but in the `also` lists (under `PermissionRequest` instead, say)
    // is the hook installed already; each `also` list counts on its own.
    let mut elsewhere = root.clone();
    for keys in &plan.also {
        if let Some((last, parents)) = keys.split_last()
            && let Some(obj) = parents
                .iter()
                .try_fold(&mut elsewhere, |at, k| at.get_mut(*k))
                .and_then(Value::as_object_mut)
        {
            obj.remove(*last);
        }
    }
    let mut lists: Vec<&Vec<&str>> = Vec::new();
    if !contains_command(&elsewhere, command) {
        lists.extend(&plan.lists);
    }
    lists.extend(
        plan.also
            .iter()
            .filter(|keys| !list_runs(&root, keys, command)),
    );
    if lists.is_empty() {
        return Ok(None);
    }
    for (key, value) in &plan.top {
        let obj = root.as_object_mut().expect("checked above");
        obj.entry(key.to_string()).or_insert_with(|| value.clone());
    }
    let names = lists.iter().map(|l| l.join(".")).collect();
    for keys in lists {
        let mut at = &mut root;
        let (last, parents) = keys.split_last().expect("a list has a name");
        for key in parents {
            let obj = at
                .as_object_mut()
                .with_context(|| format!("{key}'s parent is not an object"))?;
            at = obj
                .entry(key.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
        }
        let obj = at
            .as_object_mut()
            .with_context(|| format!("{} is not an object", parents.join(".")))?;
        let list = obj
            .entry(last.to_string())
            .or_insert_with(|| Value::Array(vec![]));
        list.as_array_mut()
            .with_context(|| format!("{} is not a list", keys.join(".")))?
            .push(plan.entry.clone());
    }
    Ok(Some((serde_json::to_string_pretty(&root)? + "\n", names)))
}

/// The entry running `command` in one of the plan's lists, and the timeout it gives the hook
/// in seconds (`None` inside when it sets none). `None` when no entry runs `command`.
pub fn find_entry(settings: &Value, plan: &Plan, command: &str) -> Option<Option<u64>> {
    plan.lists.iter().find_map(|keys| {
        let mut at = settings;
        for key in keys {
            at = at.get(key)?;
        }
        at.as_array()?.iter().find_map(|item| {
            let runs = |v: &Value| {
                ["command", "bash"]
                    .iter()
                    .any(|k| v[k].as_str().is_some_and(|c| c.trim() == command))
            };
            // Flat entries (Copilot, Cursor) run the command themselves; Claude's layout
            // nests a list of hooks under a matcher.
            let hook = if runs(item) {
                item
            } else {
                item["hooks"].as_array()?.iter().find(|h| runs(h))?
            };
            Some(timeout_s(plan, hook))
        })
    })
}

/// The timeout a hook entry sets, in seconds, read in the unit and under the key the plan's
/// own entry uses (gemini-cli counts milliseconds, Copilot names it `timeoutSec`).
fn timeout_s(plan: &Plan, hook: &Value) -> Option<u64> {
    let planned = if plan.entry["hooks"].is_array() {
        &plan.entry["hooks"][0]
    } else {
        &plan.entry
    };
    let key = ["timeoutSec", "timeout"]
        .into_iter()
        .find(|k| planned.get(*k).is_some())?;
    let value = hook[key].as_u64()?;
    Some(if plan.timeout_in_ms {
        value / 1000
    } else {
        value
    })
}

/// Whether the list at `keys` holds an entry running `command`.
fn list_runs(settings: &Value, keys: &[&str], command: &str) -> bool {
    keys.iter()
        .try_fold(settings, |at, k| at.get(*k))
        .is_some_and(|list| contains_command(list, command))
}

/// Whether any string in the settings runs `command` already.
fn contains_command(v: &Value, command: &str) -> bool {
    match v {
        Value::String(s) => s.trim() == command,
        Value::Array(items) => items.iter().any(|i| contains_command(i, command)),
        Value::Object(m) => m.values().any(|i| contains_command(i, command)),
        _ => false,
    }
}

/// Writes through a temporary file beside the target, so a crash leaves the old file whole.
pub fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("sayso-tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

/// The extension's file name, in `.pi/extensions/` or `~/.pi/agent/extensions/`.
pub const EXTENSION_FILE: &str = "sayso.ts";

/// Where pi loads the extension from: the project's `.pi/extensions/`, or (`user`) the agent
/// directory's `extensions/` (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`; `root` is `HOME`).
pub fn extension_path(root: &Path, user: bool) -> PathBuf {
    let dir = if user {
        agent_dir(root)
    } else {
        root.join(".pi")
    };
    dir.join("extensions").join(EXTENSION_FILE)
}

/// pi's agent directory, as pi finds it.
pub fn agent_dir(home: &Path) -> PathBuf {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(d) if d == "~" => home.to_path_buf(),
        Ok(d) if d.starts_with("~/") => home.join(&d[2..]),
        Ok(d) if !d.is_empty() => PathBuf::from(d),
        _ => home.join(".pi").join("agent"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_is_added_beside_what_is_there() {
        let p = plan(
            Harness::Claude,
            Path::new("/r"),
            false,
            "sayso hook claude",
            900,
        )
        .unwrap();
        let before = r#"{"model": "opus", "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}]}}"#;
        let after: Value = serde_json::from_str(
            &merge(Some(before), &p, "sayso hook claude")
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(after["model"], "opus");
        let list = after["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1]["hooks"][0]["timeout"], 930);
        let again = serde_json::to_string(&after).unwrap();
        assert_eq!(merge(Some(&again), &p, "sayso hook claude").unwrap(), None);
    }

    #[test]
    fn a_file_that_is_not_an_object_is_refused() {
        let p = plan(
            Harness::Cursor,
            Path::new("/r"),
            false,
            "sayso hook cursor",
            60,
        )
        .unwrap();
        assert!(merge(Some("[1]"), &p, "x").is_err());
        assert!(merge(Some("{oops"), &p, "x").is_err());
        let bad = r#"{"hooks": {"beforeShellExecution": {"command": "x"}}}"#;
        assert!(merge(Some(bad), &p, "sayso hook cursor").is_err());
    }

    #[test]
    fn the_installed_entry_is_found_with_its_timeout_in_seconds() {
        for harness in [
            Harness::Claude,
            Harness::Gemini,
            Harness::Copilot,
            Harness::Cursor,
        ] {
            let p = plan(harness, Path::new("/r"), false, "sayso hook x", 900).unwrap();
            let v: Value =
                serde_json::from_str(&merge(None, &p, "sayso hook x").unwrap().unwrap()).unwrap();
            assert_eq!(
                find_entry(&v, &p, "sayso hook x"),
                Some(Some(930)),
                "{harness:?}"
            );
            assert_eq!(find_entry(&v, &p, "other"), None, "{harness:?}");
        }
        let p = plan(Harness::Claude, Path::new("/r"), false, "c", 900).unwrap();
        let v = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"command": "c"}]}]}});
        assert_eq!(find_entry(&v, &p, "c"), Some(None));
    }

    #[test]
    fn each_harness_gets_its_unit_and_layout() {
        let g = plan(Harness::Gemini, Path::new("/r"), false, "c", 900).unwrap();
        assert_eq!(g.entry["hooks"][0]["timeout"], 930_000);
        let c = plan(Harness::Copilot, Path::new("/r"), false, "c", 900).unwrap();
        assert_eq!(c.entry["timeoutSec"], 930);
        assert!(plan(Harness::Copilot, Path::new("/r"), true, "c", 900).is_err());
        let after = merge(None, &c, "c").unwrap().unwrap();
        let v: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(v["version"], 1);
    }
}
