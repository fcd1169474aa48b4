//! `sayso hook install <harness>`: adds the hook to the harness's settings file. What is
//! there stays: the file is read, the one entry added (unless an entry running `sayso hook
//! <harness>` is there already), and written back. A file that is not a JSON object is
//! refused, never overwritten.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Map, Value, json};

use super::DEFAULT_WAIT_S;
use super::call::Harness;
use crate::client::args::ServerArgs;

/// Seconds the harness's own timeout is given beyond the hook's wait: reading stdin,
/// creating the question, printing the answer.
pub const MARGIN_S: u64 = 30;

/// The settings of `sayso hook install`.
#[derive(Debug, Clone, Args)]
pub struct InstallArgs {
    /// The harness whose settings to change.
    #[arg(value_enum)]
    pub harness: Harness,
    /// Write the project's settings (under --dir) [the default].
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// Write the user's settings (under $HOME).
    #[arg(long)]
    pub user: bool,
    /// The project directory [default: the current one].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print the change instead of writing it.
    #[arg(long)]
    pub dry_run: bool,
    /// The command the harness runs [default: `sayso hook <harness>`].
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
    /// How long the hook waits for the person, in seconds; the harness's timeout is written
    /// as this plus 30 s, in the harness's unit.
    #[arg(long, env = "SAYSO_HOOK_TIMEOUT_S", default_value_t = DEFAULT_WAIT_S)]
    pub timeout_s: u64,
    /// The server and key the closing check calls, as the hook will.
    #[command(flatten)]
    pub server: ServerArgs,
}

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

/// Runs `sayso hook install`, ending with `sayso hook doctor`'s report: a hook written where
/// the harness will not run it is worse than none, since the run looks gated.
pub async fn run(args: InstallArgs) -> anyhow::Result<()> {
    let dry_run = args.dry_run;
    print!("{}", super::touched::announce(&touched(&args)?, dry_run));
    write(&args)?;
    match args.harness {
        Harness::Codex => codex_trust(&args)?,
        Harness::Gemini => gemini_trust(&args)?,
        _ => {}
    }
    println!(
        "{}",
        super::pins::pin_from_server(&args.server.server, dry_run).await
    );
    if !dry_run {
        let report = super::doctor::check(&super::doctor::DoctorArgs {
            harness: args.harness,
            user: args.user,
            dir: args.dir.clone(),
            command: args.command.clone(),
            timeout_s: args.timeout_s,
            server: args.server.clone(),
        })
        .await?;
        println!("{report}");
    }
    Ok(())
}

/// Adds the entry to the settings file (or prints it, with `--dry-run`).
fn write(args: &InstallArgs) -> anyhow::Result<()> {
    let root = root_of(args)?;
    let command = command_of(args);
    let plan = plan(args.harness, &root, args.user, &command, args.timeout_s)?;
    if args.harness == Harness::Pi {
        return super::pi::install(
            &plan.file,
            &command,
            args.timeout_s + MARGIN_S,
            args.dry_run,
        );
    }
    let before = match std::fs::read_to_string(&plan.file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", plan.file.display())),
    };
    let Some((after, lists)) = merge_lists(before.as_deref(), &plan, &command)
        .with_context(|| format!("{} is left as it is", plan.file.display()))?
    else {
        println!(
            "{} already runs `{command}`; nothing to change",
            plan.file.display()
        );
        return Ok(());
    };
    if args.dry_run {
        println!(
            "would add to {} in {}:\n{}",
            lists.join(" and "),
            plan.file.display(),
            serde_json::to_string_pretty(&plan.entry)?
        );
        return Ok(());
    }
    if let Some(dir) = plan.file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    write_atomically(&plan.file, &after)?;
    println!(
        "added `{command}` to {} in {}",
        lists.join(" and "),
        plan.file.display()
    );
    Ok(())
}

/// The files this install changes, said before it writes any.
fn touched(args: &InstallArgs) -> anyhow::Result<Vec<super::touched::Touched>> {
    let root = root_of(args)?;
    let plan = plan(
        args.harness,
        &root,
        args.user,
        &command_of(args),
        args.timeout_s,
    )?;
    let project = (!args.user).then(|| std::fs::canonicalize(&root).unwrap_or(root));
    super::touched::files(&super::touched::Install {
        harness: args.harness,
        settings_file: &plan.file,
        user: args.user,
        project: project.as_deref(),
    })
}

/// The folder the settings go under: the user's home with `--user`, else the project.
fn root_of(args: &InstallArgs) -> anyhow::Result<PathBuf> {
    if args.user {
        return Ok(PathBuf::from(
            std::env::var_os("HOME").context("HOME is not set; use --project")?,
        ));
    }
    match &args.dir {
        Some(d) => Ok(d.clone()),
        None => std::env::current_dir().context("cannot read the current directory"),
    }
}

/// The command line the harness runs.
fn command_of(args: &InstallArgs) -> String {
    args.command
        .clone()
        .unwrap_or_else(|| format!("sayso hook {}", args.harness.as_str()))
}

/// gemini-cli reads a project's settings, hooks included, only in a trusted folder, and
/// `gemini -p --skip-trust` then starts without them (ungated). Installing the hook in a
/// project is the person's word that they trust it, so install records that trust where
/// gemini-cli reads it, as gemini-cli's own trust dialog would.
fn gemini_trust(args: &InstallArgs) -> anyhow::Result<()> {
    if args.user {
        return Ok(());
    }
    let project = root_of(args)?;
    let project = std::fs::canonicalize(&project).unwrap_or(project);
    let file = super::touched::gemini_trusted_folders()?;
    let before = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let mut rules = match before.as_deref().map(str::trim) {
        None | Some("") => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            _ => bail!(
                "{} is not a JSON object; it is left as it is (trust {} in gemini-cli yourself)",
                file.display(),
                project.display()
            ),
        },
    };
    let key = project.display().to_string();
    match rules.get(&key).and_then(Value::as_str) {
        Some("TRUST_FOLDER") => return Ok(()),
        Some("DO_NOT_TRUST") => {
            println!(
                "{} marks {key} DO_NOT_TRUST; left as it is: gemini-cli will not run the hook there",
                file.display()
            );
            return Ok(());
        }
        _ => {}
    }
    if args.dry_run {
        println!("would trust {key} in {}", file.display());
        return Ok(());
    }
    rules.insert(key.clone(), json!("TRUST_FOLDER"));
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    write_atomically(
        &file,
        &(serde_json::to_string_pretty(&Value::Object(rules))? + "\n"),
    )?;
    println!(
        "trusted {key} in {} (gemini-cli reads a project's hooks only in a trusted folder)",
        file.display()
    );
    Ok(())
}

/// Codex runs a hook only once it is trusted, and a project's only in a trusted project
/// (src/hook/codex.rs): install trusts the entry it added, as Codex's own review would.
fn codex_trust(args: &InstallArgs) -> anyhow::Result<()> {
    let home = PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?);
    let root = root_of(args)?;
    let command = command_of(args);
    let plan = plan(args.harness, &root, args.user, &command, args.timeout_s)?;
    let before = match std::fs::read_to_string(&plan.file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", plan.file.display())),
    };
    // With --dry-run the entry is not written yet: trust what would be there.
    let text = match merge(before.as_deref(), &plan, &command)? {
        Some(after) => after,
        None => before.unwrap_or_default(),
    };
    let project = (!args.user).then_some(root.as_path());
    for line in
        super::codex::install_trust(&plan.file, &text, &command, &home, project, args.dry_run)?
    {
        println!("{line}");
    }
    Ok(())
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
            file: super::pi::extension_path(root, user),
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
fn merge_lists(
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
pub(super) fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("sayso-tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
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
