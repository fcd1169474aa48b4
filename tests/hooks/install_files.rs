//! `sayso hook install` says which files it changes before it writes them, and names the
//! user-wide ones (read by the harness in every project) as such: every file that changed
//! under the fake HOME or in the project, for every harness, was named first.

use std::path::{Path, PathBuf};

use crate::run::{BIN, Dir};

/// Every file under `dir`, with its text.
fn files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push((p.clone(), std::fs::read_to_string(&p).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

/// The files that are new or changed between two listings.
fn changed(before: &[(PathBuf, String)], after: &[(PathBuf, String)]) -> Vec<PathBuf> {
    after
        .iter()
        .filter(|f| !before.contains(f))
        .map(|(p, _)| p.clone())
        .collect()
}

/// The lines install prints before it writes anything: its heading and the files.
fn announced(stdout: &str) -> String {
    let mut lines = stdout.lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("sayso hook install changes"),
        "install starts by naming the files: {stdout}"
    );
    lines
        .take_while(|l| l.starts_with("  "))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn install(home: &Path, project: &Path, harness: &str, user: bool) -> String {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(["hook", "install", harness, "--dir"])
        .arg(project)
        .current_dir(project)
        .env("HOME", home)
        // Nothing is listening there: the closing report fails, the files are written.
        .env("SAYSO_URL", "http://127.0.0.1:9")
        .env_remove("SAYSO_KEY")
        .env_remove("SAYSO_HOOK_TIMEOUT_S")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("CLAUDE_CONFIG_DIR");
    if user {
        cmd.arg("--user");
    }
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{harness} --user={user}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn every_file_install_changes_is_named_first_and_user_wide_ones_as_such() {
    let cases = [
        ("claude", false),
        ("claude", true),
        ("codex", false),
        ("codex", true),
        ("gemini", false),
        ("gemini", true),
        ("copilot", false),
        ("cursor", false),
        ("cursor", true),
        ("pi", false),
        ("pi", true),
    ];
    for (harness, user) in cases {
        let dir = Dir::new();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let before = files(dir.path());
        let out = install(&home, &project, harness, user).await;
        let after = files(dir.path());
        let changed = changed(&before, &after);
        assert!(!changed.is_empty(), "{harness}: {out}");
        let said = announced(&out);
        for file in &changed {
            let scope = if file.starts_with(&home) {
                "(user-wide, read in every project)"
            } else {
                "(this project only)"
            };
            assert!(
                said.contains(&format!("{} {scope}", file.display())),
                "{harness} --user={user} changed {} without naming it first as {scope}:\n{out}",
                file.display()
            );
        }
        if changed.iter().any(|f| f.starts_with(&home)) {
            assert!(said.contains("how to undo"), "{harness}: {out}");
        }
    }
}

#[tokio::test]
async fn codex_names_its_global_config_before_it_writes_it() {
    let dir = Dir::new();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let out = install(&home, &project, "codex", false).await;
    let config = home.join(".codex/config.toml");
    let named = out
        .find(&format!(
            "{} (user-wide, read in every project): Codex's own config.toml: marks",
            config.display()
        ))
        .unwrap_or_else(|| panic!("{out}"));
    let written = out
        .find(&format!("trusted the hook in {}", config.display()))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(named < written, "{out}");
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .contains("trust_level = \"trusted\"")
    );
}
