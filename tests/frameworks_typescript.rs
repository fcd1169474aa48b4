//! The TypeScript package's framework adapters (`sayso/ai`, …; docs/CLIENTS.md): their
//! suite, `npm run test:frameworks`, run with Node's test runner against this build's `sayso`
//! binary. Each framework runs at the version pinned in `clients/typescript/package.json`,
//! driven by its own scripted model (no network, no model key); the server and the person's
//! answers through the pages are real.
//!
//! Needs `node`, `npm` and the npm registry (for the pinned frameworks, installed once into
//! `clients/typescript/node_modules`, git-ignored, and reused while the lockfile is the same).
//! Where one is missing the test prints `SKIPPED: …` and passes, except under `CI=true`.

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

fn package_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/typescript")
}

fn shown(out: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Installs the lockfile's packages unless the install on disk was made from this very
/// lockfile (a stamp beside it says so). `Err` when the registry cannot be reached.
fn install(dir: &Path) -> Result<(), String> {
    let lock = std::fs::read(dir.join("package-lock.json")).expect("package-lock.json is there");
    let stamp = dir.join("node_modules/.sayso-lockfile");
    let started = Instant::now();
    if std::fs::read(&stamp).is_ok_and(|s| s == lock) {
        eprintln!(
            "frameworks: install reused ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
        .current_dir(dir)
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
        "frameworks: npm ci took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

#[test]
fn the_framework_adapters_pass_their_suite_against_the_real_server() {
    if !runs("node") || !runs("npm") {
        return skip(
            "node or npm not found; install Node.js 20 or later with npm (Debian: apt-get install nodejs npm) to run the framework adapters' tests",
        );
    }
    let dir = package_dir();
    if let Err(why) = install(&dir) {
        return skip(&why);
    }
    let started = Instant::now();
    let out = Command::new("npm")
        .args(["run", "test:frameworks", "--silent"])
        .current_dir(&dir)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
        .output()
        .expect("npm runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines().filter(|l| l.starts_with("# ")) {
        eprintln!("{line}");
    }
    eprintln!(
        "frameworks: the suite took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "the framework adapters' tests failed: {}",
        shown(&out)
    );
    assert!(
        stdout.contains("# fail 0") && !stdout.contains("# pass 0"),
        "the suite ran no test, or failed: {}",
        shown(&out)
    );
}
