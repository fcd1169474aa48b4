//! The Python adapters for agent frameworks' own approval steps (docs/CLIENTS.md): the OpenAI
//! Agents SDK (`sayso.openai_agents`) and Google ADK (`sayso.adk`), each run at its pinned
//! version (clients/python/frameworks/) in a virtual environment of its own, since their
//! dependency pins may differ. The suites drive each framework offline with a scripted model
//! and answer as the person through a real `sayso serve` of this build.

mod common;

use common::python::{Venv, pytest};

/// Offline: no trace export, no key for any model provider.
const OFFLINE: &[(&str, &str)] = &[("OPENAI_AGENTS_DISABLE_TRACING", "1")];
const NO_KEYS: &[&str] = &["OPENAI_API_KEY", "GOOGLE_API_KEY"];

#[test]
fn the_openai_agents_adapter_passes_against_the_real_server() {
    static VENV: Venv = Venv::new(
        "fw-py-openai",
        "pytest, httpx, agents",
        &[
            "pytest",
            "httpx",
            "-r",
            "clients/python/frameworks/openai_agents.txt",
        ],
        "the OpenAI Agents SDK's test environment",
    );
    let Some(python) = VENV.python() else {
        return;
    };
    pytest(python, "tests_frameworks/openai_agents", OFFLINE, NO_KEYS);
}

#[test]
fn the_adk_adapter_passes_against_the_real_server() {
    static VENV: Venv = Venv::new(
        "fw-py-adk",
        "pytest, httpx, google.adk",
        &["pytest", "httpx", "-r", "clients/python/frameworks/adk.txt"],
        "Google ADK's test environment",
    );
    let Some(python) = VENV.python() else {
        return;
    };
    pytest(python, "tests_frameworks/adk", OFFLINE, NO_KEYS);
}
