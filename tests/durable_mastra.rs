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

mod common;

use std::process::Command;
use std::time::Instant;

use common::npm::{install_suite, runs, shown, skip, typescript_client};

#[test]
fn mastra_workflows_suspend_on_sayso_and_resume_with_the_answer() {
    if !runs("node") || !runs("npm") {
        return skip(
            "node or npm not found; install Node.js 20 or later with npm (Debian: apt-get install nodejs npm) to run the Mastra tests",
        );
    }
    let suite = typescript_client().join("tests_durable/mastra");
    if let Err(why) = install_suite(&suite, "durable-mastra") {
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
