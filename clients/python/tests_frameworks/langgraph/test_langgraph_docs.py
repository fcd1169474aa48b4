"""The LangGraph examples of docs/CLIENTS.md run as written, each in a scope of its own, with
the scripted chat model they define themselves."""

from __future__ import annotations

import pytest
from docs_blocks import run_answered, run_block, section_checks, use_server
from helpers import joined, later
from langchain_core.messages import ToolMessage
from sayso_client_fixtures import Person, Server

docs_examples, test_the_section_has_the_blocks_this_file_runs = section_checks(
    "CLIENTS.md", "LangGraph (Python)", 2
)


def test_the_agent_example_runs_the_tool_the_person_allowed(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    scope: dict[str, object] = {}
    out = run_answered(own_server, monkeypatch, docs_examples()[0], "v2.3", "Allow", scope)
    assert out == "Deployed v2.3.\n"
    result = scope["result"]
    assert isinstance(result, dict)
    ran = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert ran == ["deployed v2.3"]


def test_the_graph_of_ones_own_example_runs_only_what_the_person_allowed(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_server(own_server, monkeypatch)
    person = Person(own_server.feed)

    def answer_both() -> None:
        # Both are asked before either is answered.
        assert person.answer_when_asked("/tmp/cache", value="Deny", remark="keep it").is_redirect
        assert person.answer_when_asked("/tmp/old.log", value="Allow").is_redirect

    answering = later(0.0, answer_both)
    out = run_block(docs_examples()[1])
    joined(answering)
    assert out.splitlines() == [
        "deleted /tmp/old.log",
        "The person did not approve `delete_file`: denied by the person: keep it",
    ]
