//! Restate workflows that wait on sayso (docs/DURABLE.md, "Restate"): the suite in
//! `clients/typescript/tests_durable/restate/` runs the docs' workflow as written, against a
//! real restate-server (npm's `@restatedev/restate-server`, on loopback) and this build's
//! `sayso serve`, and covers an allow, a denial with its reason, an expiry, and the worker,
//! sayso and Restate stopped mid-wait with the answer given meanwhile; the gated step's runs
//! are counted from the file it writes.
//!
//! Needs `node`, `npm` and the npm registry (for the pinned packages, installed once under
//! the target directory). Where one is missing the test prints `SKIPPED: …` and passes,
//! except under `CI=true`.

mod common;

use std::process::Command;
use std::time::Instant;

use common::npm::{install_suite, runs, shown, skip, typescript_client};

#[test]
fn restate_workflows_wait_on_sayso_through_awakeables() {
    if !runs("node") || !runs("npm") {
        return skip(
            "node or npm not found; install Node.js 20.19 or later with npm (Debian: apt-get install nodejs npm) to run the Restate tests",
        );
    }
    let suite = typescript_client().join("tests_durable/restate");
    if let Err(why) = install_suite(&suite, "restate-node") {
        return skip(&why);
    }
    let started = Instant::now();
    let out = Command::new("npm")
        .args(["test", "--silent"])
        .current_dir(&suite)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
        .output()
        .expect("npm runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines().filter(|l| l.starts_with("# ")) {
        eprintln!("{line}");
    }
    eprintln!(
        "restate: the suite took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "the Restate suite failed: {}",
        shown(&out)
    );
    assert!(
        stdout.contains("# fail 0")
            && stdout.contains("# cancelled 0")
            && !stdout.contains("# pass 0"),
        "the suite ran no case, or not all of them: {}",
        shown(&out)
    );
}
