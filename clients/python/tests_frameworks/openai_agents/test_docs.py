"""The OpenAI Agents SDK blocks of docs/CLIENTS.md run as written, with the SDK's own scripted
model they define (no network, no API key): the first in a process of its own that is killed
while it waits, the second resuming the run from the state the first saved."""

from __future__ import annotations

from docs_blocks import run_and_resume_checks

(
    test_the_docs_example_asks_the_person_and_runs_the_allowed_tool,
    test_the_resume_example_carries_on_a_run_whose_process_died,
) = run_and_resume_checks("OpenAI Agents SDK (Python)", "Deployed to prod.\n", "run-deploy-42.json")
