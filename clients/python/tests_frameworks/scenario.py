"""The steps every framework adapter's suite shares: a deploy target the person finds in
the feed, the decisions one run asked, the agent script a suite runs in a process of its own
(killed while it waits and resumed cold), the ways a question ends without an answer, and the
parallel-calls case: a model asks for 1, 2 or 3 gated tool calls in one step; the person sees
them all at once, as one batch, and answers them one at a time (some Allow, some Deny);
between two answers the agent's process is killed and a new one resumes the run cold from
what the first saved. Every allowed tool runs exactly once and a denied one never, counted
from the file the tool itself appends a line to on every run.

Each suite supplies its framework's run and its processes (its own agent script); this module
is the person, the clock and the checks.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from helpers import joined, later
from sayso_client_fixtures import Person, Server

import sayso

# What the model reads when nobody answers, by how the question ended (the timeout's words
# are the adapter's own, so each suite names them).
ENDED = {
    "cancel": "the approval was cancelled: the deploy window closed",
    "expiry": "the approval expired with no answer",
}

# Links that answer a question or show its page: nothing an agent holds or prints has one.
LINKS = ("/a/", "/d/", "/inbox/")


def target() -> str:
    """A deploy target no other test uses: the person finds the approval in the feed by it."""
    return f"prod-{uuid.uuid4().hex[:8]}"


def asked_for(server: Server, run_id: str) -> list[sayso.Decision]:
    """The decisions the run ``run_id`` asked, newest first."""
    with sayso.Client(server.url, server.key) as client:
        return [d for d in client.list() if d.metadata.get("run_id") == run_id]


def agent_process(
    script: Path, server: Server, run_id: str, tmp_path: Path, *args: str
) -> Callable[[str], subprocess.Popen[str]]:
    """Starts ``script`` (a suite's agent_process.py) in ``mode``: ``start`` or ``resume``."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}

    def agent(mode: str) -> subprocess.Popen[str]:
        line = [sys.executable, str(script), mode, server.url, server.key, run_id, str(tmp_path)]
        return subprocess.Popen(
            [*line, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    return agent


def killed_then_resumed(
    person: Person,
    where: str,
    agent: Callable[[str], subprocess.Popen[str]],
    saved: Callable[[], bool] = lambda: True,
) -> tuple[str, str]:
    """The agent started, killed once the person sees ``where`` asked (and ``saved`` holds),
    the person allowing while no agent runs at all, a new agent resuming cold: what it
    printed, checked to have ended well."""
    first = agent("start")
    deadline = time.monotonic() + 30
    while where not in person.feed() or not saved():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the agent never asked"
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert person.answer(where, value="Allow").status_code == 303
    second = agent("resume")
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    return out, err


def paused_killed_resumed(
    server: Server, person: Person, start: list[str], resume: list[str], command: str
) -> tuple[str, str]:
    """An agent script run with ``start`` until it prints ``PAUSED <run id>`` and killed; the
    person allowing ``command``; the script run again with ``resume`` to its end. Returns the
    run id the first printed and what the second printed, checked to have ended well."""
    env = {**os.environ, "SAYSO_URL": server.url, "SAYSO_KEY": server.key}
    first = subprocess.Popen([sys.executable, *start], env=env, stdout=subprocess.PIPE, text=True)
    assert first.stdout is not None
    line = first.stdout.readline()
    assert line.startswith("PAUSED "), line
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert person.answer_when_asked(command, value="Allow").status_code == 303
    second = subprocess.run(
        [sys.executable, *resume], env=env, capture_output=True, text=True, timeout=60
    )
    assert second.returncode == 0, second.stderr
    return line.split()[1], second.stdout


def unanswered(server: Server, run_id: str, how: str, run: Callable[..., str]) -> str:
    """What the model read after ``run`` (given the adapter's settings) asked a question that
    ended ``how`` (``timeout``, ``cancel`` or ``expiry``) without an answer."""
    kw: dict[str, Any] = {"timeout": 1.0} if how == "timeout" else {}
    if how == "expiry":
        kw["ttl"] = 10  # the shortest the server takes

    def cancel() -> None:
        with sayso.Client(server.url, server.key) as client:
            for _ in range(100):
                found = [
                    d for d in client.list(status="pending") if d.metadata.get("run_id") == run_id
                ]
                if found:
                    client.cancel(found[0], "the deploy window closed")
                    return
                time.sleep(0.1)

    canceller = later(0.1, cancel) if how == "cancel" else None
    said = run(**kw)
    if canceller:
        joined(canceller)
    return said


def denied_then_restarted(server: Server, where: str, run: Callable[[], object]) -> None:
    """``run`` asking about ``where``, the person denying it ("no"), the server restarting."""
    person = Person(server.feed)
    answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="no")
    run()
    joined(answered)
    server.kill()
    server.start()


def loads_no_framework(top: str) -> None:
    """``import sayso`` leaves the framework ``top`` unloaded."""
    loaded = subprocess.run(
        [sys.executable, "-c", f"import sys, sayso; print({top!r} in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "False"


# The answers given to the calls of one model step, in the order the person gives them.
PLANS: dict[int, tuple[str, ...]] = {
    1: ("Allow",),
    2: ("Allow", "Deny"),
    3: ("Deny", "Allow", "Allow"),
}


@dataclass(frozen=True)
class Call:
    """One tool call the scripted model makes: the command (unique to the test, so the person
    finds it in the feed), its call id, and the answer the person gives."""

    command: str
    call_id: str
    answer: str


def calls(n: int, verb: str = "deploy") -> list[Call]:
    word = uuid.uuid4().hex[:8]
    return [
        Call(f"{verb}-{i} {word}", f"call_{i}_{word}", answer)
        for i, answer in enumerate(PLANS[n], 1)
    ]


def runs_of(path: Path) -> list[str]:
    """The lines the tool wrote, one per run."""
    return path.read_text().splitlines() if path.exists() else []


def asked_together(
    server: Server,
    person: Person,
    run_id: str,
    harness: str,
    made: list[Call],
    alive: Callable[[], None],
) -> list[sayso.Decision]:
    """Waits until the run's approvals exist and checks that all of them are pending at once,
    before anyone answered, and that the person sees them as one batch: the feed groups them
    and the session page lists every call."""
    deadline = time.monotonic() + 60
    while len(asked := asked_for(server, run_id)) < len(made):
        alive()
        assert time.monotonic() < deadline, f"only {len(asked)} of {len(made)} calls were asked"
        time.sleep(0.1)
    assert len(asked) == len(made), [d.metadata for d in asked]
    assert [d.status for d in asked] == ["pending"] * len(made)
    assert {d.metadata["tool_call_id"] for d in asked} == {c.call_id for c in made}
    assert {d.approval.session_id for d in asked if d.approval} == {run_id[:200]}
    if len(made) > 1:
        feed = person.feed()
        assert feed.count('class="session-group"') >= 1, "the feed does not group the calls"
        query = urlencode({"harness": harness, "session": run_id})
        page = person.browser.get(f"/inbox/session?{query}")
        assert page.status_code == 200, page.text
        shown = re.findall(r'class="session-call"', page.text)
        assert len(shown) == len(made), f"the session page shows {len(shown)} calls"
        assert f"Call {len(made)} of {len(made)}" in page.text
    return asked


def kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()


def answer_one_at_a_time(
    server: Server,
    person: Person,
    run_id: str,
    harness: str,
    made: list[Call],
    start: Callable[[], subprocess.Popen[str]],
    resume: Callable[[], subprocess.Popen[str]],
    settled: Callable[[Call], None] = lambda call: time.sleep(0.5),
) -> str:
    """Starts the agent, checks every call is asked at once, then answers one call at a time;
    after each answer but the last, ``settled`` waits for the running process to take it in,
    and the process is killed and a new one resumes the run. Returns what the last one
    printed."""
    proc = start()

    def alive() -> None:
        assert proc.poll() is None, proc.communicate()

    try:
        asked_together(server, person, run_id, harness, made, alive)
        for i, call in enumerate(made):
            # The page offers Allow and Deny, and no "Allow for a while": no adapter would
            # honour one.
            page = person.browser.get(person.link_to(call.command)).text
            assert 'id="allow"' in page, page
            assert 'name="allow_for"' not in page, "a framework approval offers Allow for a while"
            remark = None if call.answer == "Allow" else f"not {call.command}"
            answered = person.answer(call.command, value=call.answer, remark=remark)
            assert answered.status_code == 303, answered.text
            if i == len(made) - 1:
                break
            settled(call)
            kill(proc)
            proc = resume()
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        return out
    finally:
        kill(proc)


def assert_ran_exactly_the_allowed(
    server: Server, run_id: str, made: list[Call], runs: Path
) -> None:
    """Every allowed call ran once, no denied one ran, and no call was asked twice."""
    allowed = [c.command for c in made if c.answer == "Allow"]
    assert Counter(runs_of(runs)) == Counter(allowed), runs_of(runs)
    asked = asked_for(server, run_id)
    assert len(asked) == len(made), "a resume asked a call again"
    by_call = {d.metadata["tool_call_id"]: d for d in asked}
    for c in made:
        d = by_call[c.call_id]
        assert d.status == "answered" and d.outcome == c.answer, (c, d.status, d.outcome)


def final_line(out: str) -> str:
    """The one line of ``out`` an agent script prints last, ``FINAL …``."""
    (final,) = [line for line in out.splitlines() if line.startswith("FINAL ")]
    return final


def each_allowed_runs_once(
    server: Server,
    person: Person,
    run_id: str,
    harness: str,
    made: list[Call],
    agent: Callable[[str], subprocess.Popen[str]],
    runs: Path,
    ran: str,
    settled: Callable[[Call], None] = lambda call: time.sleep(0.5),
    said: Callable[[str], str] = lambda out: out,
) -> None:
    """The parallel-calls case through ``agent`` (started in mode ``start``, then ``resume``):
    every allowed call run exactly once, and what the last process printed (``said`` of it)
    telling of each call that it ran (``ran`` and its command) or was not allowed."""
    start, resume = (lambda: agent("start")), (lambda: agent("resume"))
    out = answer_one_at_a_time(server, person, run_id, harness, made, start, resume, settled)
    assert_ran_exactly_the_allowed(server, run_id, made, runs)
    told = said(out)
    for c in made:
        expected = f"{ran} {c.command}" if c.answer == "Allow" else f"not {c.command}"
        assert expected in told


def each_allowed_runs_once_in_processes(
    script: Path,
    server: Server,
    person: Person,
    run_id: str,
    tmp_path: Path,
    harness: str,
    n: int,
    settled: Callable[[Call], None] = lambda call: time.sleep(0.5),
) -> None:
    """The parallel-calls case of ``n`` calls through ``script``, an agent script run by
    ``agent_process`` that deploys: what each run printed says where it deployed."""
    made = calls(n)
    pairs = [arg for c in made for arg in (c.command, c.call_id)]
    agent = agent_process(script, server, run_id, tmp_path, *pairs)
    runs, ran = tmp_path / "runs", "deployed to"
    each_allowed_runs_once(server, person, run_id, harness, made, agent, runs, ran, settled)
