//! The Python helpers for durable workflow engines (docs/DURABLE.md): `sayso.temporal` against
//! Temporal's dev server and time-skipping test server, and `sayso.dbos` against DBOS on a
//! SQLite system database. Each engine runs at its pinned versions (clients/python/durable/)
//! in a virtual environment of its own; the servers come as PyPI wheels, so nothing is
//! downloaded at run time. The suites answer as the person through a real `sayso serve` of
//! this build.

mod common;

use common::python::{Venv, pytest};

#[test]
fn temporal_workflows_wait_on_the_person_through_the_real_server() {
    static VENV: Venv = Venv::new(
        "durable-py-temporal",
        "pytest, httpx, temporalio",
        &[
            "pytest",
            "httpx",
            "-r",
            "clients/python/durable/temporal.txt",
        ],
        "Temporal's test environment (SDK, dev server, test server)",
    );
    let Some(python) = VENV.python() else {
        return;
    };
    pytest(python, "tests_durable/temporal", &[], &["TEMPORAL_ADDRESS"]);
}

#[test]
fn dbos_workflows_wait_on_the_person_through_the_real_server() {
    static VENV: Venv = Venv::new(
        "durable-py-dbos",
        "pytest, httpx, dbos",
        &["pytest", "httpx", "-r", "clients/python/durable/dbos.txt"],
        "DBOS's test environment",
    );
    let Some(python) = VENV.python() else {
        return;
    };
    // Offline: DBOS sends no telemetry and reaches no conductor without a key.
    let unset = ["DBOS_CONDUCTOR_KEY", "DBOS_SYSTEM_DATABASE_URL"];
    pytest(python, "tests_durable/dbos", &[], &unset);
}
