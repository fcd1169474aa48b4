//! The Python adapters for agent frameworks' own approval steps (docs/CLIENTS.md): the OpenAI
//! Agents SDK (`sayso.openai_agents`) and Google ADK (`sayso.adk`), each run at its pinned
//! version (clients/python/frameworks/) in a virtual environment of its own, since their
//! dependency pins may differ. The suites drive each framework offline with a scripted model
//! and answer as the person through a real `sayso serve` of this build.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

static OPENAI: OnceLock<Option<PathBuf>> = OnceLock::new();
static ADK: OnceLock<Option<PathBuf>> = OnceLock::new();

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

fn openai_agents() -> Option<&'static PathBuf> {
    timed("openai-agents", || {
        common::python::venv_python(
            &OPENAI,
            common::python::Venv {
                dir: "fw-py-openai",
                modules: "pytest, httpx, agents",
                packages: &[
                    "pytest",
                    "httpx",
                    "-r",
                    concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/clients/python/frameworks/openai_agents.txt"
                    ),
                ],
                purpose: "the OpenAI Agents SDK's test environment",
            },
        )
    })
}

fn adk() -> Option<&'static PathBuf> {
    timed("google-adk", || {
        common::python::venv_python(
            &ADK,
            common::python::Venv {
                dir: "fw-py-adk",
                modules: "pytest, httpx, google.adk",
                packages: &[
                    "pytest",
                    "httpx",
                    "-r",
                    concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/clients/python/frameworks/adk.txt"
                    ),
                ],
                purpose: "Google ADK's test environment",
            },
        )
    })
}

/// Runs one framework's pytest folder against this build's server and checks that all of it
/// ran and passed.
fn run_suite(python: &PathBuf, folder: &str) {
    let root = env!("CARGO_MANIFEST_DIR");
    let started = Instant::now();
    let out = Command::new(python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(format!("{root}/clients/python/tests_frameworks/{folder}"))
        .current_dir(root)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
        .env("PYTHONPATH", format!("{root}/clients/python/src"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        // Offline: no trace export, no key for any model provider.
        .env("OPENAI_AGENTS_DISABLE_TRACING", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("GOOGLE_API_KEY")
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
        "the {folder} adapter's tests failed:\n{text}"
    );
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
fn the_openai_agents_adapter_passes_against_the_real_server() {
    let Some(python) = openai_agents() else {
        return;
    };
    run_suite(python, "openai_agents");
}

#[test]
fn the_adk_adapter_passes_against_the_real_server() {
    let Some(python) = adk() else { return };
    run_suite(python, "adk");
}
