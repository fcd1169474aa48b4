"""The OpenAI Agents SDK blocks of docs/CLIENTS.md run as written, with the SDK's own scripted
model they define (no network, no API key): the first in a process of its own that is killed
while it waits, the second resuming the run from the state the first saved."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers import joined, later
from sayso_client_fixtures import REPO, Person

import sayso


def docs_examples() -> list[str]:
    text = (REPO / "docs" / "CLIENTS.md").read_text()
    section = text.split("## OpenAI Agents SDK (Python)", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def run_block(block: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "docs/CLIENTS.md", "exec"), {})  # noqa: S102
    return out.getvalue()


def test_the_docs_example_asks_the_person_and_runs_the_allowed_tool(
    own_server, monkeypatch, tmp_path: Path
):
    run, _ = docs_examples()
    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    monkeypatch.chdir(tmp_path)
    person = Person(own_server.feed)
    answering = later(0.0, person.answer_when_asked, "prod", value="Allow")
    out = run_block(run)
    assert joined(answering).status_code == 303
    assert out == "Deployed to prod.\n"
    assert (tmp_path / "run-deploy-42.json").exists(), "the block saves the run's state"


def test_the_resume_example_carries_on_a_run_whose_process_died(
    own_server, monkeypatch, tmp_path: Path
):
    run, resume = docs_examples()
    (tmp_path / "run.py").write_text(run)
    env = {**os.environ, "SAYSO_URL": own_server.url, "SAYSO_KEY": own_server.key}
    first = subprocess.Popen(
        [sys.executable, "run.py"], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    person = Person(own_server.feed)
    deadline = time.monotonic() + 30
    while "prod" not in person.feed() or not (tmp_path / "run-deploy-42.json").exists():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the run never asked"
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert person.answer("prod", value="Allow").status_code == 303

    monkeypatch.setenv("SAYSO_URL", own_server.url)
    monkeypatch.setenv("SAYSO_KEY", own_server.key)
    monkeypatch.chdir(tmp_path)
    assert run_block(resume) == "Deployed to prod.\n"
    with sayso.Client(own_server.url, own_server.key) as client:
        asked = [d for d in client.list() if d.metadata.get("run_id") == "deploy-42"]
    assert [d.status for d in asked] == ["answered"], "the resumed run asked again"
