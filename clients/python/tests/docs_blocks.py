"""The Python blocks of the docs, run as written: read from their section, run in this
process with the server's URL and key in the environment, or saved as a script and run as a
user would, while the person answers from the feed."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import joined, later
from sayso_client_fixtures import REPO, Person, Server

import sayso


def python_blocks(doc: str, section: str) -> list[str]:
    """The Python blocks of the ``## section`` of ``docs/doc``."""
    text = (REPO / "docs" / doc).read_text()
    part = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", part, re.S)


def section_checks(
    doc: str, section: str, count: int
) -> tuple[Callable[[], list[str]], Callable[[], None]]:
    """The Python blocks of the ``## section`` of ``docs/doc`` that a file's tests run, and a
    test that the section holds the ``count`` blocks they run (so a block added there gets a
    test too)."""

    def blocks() -> list[str]:
        return python_blocks(doc, section)

    def has_the_blocks_this_file_runs() -> None:
        assert len(blocks()) == count

    return blocks, has_the_blocks_this_file_runs


def run_block(block: str, scope: dict[str, Any] | None = None) -> str:
    """What ``block`` prints, run here in ``scope`` (a fresh one if not given)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "docs", "exec"), {} if scope is None else scope)  # noqa: S102
    return out.getvalue()


def use_server(srv: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """``SAYSO_URL`` and ``SAYSO_KEY`` for ``srv``, as the docs tell a user to set them."""
    monkeypatch.setenv("SAYSO_URL", srv.url)
    monkeypatch.setenv("SAYSO_KEY", srv.key)


def run_answered(
    srv: Server,
    monkeypatch: pytest.MonkeyPatch,
    block: str,
    question: str,
    value: str,
    scope: dict[str, Any] | None = None,
) -> str:
    """What ``block`` prints, run here against ``srv``, when the person answers ``value``
    to the question that contains ``question`` as soon as it is asked."""
    use_server(srv, monkeypatch)
    answering = later(0.0, Person(srv.feed).answer_when_asked, question, value=value)
    out = run_block(block, scope)
    assert joined(answering).status_code == 303
    return out


def allow_when_asked(person: Person, question: str) -> httpx.Response:
    """Allows the question once the feed shows it; the script may take a while to start."""
    deadline = time.monotonic() + 45
    while question not in person.feed() and time.monotonic() < deadline:
        time.sleep(0.2)
    return person.answer(question, value="Allow")


def run_allowed(section: str, srv: Server, tmp_path: Path, question: str, **env: str) -> str:
    """What the first block of docs/DURABLE.md's ``section`` prints as a script when the
    person allows ``question`` as soon as it is asked."""
    script = tmp_path / "release.py"
    script.write_text(python_blocks("DURABLE.md", section)[0])
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


def killed_then_resumed(
    srv: Server,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    blocks: tuple[str, str],
    saved: str | None = None,
) -> str:
    """The run-and-resume pair of a framework's section: the first block runs as a script
    until the person is asked about ``prod`` (and it has written ``saved``), is killed, the
    person allows; then the second runs here and what it prints is returned. The resumed
    run must not have asked again (``run_id`` ``deploy-42``)."""
    run, resume = blocks
    (tmp_path / "run.py").write_text(run)
    env = {**os.environ, "SAYSO_URL": srv.url, "SAYSO_KEY": srv.key}
    first = subprocess.Popen(
        [sys.executable, "run.py"], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    person = Person(srv.feed)
    deadline = time.monotonic() + 60
    while "prod" not in person.feed() or (saved and not (tmp_path / saved).exists()):
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the run never asked"
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert person.answer("prod", value="Allow").status_code == 303

    use_server(srv, monkeypatch)
    monkeypatch.chdir(tmp_path)
    out = run_block(resume)
    with sayso.Client(srv.url, srv.key) as client:
        asked = [d for d in client.list() if d.metadata.get("run_id") == "deploy-42"]
    assert [d.status for d in asked] == ["answered"], "the resumed run asked again"
    return out


def run_and_resume_checks(
    section: str, said: str, saved: str | None = None
) -> tuple[Callable[..., None], Callable[..., None]]:
    """Two tests of a framework's run-and-resume pair in docs/CLIENTS.md's ``section``: the
    first block, run here, asks the person and runs the allowed tool (leaving ``saved`` if
    given); the second carries on what the first left when its process died. Both print
    ``said``."""

    def blocks() -> tuple[str, str]:
        run, resume = python_blocks("CLIENTS.md", section)
        return run, resume

    def runs_the_allowed_tool(
        own_server: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.chdir(tmp_path)
        assert run_answered(own_server, monkeypatch, blocks()[0], "prod", "Allow") == said
        if saved:
            assert (tmp_path / saved).exists(), "the block saves the run's state"

    def carries_on_after_a_death(
        own_server: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        assert killed_then_resumed(own_server, monkeypatch, tmp_path, blocks(), saved) == said

    return runs_the_allowed_tool, carries_on_after_a_death
