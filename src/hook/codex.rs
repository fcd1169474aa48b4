//! Codex's trust, which decides whether it runs a hook at all. Codex (0.169.0) runs a hook
//! from `hooks.json` only once the person has trusted that one entry: `config.toml` (in
//! `$CODEX_HOME`, else `~/.codex`) holds `[hooks.state."<hooks.json>:pre_tool_use:<group>:<hook>"]`
//! with `trusted_hash`, a SHA-256 of the entry as Codex normalises it. A project's `.codex/`
//! is read only in a trusted project (`[projects."<dir>"] trust_level = "trusted"`). Without
//! either, Codex skips the hook without a word and every command runs ungated.
//!
//! `sayso hook install codex` writes both for the entry it installs; `sayso hook doctor codex`
//! reads them back.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use toml_edit::{DocumentMut, Item, Table, TableLike};

/// The events sayso's entries serve, as `hooks.json` names them and as Codex's trust keys
/// and hashes label them: the gate, and the event of a call settled without it
/// (src/hook/elsewhere.rs).
pub const EVENTS: [(&str, &str); 2] = [
    ("PreToolUse", "pre_tool_use"),
    ("PostToolUse", "post_tool_use"),
];
/// Codex's timeout for a hook entry that sets none, in seconds.
const DEFAULT_TIMEOUT_S: u64 = 600;

/// Codex's own directory: `$CODEX_HOME`, else `.codex` under `home`.
pub fn home_dir(home: &Path) -> PathBuf {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => home.join(".codex"),
    }
}

/// Codex's `config.toml`, where its trust is kept.
pub fn config_file(home: &Path) -> PathBuf {
    home_dir(home).join("config.toml")
}

/// The trust Codex needs for one hook entry.
#[derive(Debug, Clone, PartialEq)]
pub struct HookTrust {
    /// `[hooks.state."<key>"]`.
    pub key: String,
    /// `trusted_hash`.
    pub hash: String,
}

/// The trust of the `PreToolUse` entry running `command` in `settings` (the JSON of
/// `hooks_file`), or `None` when no entry runs it.
pub fn hook_trust(hooks_file: &Path, settings: &Value, command: &str) -> Option<HookTrust> {
    event_trust(hooks_file, settings, command, EVENTS[0])
}

/// The trust of the entry of `event` (its name in `hooks.json`, its label) running `command`.
pub fn event_trust(
    hooks_file: &Path,
    settings: &Value,
    command: &str,
    (event, label): (&str, &str),
) -> Option<HookTrust> {
    let groups = settings["hooks"][event].as_array()?;
    groups.iter().enumerate().find_map(|(g, group)| {
        let hooks = group["hooks"].as_array()?;
        hooks.iter().enumerate().find_map(|(h, hook)| {
            let runs = hook["type"] == "command"
                && hook["command"]
                    .as_str()
                    .is_some_and(|c| c.trim() == command);
            runs.then(|| HookTrust {
                key: format!("{}:{label}:{g}:{h}", hooks_file.display()),
                hash: event_hash(label, group, hook),
            })
        })
    })
}

/// What Codex hashes for one handler: the event, the group's matcher and that one handler,
/// normalised (a timeout of at least 1 s, 600 when unset; `async` false when unset), without
/// the fields that are unset, keys sorted, compact JSON, SHA-256 as `sha256:<hex>`.
fn event_hash(label: &str, group: &Value, hook: &Value) -> String {
    let mut handler = Map::new();
    handler.insert("type".into(), json!("command"));
    handler.insert("command".into(), hook["command"].clone());
    let timeout = hook["timeout"].as_u64().unwrap_or(DEFAULT_TIMEOUT_S).max(1);
    handler.insert("timeout".into(), json!(timeout));
    handler.insert(
        "async".into(),
        json!(hook["async"].as_bool().unwrap_or(false)),
    );
    for key in ["statusMessage", "additionalContextLimit"] {
        if !hook[key].is_null() {
            handler.insert(key.into(), hook[key].clone());
        }
    }
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(label));
    if let Some(m) = group["matcher"].as_str() {
        identity.insert("matcher".into(), json!(m));
    }
    identity.insert("hooks".into(), json!([handler]));
    let digest = Sha256::digest(canonical(&Value::Object(identity)).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Compact JSON with every object's keys sorted.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), canonical(&m[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// The directory as Codex names it in its keys: absolute, symbolic links resolved.
pub fn real_path(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Reads `config.toml`: `None` when there is none.
pub fn read_config(file: &Path) -> anyhow::Result<Option<DocumentMut>> {
    match std::fs::read_to_string(file) {
        Ok(text) => {
            Ok(Some(text.parse::<DocumentMut>().with_context(|| {
                format!("{} is not valid TOML", file.display())
            })?))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", file.display())),
    }
}

/// A project's `trust_level` in the config: the directory's own, else its nearest parent's.
pub fn project_trust(doc: &DocumentMut, project: &Path) -> Option<(PathBuf, String)> {
    let projects = doc.get("projects")?.as_table_like()?;
    project.ancestors().find_map(|dir| {
        let level = projects
            .get(&dir.display().to_string())?
            .as_table_like()?
            .get("trust_level")?
            .as_str()?;
        Some((dir.to_path_buf(), level.to_string()))
    })
}

/// The hook's state in the config: its `trusted_hash` and whether it is turned off.
pub fn hook_state(doc: &DocumentMut, key: &str) -> (Option<String>, bool) {
    let state = doc
        .get("hooks")
        .and_then(Item::as_table_like)
        .and_then(|h| h.get("state"))
        .and_then(Item::as_table_like)
        .and_then(|s| s.get(key))
        .and_then(Item::as_table_like);
    let hash = state
        .and_then(|s| s.get("trusted_hash"))
        .and_then(Item::as_str)
        .map(str::to_string);
    let off = state.and_then(|s| s.get("enabled")).and_then(Item::as_bool) == Some(false);
    (hash, off)
}

/// The table `key` of `parent`, made when missing.
fn table<'a>(parent: &'a mut dyn TableLike, key: &str) -> anyhow::Result<&'a mut dyn TableLike> {
    if parent.get(key).is_none() {
        let mut t = Table::new();
        t.set_implicit(true);
        parent.insert(key, Item::Table(t));
    }
    parent
        .get_mut(key)
        .and_then(Item::as_table_like_mut)
        .with_context(|| format!("`{key}` is not a table"))
}

/// Writes the hook's trust (and, for a project, the project's, unless the person marked it
/// untrusted) into `config.toml`, keeping what is there. Returns what it did, one line each.
pub fn write_trust(
    config: &Path,
    trusts: &[HookTrust],
    project: Option<&Path>,
    dry_run: bool,
) -> anyhow::Result<Vec<String>> {
    let before = std::fs::read_to_string(config).or_else(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Ok(String::new()),
        _ => Err(e),
    });
    let before = before.with_context(|| format!("cannot read {}", config.display()))?;
    let mut doc = before
        .parse::<DocumentMut>()
        .with_context(|| format!("{} is not valid TOML; left as it is", config.display()))?;
    let mut said = Vec::new();
    let file = config.display();
    if let Some(dir) = project {
        let current = project_trust(&doc, dir);
        match current.as_ref().map(|(_, level)| level.as_str()) {
            Some("trusted") => {}
            Some(level) => said.push(format!(
                "warning: {} is marked {level:?} in {file}; Codex reads no project hooks there, so none of this runs. Set trust_level = \"trusted\" for it (or install with --user)",
                current.as_ref().map(|(d, _)| d.display().to_string()).unwrap_or_default()
            )),
            None => {
                let key = dir.display().to_string();
                let projects = table(doc.as_table_mut(), "projects")?;
                let entry = table(projects, &key)?;
                entry.insert("trust_level", toml_edit::value("trusted"));
                said.push(format!(
                    "marked {key} a trusted project in {file} (Codex reads a project's .codex/ only then)"
                ));
            }
        }
    }
    for trust in trusts {
        let (hash, _) = hook_state(&doc, &trust.key);
        if hash.as_deref() != Some(trust.hash.as_str()) {
            let hooks = table(doc.as_table_mut(), "hooks")?;
            let state = table(hooks, "state")?;
            let entry = table(state, &trust.key)?;
            entry.insert("trusted_hash", toml_edit::value(trust.hash.as_str()));
            said.push(format!(
                "trusted the hook in {file} ([hooks.state.\"{}\"]), as Codex's own hook review does",
                trust.key
            ));
        }
    }
    if doc.to_string() == before {
        return Ok(said);
    }
    if dry_run {
        return Ok(said
            .into_iter()
            .map(|s| format!("would have {s}"))
            .collect());
    }
    if let Some(dir) = config.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = config.with_extension("sayso-tmp");
    std::fs::write(&tmp, doc.to_string())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, config)
        .with_context(|| format!("cannot replace {}", config.display()))?;
    Ok(said)
}

/// After `install` added (or found) the entry in `hooks_file`: trusts it in Codex's config.
pub fn install_trust(
    hooks_file: &Path,
    settings_text: &str,
    command: &str,
    home: &Path,
    project: Option<&Path>,
    dry_run: bool,
) -> anyhow::Result<Vec<String>> {
    let settings: Value = serde_json::from_str(settings_text)
        .with_context(|| format!("{} is not JSON", hooks_file.display()))?;
    let hooks_file = real_path(hooks_file.parent().unwrap_or(Path::new(".")))
        .join(hooks_file.file_name().unwrap_or_default());
    let Some(gate) = hook_trust(&hooks_file, &settings, command) else {
        bail!(
            "{} has no PreToolUse hook running `{command}`",
            hooks_file.display()
        );
    };
    let mut trusts = vec![gate];
    trusts.extend(event_trust(&hooks_file, &settings, command, EVENTS[1]));
    let project = project.map(real_path);
    write_trust(&config_file(home), &trusts, project.as_deref(), dry_run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_codexs_for_the_entry_install_writes() {
        // The value the real Codex 0.169.0 accepted for this entry (tests/harnesses/codex.rs
        // proves it by running the hook).
        let group = json!({"matcher": "*", "hooks": [
            {"type": "command", "command": "sayso hook codex", "timeout": 930}]});
        assert_eq!(
            event_hash(EVENTS[0].1, &group, &group["hooks"][0]),
            "sha256:ff8a0dac1a77c185b558add400ba377b6236826e9c1000e9bf37d325ddcc0ec5"
        );
        let settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]},
            group
        ]}});
        let t = hook_trust(
            Path::new("/p/.codex/hooks.json"),
            &settings,
            "sayso hook codex",
        )
        .unwrap();
        assert_eq!(t.key, "/p/.codex/hooks.json:pre_tool_use:1:0");
        // The entry of a call settled without the hook is trusted under its own event.
        let settings = json!({"hooks": {"PostToolUse": [settings["hooks"]["PreToolUse"][1]]}});
        let hooks = Path::new("/p/.codex/hooks.json");
        let post = event_trust(hooks, &settings, "sayso hook codex", EVENTS[1]).unwrap();
        assert_eq!(post.key, "/p/.codex/hooks.json:post_tool_use:0:0");
        assert_ne!(post.hash, t.hash);
    }

    #[test]
    fn trust_is_added_beside_what_is_there_and_an_untrusted_project_is_kept() {
        let dir = std::env::temp_dir().join(format!("sayso-codex-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("config.toml");
        std::fs::write(
            &config,
            "model = \"o3\" # mine\n\n[projects.\"/q\"]\ntrust_level = \"untrusted\"\n",
        )
        .unwrap();
        let trust = HookTrust {
            key: "/p/.codex/hooks.json:pre_tool_use:0:0".into(),
            hash: "sha256:ab".into(),
        };
        let said = write_trust(
            &config,
            std::slice::from_ref(&trust),
            Some(Path::new("/p")),
            false,
        )
        .unwrap();
        assert_eq!(said.len(), 2, "{said:?}");
        let doc = read_config(&config).unwrap().unwrap();
        assert!(doc.to_string().contains("model = \"o3\" # mine"));
        assert_eq!(
            project_trust(&doc, Path::new("/p/sub")),
            Some((PathBuf::from("/p"), "trusted".into()))
        );
        assert_eq!(
            hook_state(&doc, &trust.key),
            (Some("sha256:ab".into()), false)
        );
        // Again: nothing to change.
        assert!(
            write_trust(
                &config,
                std::slice::from_ref(&trust),
                Some(Path::new("/p")),
                false
            )
            .unwrap()
            .is_empty()
        );
        let said = write_trust(
            &config,
            std::slice::from_ref(&trust),
            Some(Path::new("/q")),
            false,
        )
        .unwrap();
        assert!(said[0].starts_with("warning:"), "{said:?}");
        let doc = read_config(&config).unwrap().unwrap();
        assert_eq!(project_trust(&doc, Path::new("/q")).unwrap().1, "untrusted");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
