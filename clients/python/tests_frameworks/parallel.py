"""The parallel-calls case every framework adapter's suite runs: a model asks for 1, 2 or 3
gated tool calls in one step; the person sees them all at once, as one batch, and answers
them one at a time (some Allow, some Deny); between two answers the agent's process is
killed and a new one resumes the run cold from what the first saved. Every allowed tool runs
exactly once and a denied one never, counted from the file the tool itself appends a line to
on every run.

Each suite supplies the processes (``start`` and ``resume``, its own agent script); this
module is the person, the clock and the checks.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from sayso_client_fixtures import Person, Server

import sayso

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


def asked_in(server: Server, run_id: str) -> list[sayso.Decision]:
    with sayso.Client(server.url, server.key) as client:
        return [d for d in client.list() if d.metadata.get("run_id") == run_id]


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
    while len(asked := asked_in(server, run_id)) < len(made):
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
    asked = asked_in(server, run_id)
    assert len(asked) == len(made), "a resume asked a call again"
    by_call = {d.metadata["tool_call_id"]: d for d in asked}
    for c in made:
        d = by_call[c.call_id]
        assert d.status == "answered" and d.outcome == c.answer, (c, d.status, d.outcome)
