//! Mastra workflows waiting on a person through `sayso/mastra` (docs/DURABLE.md): the suite in
//! `clients/typescript/tests_durable/mastra/`, run with Node's test runner against this
//! build's `sayso` binary. Mastra runs at the versions pinned in that folder's lockfile, its
//! runs stored in LibSQL files, offline; the server and the person's answers through the pages
//! are real.
//!
//! The pinned packages (about 160 MB) are installed once into the target directory
//! (`CARGO_TARGET_TMPDIR/durable-mastra`), reused while the lockfile is the same, and linked
//! into the suite's folder as its `node_modules` (git-ignored), with `sayso` linked to this
//! checkout's package. Needs `node`, `npm` and the npm registry for the first install; where
//! one is missing the test prints `SKIPPED: …` and passes, except under `CI=true`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// Whether a missing tool fails the test rather than skipping it: `CI` set to a true value.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "yes" | "true" | "on"
        )
    })
}

/// Skips loudly (outside CI) or fails (in CI) for `why`.
fn skip(why: &str) {
    if in_ci() {
        panic!("{why} (required in CI)");
    }
    eprintln!("SKIPPED: {why}");
}

fn runs(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn shown(out: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/typescript/tests_durable/mastra")
}

/// Points `link` at `target`, replacing whatever link or empty folder was there.
fn link(target: &Path, link: &Path) -> Result<(), String> {
    if std::fs::read_link(link).is_ok_and(|t| t == target) {
        return Ok(());
    }
    if std::fs::symlink_metadata(link).is_ok() {
        std::fs::remove_file(link)
            .or_else(|_| std::fs::remove_dir(link))
            .map_err(|e| {
                format!(
                    "{} is in the way of the link to {}: {e}",
                    link.display(),
                    target.display()
                )
            })?;
    }
    std::os::unix::fs::symlink(target, link).map_err(|e| format!("linking {}: {e}", link.display()))
}

/// Installs the suite's lockfile into the target directory unless the install there was made
/// from this very lockfile (a stamp beside it says so), then links it into the suite's
/// folder. `Err` when the registry cannot be reached.
fn install(suite: &Path) -> Result<(), String> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("durable-mastra");
    let lock = std::fs::read(suite.join("package-lock.json")).expect("package-lock.json is there");
    let stamp = dir.join("node_modules/.sayso-lockfile");
    let started = Instant::now();
    if std::fs::read(&stamp).is_ok_and(|s| s == lock) {
        eprintln!(
            "mastra: install reused ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
    } else {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(suite.join(file), dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
        }
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
            .current_dir(&dir)
            .output()
            .expect("npm runs");
        if !out.status.success() {
            return Err(format!(
                "npm ci failed (is the npm registry reachable?): {}",
                shown(&out)
            ));
        }
        std::fs::write(&stamp, lock).expect("the install stamp is written");
        eprintln!(
            "mastra: npm ci of @mastra/core and @mastra/libsql took {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/typescript");
    link(&package, &dir.join("node_modules/sayso"))?;
    link(&dir.join("node_modules"), &suite.join("node_modules"))
}

#[test]
fn mastra_workflows_suspend_on_sayso_and_resume_with_the_answer() {
    if !runs("node") || !runs("npm") {
        return skip(
            "node or npm not found; install Node.js 20 or later with npm (Debian: apt-get install nodejs npm) to run the Mastra tests",
        );
    }
    let suite = suite_dir();
    if let Err(why) = install(&suite) {
        return skip(&why);
    }
    let started = Instant::now();
    let out = Command::new("npm")
        .args(["test", "--silent"])
        .current_dir(&suite)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
        .env("MASTRA_TELEMETRY_DISABLED", "1")
        .env_remove("SAYSO_URL")
        .env_remove("SAYSO_KEY")
        .output()
        .expect("npm runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines().filter(|l| l.starts_with("# ")) {
        eprintln!("{line}");
    }
    eprintln!(
        "mastra: the suite took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "the Mastra tests failed: {}",
        shown(&out)
    );
    assert!(
        stdout.contains("# fail 0")
            && stdout.contains("# skipped 0")
            && !stdout.contains("# pass 0"),
        "the suite ran no test, skipped one, or failed: {}",
        shown(&out)
    );
}
