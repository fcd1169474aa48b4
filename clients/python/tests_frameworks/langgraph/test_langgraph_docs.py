"""The LangGraph examples of docs/CLIENTS.md run as written, each in a scope of its own, with
the scripted chat model they define themselves."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from helpers import joined, later
from langchain_core.messages import ToolMessage
from sayso_client_fixtures import REPO, Person, Server


def docs_examples() -> list[str]:
    text = (REPO / "docs" / "CLIENTS.md").read_text()
    section = text.split("\n## LangGraph (Python)\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def run_block(block: str) -> tuple[str, dict[str, object]]:
    out, scope = io.StringIO(), {}
    with contextlib.redirect_stdout(out):
        exec(compile(block, "docs/CLIENTS.md", "exec"), scope)  # noqa: S102
    return out.getvalue(), scope


def test_the_section_has_the_blocks_this_file_runs() -> None:
    assert len(docs_examples()) == 2


def test_the_agent_example_runs_the_tool_the_person_allowed(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    person = Person(own_server.feed)
    answering = later(0.0, person.answer_when_asked, "v2.3", value="Allow")
    out, scope = run_block(docs_examples()[0])
    assert joined(answering).status_code == 303
    assert out == "Deployed v2.3.\n"
    result = scope["result"]
    assert isinstance(result, dict)
    ran = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert ran == ["deployed v2.3"]


def test_the_graph_of_ones_own_example_runs_only_what_the_person_allowed(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    person = Person(own_server.feed)

    def answer_both() -> None:
        # Both are asked before either is answered.
        assert person.answer_when_asked("/tmp/cache", value="Deny", remark="keep it").is_redirect
        assert person.answer_when_asked("/tmp/old.log", value="Allow").is_redirect

    answering = later(0.0, answer_both)
    out, _ = run_block(docs_examples()[1])
    joined(answering)
    assert out.splitlines() == [
        "deleted /tmp/old.log",
        "The person did not approve `delete_file`: denied by the person: keep it",
    ]
