"""Runs a block of docs/DURABLE.md as written: saved as a file and run as a script, as a user
would, while the person allows its question from the feed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
from helpers import joined, later
from sayso_client_fixtures import REPO, Person, Server


def docs_example(section: str) -> str:
    """The first Python block of the ``## section`` of docs/DURABLE.md."""
    text = (REPO / "docs" / "DURABLE.md").read_text()
    part = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", part, re.S)[0]


def allow_when_asked(person: Person, question: str) -> httpx.Response:
    """Allows the question once the feed shows it; the script may take a while to start."""
    deadline = time.monotonic() + 45
    while question not in person.feed() and time.monotonic() < deadline:
        time.sleep(0.2)
    return person.answer(question, value="Allow")


def run_allowed(section: str, srv: Server, tmp_path: Path, question: str, **env: str) -> str:
    """What the block prints when the person allows ``question`` as soon as it is asked."""
    script = tmp_path / "release.py"
    script.write_text(docs_example(section))
    answering = later(0.0, allow_when_asked, Person(srv.feed), question)
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={**os.environ, "SAYSO_URL": srv.url, "SAYSO_KEY": srv.key, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert joined(answering).status_code == 303
    return out.stdout
