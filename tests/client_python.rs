//! The Python client (`clients/python`, docs/CLIENTS.md) against the real server: its pytest
//! suite, run with this build's `sayso` binary. The suite starts its own servers, each on a
//! free port with a fresh SQLite database, and answers as the person through the pages.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use common::python::{Venv, pytest, venv_python};

#[test]
fn the_python_client_suite_passes_against_the_real_server() {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    // pytest and httpx, hatchling to build the wheel, and the package itself installed the
    // way its docs say (`pip install ./clients/python`).
    let venv = Venv {
        dir: "py-client-venv",
        modules: "pytest, httpx, hatchling, sayso",
        packages: &[
            "pytest",
            "httpx",
            "hatchling",
            concat!(env!("CARGO_MANIFEST_DIR"), "/clients/python"),
        ],
        purpose: "the Python client's test environment (pytest, httpx)",
    };
    let Some(python) = venv_python(&PYTHON, venv) else {
        return;
    };
    pytest(python, "tests", &[], &[]);
}
