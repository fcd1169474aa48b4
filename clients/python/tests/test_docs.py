"""The Python example of docs/CLIENTS.md runs as written."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from conftest import REPO, Person, Server
from helpers import joined, later


def docs_example() -> str:
    text = (REPO / "docs" / "CLIENTS.md").read_text()
    section = text.split("## Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)[0]


def test_the_docs_example_asks_waits_and_reads_the_answer(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    person = Person(own_server.feed)
    answering = later(0.0, person.answer_when_asked, "Deploy v2.3 to production?", value="yes")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(docs_example(), "docs/CLIENTS.md", "exec"), {})  # noqa: S102
    assert joined(answering).status_code == 303
    assert out.getvalue().startswith("Deploying: "), out.getvalue()
