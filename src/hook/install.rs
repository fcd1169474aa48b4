//! `sayso hook install <harness>`: adds the hook to the harness's settings file. What is
//! there stays: the file is read, the one entry added (unless an entry running `sayso hook
//! <harness>` is there already), and written back. A file that is not a JSON object is
//! refused, never overwritten.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Map, Value, json};

use super::DEFAULT_WAIT_S;
use super::call::Harness;
use super::files::{MARGIN_S, merge, merge_lists, plan, write_atomically};
use crate::client::args::ServerArgs;

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
