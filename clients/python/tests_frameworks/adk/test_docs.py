"""The Google ADK block of docs/CLIENTS.md runs as written. Only its model is swapped: ADK's
model registry is made to hand out the scripted ``BaseLlm`` (no network, no API key) for the
Gemini name the block gives."""

from __future__ import annotations

import contextlib
import io
import re

import scripted
from google.adk.models.registry import LLMRegistry
from helpers import joined, later
from sayso_client_fixtures import REPO, Person


def docs_example() -> str:
    text = (REPO / "docs" / "CLIENTS.md").read_text()
    section = text.split("## Google ADK (Python)", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)[0]


def test_the_docs_example_asks_the_person_and_runs_the_allowed_tool(own_server, monkeypatch):
    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    model = scripted.ToolThenEcho(
        model="gemini-2.5-flash", tool="deploy", arguments={"target": "prod"}, call_id="call_1"
    )
    monkeypatch.setattr(LLMRegistry, "new_llm", staticmethod(lambda name: model))
    person = Person(own_server.feed)
    answering = later(0.0, person.answer_when_asked, "prod", value="Allow")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(docs_example(), "docs/CLIENTS.md", "exec"), {})  # noqa: S102
    assert joined(answering).status_code == 303
    assert out.getvalue() == 'the tool said: {"result": "deployed to prod"}\n'
