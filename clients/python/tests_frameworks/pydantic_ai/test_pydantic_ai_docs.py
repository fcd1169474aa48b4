"""The Pydantic AI example of docs/CLIENTS.md runs as written, with the FunctionModel it
defines itself."""

from __future__ import annotations

import pytest
from docs_blocks import python_blocks, run_answered
from sayso_client_fixtures import Server


def docs_examples() -> list[str]:
    return python_blocks("CLIENTS.md", "Pydantic AI (Python)")


def test_the_docs_example_runs_the_tool_the_person_allowed(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    (block,) = docs_examples()
    out = run_answered(own_server, monkeypatch, block, "v2.3", "Allow")
    assert out == "Done: deployed v2.3.\n"
