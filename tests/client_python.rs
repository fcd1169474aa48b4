//! The Python client (`clients/python`, docs/CLIENTS.md) against the real server: its pytest
//! suite, run with this build's `sayso` binary. The suite starts its own servers, each on a
//! free port with a fresh SQLite database, and answers as the person through the pages.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();

/// pytest and httpx, hatchling to build the wheel, and the package itself installed the way
/// its docs say (`pip install ./clients/python`).
fn python() -> Option<&'static PathBuf> {
    common::python::venv_python(
        &PYTHON,
        common::python::Venv {
            dir: "py-client-venv",
            modules: "pytest, httpx, hatchling, sayso",
            packages: &[
                "pytest",
                "httpx",
                "hatchling",
                concat!(env!("CARGO_MANIFEST_DIR"), "/clients/python"),
            ],
            purpose: "the Python client's test environment (pytest, httpx)",
        },
    )
}

#[test]
fn the_python_client_suite_passes_against_the_real_server() {
    let Some(python) = python() else { return };
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(format!("{root}/clients/python/tests"))
        .current_dir(root)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
        // The source as it is now, before the copy installed when the venv was made.
        .env("PYTHONPATH", format!("{root}/clients/python/src"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("SAYSO_URL")
        .env_remove("SAYSO_KEY")
        .output()
        .expect("pytest runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the Python client's tests failed:\n{text}"
    );
    assert!(
        !text.contains(" skipped"),
        "a Python client test was skipped:\n{text}"
    );
    println!("{text}");
}
