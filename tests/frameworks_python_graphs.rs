//! The Python framework adapters (`sayso.langgraph`, `sayso.pydantic_ai`; docs/CLIENTS.md)
//! against the real server: each framework's pytest suite, run with this build's `sayso`
//! binary in one environment holding both frameworks at the versions pinned in
//! clients/python/frameworks/. The frameworks run offline, driven by their own scripted
//! models; the person answers through the pages.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();

fn python() -> Option<&'static PathBuf> {
    let started = Instant::now();
    let python = common::python::venv_python(
        &PYTHON,
        common::python::Venv {
            dir: "fw-py-graphs",
            modules: "pytest, httpx, langgraph, langgraph.checkpoint.sqlite, langchain.agents, \
                      pydantic_ai",
            packages: &[
                "pytest",
                "httpx",
                "-r",
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/clients/python/frameworks/langgraph.txt"
                ),
                "-r",
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/clients/python/frameworks/pydantic_ai.txt"
                ),
            ],
            purpose: "the Python frameworks' test environment (LangGraph, Pydantic AI)",
        },
    );
    if python.is_some() {
        // The first test to ask makes it (the install); the other finds it made.
        println!(
            "fw-py-graphs environment ready in {:.1} s (installed once, then reused)",
            started.elapsed().as_secs_f64()
        );
    }
    python
}

/// Runs one framework's tests (a folder of clients/python/tests_frameworks) and fails with
/// their output unless every one passed.
fn run_framework_tests(folder: &str) {
    let Some(python) = python() else { return };
    let root = env!("CARGO_MANIFEST_DIR");
    let started = Instant::now();
    let out = Command::new(python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(format!("{root}/clients/python/tests_frameworks/{folder}"))
        .current_dir(root)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
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
    assert!(out.status.success(), "the {folder} tests failed:\n{text}");
    assert!(
        !text.contains(" skipped"),
        "a {folder} test was skipped:\n{text}"
    );
    println!("{folder}: {:.1} s\n{text}", started.elapsed().as_secs_f64());
}

#[test]
fn langgraph_approvals_are_answered_by_the_person_in_sayso() {
    run_framework_tests("langgraph");
}

#[test]
fn pydantic_ai_approvals_are_answered_by_the_person_in_sayso() {
    run_framework_tests("pydantic_ai");
}
