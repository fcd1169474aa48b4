"""Runs a block of docs/DURABLE.md as written: saved as a file and run as a script, as a user
would, while the person allows its question from the feed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers import joined, later
from sayso_client_fixtures import REPO, Person, Server


def docs_example(section: str) -> str:
    """The first Python block of the ``## section`` of docs/DURABLE.md."""
    text = (REPO / "docs" / "DURABLE.md").read_text()
    part = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", part, re.S)[0]


def run_allowed(section: str, srv: Server, tmp_path: Path, question: str, **env: str) -> str:
    """What the block prints when the person allows ``question`` as soon as it is asked."""
    script = tmp_path / "release.py"
    script.write_text(docs_example(section))
    answering = later(0.0, Person(srv.feed).answer_when_asked, question, value="Allow")
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={**os.environ, "SAYSO_URL": srv.url, "SAYSO_KEY": srv.key, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert joined(answering).status_code == 303
    return out.stdout
