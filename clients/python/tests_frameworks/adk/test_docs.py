"""The Google ADK blocks of docs/CLIENTS.md run as written, with the scripted ``BaseLlm`` they
define (no network, no API key): the first in a process of its own that is killed while it
waits, the second resuming the session from ADK's SQLite session store."""

from __future__ import annotations

from pathlib import Path

from docs_blocks import killed_then_resumed, python_blocks, run_answered

SAID = "Deploy said: {'result': 'deployed to prod'}\n"


def blocks() -> tuple[str, str]:
    run, resume = python_blocks("CLIENTS.md", "Google ADK (Python)")
    return run, resume


def test_the_docs_example_asks_the_person_and_runs_the_allowed_tool(
    own_server, monkeypatch, tmp_path: Path
):
    monkeypatch.chdir(tmp_path)
    assert run_answered(own_server, monkeypatch, blocks()[0], "prod", "Allow") == SAID


def test_the_resume_example_carries_on_a_session_whose_process_died(
    own_server, monkeypatch, tmp_path: Path
):
    assert killed_then_resumed(own_server, monkeypatch, tmp_path, blocks()) == SAID
