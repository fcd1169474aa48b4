//! The Python framework adapters (`sayso.langgraph`, `sayso.pydantic_ai`; docs/CLIENTS.md)
//! against the real server: each framework's pytest suite, run with this build's `sayso`
//! binary in one environment holding both frameworks at the versions pinned in
//! clients/python/frameworks/. The frameworks run offline, driven by their own scripted
//! models; the person answers through the pages.

mod common;

use common::python::{Venv, pytest};

/// Runs one framework's tests (a folder of clients/python/tests_frameworks) in the one
/// environment both share.
fn run_framework_tests(folder: &str) {
    static VENV: Venv = Venv::new(
        "fw-py-graphs",
        "pytest, httpx, langgraph, langgraph.checkpoint.sqlite, langchain.agents, \
                  pydantic_ai",
        &[
            "pytest",
            "httpx",
            "-r",
            "clients/python/frameworks/langgraph.txt",
            "-r",
            "clients/python/frameworks/pydantic_ai.txt",
        ],
        "the Python frameworks' test environment (LangGraph, Pydantic AI)",
    );
    if let Some(python) = VENV.python() {
        pytest(python, &format!("tests_frameworks/{folder}"), &[], &[]);
    }
}

#[test]
fn langgraph_approvals_are_answered_by_the_person_in_sayso() {
    run_framework_tests("langgraph");
}

#[test]
fn pydantic_ai_approvals_are_answered_by_the_person_in_sayso() {
    run_framework_tests("pydantic_ai");
}
