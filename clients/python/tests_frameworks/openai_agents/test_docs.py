"""The OpenAI Agents SDK blocks of docs/CLIENTS.md run as written, with the SDK's own scripted
model they define (no network, no API key): the first in a process of its own that is killed
while it waits, the second resuming the run from the state the first saved."""

from __future__ import annotations

from pathlib import Path

from docs_blocks import killed_then_resumed, python_blocks, run_answered

SAID = "Deployed to prod.\n"
SAVED = "run-deploy-42.json"


def blocks() -> tuple[str, str]:
    run, resume = python_blocks("CLIENTS.md", "OpenAI Agents SDK (Python)")
    return run, resume


def test_the_docs_example_asks_the_person_and_runs_the_allowed_tool(
    own_server, monkeypatch, tmp_path: Path
):
    monkeypatch.chdir(tmp_path)
    assert run_answered(own_server, monkeypatch, blocks()[0], "prod", "Allow") == SAID
    assert (tmp_path / SAVED).exists(), "the block saves the run's state"


def test_the_resume_example_carries_on_a_run_whose_process_died(
    own_server, monkeypatch, tmp_path: Path
):
    assert killed_then_resumed(own_server, monkeypatch, tmp_path, blocks(), SAVED) == SAID
