"""The Pydantic AI example of docs/CLIENTS.md runs as written, with the FunctionModel it
defines itself."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from helpers import joined, later
from sayso_client_fixtures import REPO, Person, Server


def docs_examples() -> list[str]:
    text = (REPO / "docs" / "CLIENTS.md").read_text()
    section = text.split("\n## Pydantic AI (Python)\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_docs_example_runs_the_tool_the_person_allowed(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    (block,) = docs_examples()
    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    person = Person(own_server.feed)
    answering = later(0.0, person.answer_when_asked, "v2.3", value="Allow")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "docs/CLIENTS.md", "exec"), {})  # noqa: S102
    assert joined(answering).status_code == 303
    assert out.getvalue() == "Done: deployed v2.3.\n"
