"""The Pydantic AI example of docs/CLIENTS.md runs as written, with a FunctionModel as the
`model` it leaves to the reader."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from helpers import joined, later
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sayso_client_fixtures import REPO, Person, Server


def deploys_then_reports(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returned = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if returned:
        return ModelResponse(parts=[TextPart(f"Done: {returned[0].content}.")])
    return ModelResponse(parts=[ToolCallPart("deploy", {"version": "v2.3"}, tool_call_id="c1")])


def docs_example() -> str:
    text = (REPO / "docs" / "CLIENTS.md").read_text()
    section = text.split("\n## Pydantic AI (Python)\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)[0]


def test_the_docs_example_runs_the_tool_the_person_allowed(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    person = Person(own_server.feed)
    answering = later(0.0, person.answer_when_asked, "v2.3", value="Allow")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        scope = {"model": FunctionModel(deploys_then_reports)}
        exec(compile(docs_example(), "docs/CLIENTS.md", "exec"), scope)  # noqa: S102
    assert joined(answering).status_code == 303
    assert out.getvalue() == "Done: deployed v2.3.\n"
