"""The Google ADK blocks of docs/CLIENTS.md run as written, with the scripted ``BaseLlm`` they
define (no network, no API key): the first in a process of its own that is killed while it
waits, the second resuming the session from ADK's SQLite session store."""

from __future__ import annotations

from docs_blocks import run_and_resume_checks

(
    test_the_docs_example_asks_the_person_and_runs_the_allowed_tool,
    test_the_resume_example_carries_on_a_session_whose_process_died,
) = run_and_resume_checks("Google ADK (Python)", "Deploy said: {'result': 'deployed to prod'}\n")
