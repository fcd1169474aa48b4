//! The TypeScript client (`clients/typescript`, docs/CLIENTS.md): its own test
//! suite, run with Node's test runner against this build's `sayso` binary. The suite starts
//! the real server itself and answers as the person, from the feed.
//!
//! Needs `node` and `npm`; where either is missing the test prints `SKIPPED: …` and passes,
//! except under `CI=true`. The package's dev dependency (TypeScript, to check that the
//! committed `dist/` is what the sources compile to) is installed into
//! `clients/typescript/node_modules` once and kept there (git-ignored).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Whether a missing tool fails the test rather than skipping it: `CI` set to a true value.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "yes" | "true" | "on"
        )
    })
}

/// `Some(name)` when `name --version` runs, else `None` after a loud `SKIPPED` (outside CI).
fn tool(name: &'static str) -> Option<&'static str> {
    let runs = Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if runs {
        return Some(name);
    }
    let why = format!(
        "{name} not found; install Node.js 20 or later with npm (Debian: apt-get install nodejs npm) to run the TypeScript client's tests"
    );
    if in_ci() {
        panic!("{why} (required in CI)");
    }
    eprintln!("SKIPPED: {why}");
    None
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

/// Installs the dev dependencies when they are not there yet, from the lockfile.
fn install(npm: &str, dir: &Path) {
    if dir.join("node_modules/typescript/package.json").is_file() {
        return;
    }
    let started = std::time::Instant::now();
    let out = Command::new(npm)
        .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
        .current_dir(dir)
        .output()
        .expect("npm runs");
    assert!(out.status.success(), "npm ci failed: {}", shown(&out));
    println!("npm ci: {:.1} s", started.elapsed().as_secs_f64());
}

#[test]
fn the_typescript_client_passes_its_suite_against_the_real_server() {
    let (Some(_node), Some(npm)) = (tool("node"), tool("npm")) else {
        return;
    };
    let dir = package_dir();
    install(npm, &dir);
    let out = Command::new(npm)
        .args(["test", "--silent"])
        .current_dir(&dir)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
        .output()
        .expect("npm runs");
    // The runner's summary, for the log of a passing run too.
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines().filter(|l| l.starts_with("# ")) {
        eprintln!("{line}");
    }
    assert!(
        out.status.success(),
        "the TypeScript client's tests failed: {}",
        shown(&out)
    );
    assert!(
        stdout.contains("# fail 0") && !stdout.contains("# pass 0"),
        "the suite ran no test, or failed: {}",
        shown(&out)
    );
}
