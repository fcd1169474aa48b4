"""The LangGraph example of docs/CLIENTS.md runs as written, with LangChain's fake chat model
as the `model` it leaves to the reader."""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

import pytest
from helpers import joined, later
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from sayso_client_fixtures import REPO, Person, Server


class ToolCallingFake(FakeMessagesListChatModel):
    """The fake chat model, with tools bound as a real one's are (its script names them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:
        return self


def docs_example() -> str:
    text = (REPO / "docs" / "CLIENTS.md").read_text()
    section = text.split("\n## LangGraph (Python)\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)[0]


def test_the_docs_example_runs_the_tool_the_person_allowed(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    model = ToolCallingFake(
        responses=[
            AIMessage("", tool_calls=[{"name": "deploy", "args": {"version": "v2.3"}, "id": "c1"}]),
            AIMessage("Deployed v2.3."),
        ]
    )
    person = Person(own_server.feed)
    answering = later(0.0, person.answer_when_asked, "v2.3", value="Allow")
    out, scope = io.StringIO(), {"model": model}
    with contextlib.redirect_stdout(out):
        exec(compile(docs_example(), "docs/CLIENTS.md", "exec"), scope)  # noqa: S102
    assert joined(answering).status_code == 303
    assert out.getvalue() == "Deployed v2.3.\n"
    ran = [m.content for m in scope["result"]["messages"] if isinstance(m, ToolMessage)]
    assert ran == ["deployed v2.3"]
