"""The OpenAI Agents SDK block of docs/CLIENTS.md runs as written. Only its model is swapped:
the SDK's default provider is made to hand out the scripted model (no network, no API key)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import scripted
from agents.models.multi_provider import MultiProvider
from helpers import joined, later
from sayso_client_fixtures import REPO, Person


def docs_example() -> str:
    text = (REPO / "docs" / "CLIENTS.md").read_text()
    section = text.split("## OpenAI Agents SDK (Python)", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)[0]


def test_the_docs_example_asks_the_person_and_runs_the_allowed_tool(
    own_server, monkeypatch, tmp_path: Path
):
    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    monkeypatch.chdir(tmp_path)
    model = scripted.ToolThenEcho("deploy", {"target": "prod"}, "call_1")
    monkeypatch.setattr(MultiProvider, "get_model", lambda self, name: model)
    person = Person(own_server.feed)
    answering = later(0.0, person.answer_when_asked, "prod", value="Allow")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(docs_example(), "docs/CLIENTS.md", "exec"), {})  # noqa: S102
    assert joined(answering).status_code == 303
    assert out.getvalue() == "the tool said: deployed to prod\n"
    assert (tmp_path / "run-deploy-42.json").exists(), "the block saves the run's state"
