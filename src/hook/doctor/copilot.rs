//! Copilot CLI (1.0.102): whether it loads the repository's hook at all. Under `copilot -p`
//! it loads `.github/hooks/` only in a trusted folder: one listed (or under one listed) in
//! `trustedFolders` of `~/.copilot/config.json` (`$COPILOT_HOME/config.json`), or with
//! `--trust-folder` on the command line, `COPILOT_ALLOW_ALL=true` or
//! `GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true` in its environment. Otherwise it skips the hook
//! without a word and runs every command. The doctor cannot see the command line, so it says
//! what is needed and checks the rest.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Finding, Setup, real, strip_comments};

pub fn check(setup: &Setup) -> Vec<Finding> {
    let env = |k: &str| std::env::var(k).ok();
    check_with(setup, &env)
}

/// Copilot's own directory: `$COPILOT_HOME`, else `~/.copilot`.
fn copilot_home(setup: &Setup, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("COPILOT_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| setup.home.as_ref().map(|h| h.join(".copilot")))
}

fn check_with(setup: &Setup, env: &dyn Fn(&str) -> Option<String>) -> Vec<Finding> {
    for var in ["COPILOT_ALLOW_ALL", "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS"] {
        if env(var).as_deref() == Some("true") {
            return vec![Finding::ok(format!(
                "{var}=true here: `copilot -p` loads the repository's hook (when it starts with this environment)"
            ))];
        }
    }
    let Some(dir) = copilot_home(setup, env) else {
        return vec![not_trusted(setup, None)];
    };
    let config = dir.join("config.json");
    match trusted_in(&config, &setup.project) {
        Some(folder) => vec![Finding::ok(format!(
            "{} trusts {}: Copilot loads the repository's hook, `copilot -p` included",
            config.display(),
            folder
        ))],
        None => vec![not_trusted(setup, Some(&config))],
    }
}

fn not_trusted(setup: &Setup, config: Option<&Path>) -> Finding {
    let project = setup.project.display();
    let add = match config {
        Some(c) => format!(
            ", or add \"{project}\" to \"trustedFolders\" in {}",
            c.display()
        ),
        None => String::new(),
    };
    Finding::advice(
        format!(
            "{project} is not a trusted folder of Copilot's: `copilot -p` skips the repository's hook without a word, and every command runs ungated, unless it is started with --trust-folder (or COPILOT_ALLOW_ALL=true)"
        ),
        format!("start it as `copilot -p … --allow-all-tools --trust-folder`{add}"),
    )
}

/// The entry of `trustedFolders` in `config` that is `project` or holds it.
fn trusted_in(config: &Path, project: &Path) -> Option<String> {
    let text = std::fs::read_to_string(config).ok()?;
    let doc = parse_commented(&text)?;
    let project = real(project);
    doc.get("trustedFolders")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|f| project.starts_with(real(Path::new(f))))
        .map(str::to_string)
}

/// Copilot writes `config.json` with `//` comment lines above the JSON.
fn parse_commented(text: &str) -> Option<Value> {
    serde_json::from_str(&strip_comments(text)).ok()
}

#[cfg(test)]
mod tests {
    use super::super::Level;
    use super::super::scratch::Scratch;
    use super::*;
    use crate::hook::call::Harness;

    fn tmp() -> Scratch {
        Scratch::new("copilot", &["work/project", "home/.copilot"])
    }

    fn setup(t: &Scratch) -> Setup {
        t.setup(
            Harness::Copilot,
            "work/project",
            "work/project/.github/hooks/sayso.json",
        )
    }

    fn config(t: &Scratch, folders: &[PathBuf]) {
        let folders: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
        // As Copilot writes it.
        let text = format!(
            "// User settings belong in settings.json.\n// This file is managed automatically.\n{}\n",
            serde_json::json!({"trustedFolders": folders, "firstLaunchAt": "2026-01-01T00:00:00.000Z"})
        );
        std::fs::write(t.0.join("home/.copilot/config.json"), text).unwrap();
    }

    #[test]
    fn an_untrusted_folder_is_named_with_the_flag_that_loads_the_hook() {
        let t = tmp();
        let none = |_: &str| None;
        let found = check_with(&setup(&t), &none);
        assert_eq!(found[0].level, Level::Advice);
        assert!(found[0].text.contains("skips the repository's hook"));
        assert!(found[0].fix.as_ref().unwrap().contains("--trust-folder"));
        assert!(found[0].fix.as_ref().unwrap().contains("config.json"));

        config(&t, &[t.0.join("elsewhere")]);
        assert_eq!(check_with(&setup(&t), &none)[0].level, Level::Advice);
    }

    #[test]
    fn a_trusted_folder_or_its_parent_or_allow_all_loads_it() {
        let t = tmp();
        let none = |_: &str| None;
        config(&t, &[t.0.join("work/project")]);
        assert_eq!(check_with(&setup(&t), &none)[0].level, Level::Ok);
        config(&t, &[t.0.join("work")]);
        assert_eq!(check_with(&setup(&t), &none)[0].level, Level::Ok);

        let t = tmp();
        let all = |k: &str| (k == "COPILOT_ALLOW_ALL").then(|| "true".to_string());
        assert_eq!(check_with(&setup(&t), &all)[0].level, Level::Ok);
        let moved = |k: &str| (k == "COPILOT_HOME").then(|| t.0.join("ch").display().to_string());
        std::fs::create_dir_all(t.0.join("ch")).unwrap();
        std::fs::write(
            t.0.join("ch/config.json"),
            serde_json::json!({"trustedFolders": [t.0.join("work/project")]}).to_string(),
        )
        .unwrap();
        assert_eq!(check_with(&setup(&t), &moved)[0].level, Level::Ok);
    }
}
