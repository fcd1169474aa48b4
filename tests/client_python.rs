//! The Python client (`clients/python`, docs/CLIENTS.md) against the real server: its pytest
//! suite, run with this build's `sayso` binary. The suite starts its own servers, each on a
//! free port with a fresh SQLite database, and answers as the person through the pages.

mod common;

use common::python::{Venv, pytest};

#[test]
fn the_python_client_suite_passes_against_the_real_server() {
    // pytest and httpx, hatchling to build the wheel, and the package itself installed the
    // way its docs say (`pip install ./clients/python`).
    static VENV: Venv = Venv::new(
        "py-client-venv",
        "pytest, httpx, hatchling, sayso",
        &[
            "pytest",
            "httpx",
            "hatchling",
            concat!(env!("CARGO_MANIFEST_DIR"), "/clients/python"),
        ],
        "the Python client's test environment (pytest, httpx)",
    );
    let Some(python) = VENV.python() else {
        return;
    };
    pytest(python, "tests", &[], &[]);
}
