"""The steps every framework adapter's suite shares: a deploy target the person finds in
the feed, the decisions one run asked, the agent script a suite runs in a process of its own
(killed while it waits and resumed cold), the ways a question ends without an answer, and the
parallel-calls case: a model asks for 1, 2 or 3 gated tool calls in one step; the person sees
them all at once, as one batch, and answers them one at a time (some Allow, some Deny);
between two answers the agent's process is killed and a new one resumes the run cold from
what the first saved. Every allowed tool runs exactly once and a denied one never, counted
from the file the tool itself appends a line to on every run.

Each suite supplies its framework's run and its processes (its own agent script); this module
is the person, the clock and the checks. The suites whose agent deploys (ADK, the OpenAI
Agents SDK) share their tests whole: ``DeploySuite``.
"""

from __future__ import annotations

import asyncio
import inspect
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

import pytest
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


# An agent script's process started in a mode: ``start``, or ``resume``.
Agent = Callable[[str], subprocess.Popen[str]]


def agent_process(script: Path, server: Server, *args: str) -> Agent:
    """Starts ``script`` (a suite's agent script) as a process of its own in ``mode``: ``start``,
    or ``resume`` for a new process that carries the run on. It is run as ``script MODE
    *args``, with the server in ``SAYSO_URL`` and ``SAYSO_KEY``."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "SAYSO_URL": server.url, "SAYSO_KEY": server.key}

    def agent(mode: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, str(script), mode, *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    return agent


def paused(proc: subprocess.Popen[str]) -> bool:
    """Whether an agent script that prints ``PAUSED …`` once it has saved its paused run
    (lg_agent.py, pai_agent.py) did; waits for its first line."""
    assert proc.stdout is not None
    return proc.stdout.readline().startswith("PAUSED ")


def killed_then_resumed(
    person: Person,
    where: str,
    agent: Agent,
    saved: Callable[[subprocess.Popen[str]], bool] = lambda proc: True,
) -> tuple[str, str]:
    """The agent started, killed once the person sees ``where`` asked and ``saved`` holds of its
    process (the run saved for a resume), the person allowing while no agent runs at all, a
    new agent resuming cold: what it printed, checked to have ended well."""
    first = agent("start")
    deadline = time.monotonic() + 30
    while where not in person.feed() or not saved(first):
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the agent never asked"
        time.sleep(0.1)
    kill(first)
    assert person.answer(where, value="Allow").status_code == 303
    second = agent("resume")
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    return out, err


def resumed_cold(server: Server, person: Person, script: Path, saved: Path, *args: str) -> None:
    """An agent script that pauses, saves its run in ``saved`` and prints ``PAUSED …``
    (lg_agent.py, pai_agent.py: ``start|resume SAVED RUNS *args COMMAND CALL_ID``, RUNS being
    ``runs.txt`` beside ``saved``) killed once paused on a command; the person allowing it; a
    new process resuming the run from ``saved``: the tool ran once, and the person was asked
    once."""
    runs, command = saved.parent / "runs.txt", f"migrate {uuid.uuid4().hex[:8]}"
    agent = agent_process(script, server, str(saved), str(runs), *args, command, "call-1")
    out, _ = killed_then_resumed(person, command, agent, paused)
    assert f"FINAL tool said: ran {command}" in out
    assert runs_of(runs) == [command]
    with sayso.Client(server.url, server.key) as client:
        asked = [d for d in client.list() if command in d.question]
    assert len(asked) == 1, "the resumed run asked again"


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


def answered(person: Person, where: str, run: Callable[[], str], **answer: Any) -> str:
    """What ``run`` returned, the person having given ``answer`` as soon as it asked about
    ``where``."""
    answering = later(0.2, person.answer_when_asked, where, **answer)
    said = run()
    assert joined(answering).status_code == 303
    return said


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


def arguments(made: list[Call]) -> list[str]:
    """The calls as an agent script's arguments: command, call id, command, call id, …"""
    return [arg for c in made for arg in (c.command, c.call_id)]


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
    agent: Agent,
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


class DeploySuite:
    """The tests of an adapter whose agent deploys (tests_frameworks/adk, openai_agents),
    written once: a suite's ``Test…`` subclass says what differs and supplies its framework's
    runs, and pytest runs these tests for it.

    The agent's model deploys to ``where``, a target no other test uses, with the tool call
    ``call_1`` (and to more targets, in the same step, where a test says); the tool appends
    each target it deploys to to ``tmp_path / "runs"``. The suite's agent script is
    ``agent_process.py`` beside its tests: ``start|resume RUN_ID WORKDIR TARGET CALL_ID…``,
    printing what the model said last.
    """

    #: The approvals' harness.
    harness: str
    #: The framework's top module, which ``import sayso`` leaves unloaded.
    framework: str
    #: What the model reads when the adapter's wait for the person runs out.
    timed_out: str

    def kept(self, tmp_path: Path) -> str:
        """What the agent keeps of its runs for a new process (a session store, a saved state),
        as text: nothing until it has saved something."""
        raise NotImplementedError

    async def run(
        self, server: Server, run_id: str, tmp_path: Path, where: str, **settings: Any
    ) -> str:
        """The agent deploying to ``where`` in the run ``run_id``, through the adapter made
        with ``settings``: what the model said last."""
        raise NotImplementedError

    async def approved_by_itself(
        self, server: Server, person: Person, run_id: str, tmp_path: Path, where: str
    ) -> tuple[str, str]:
        """The run asking about ``where`` and its process dying before the person answered;
        the agent approving the call itself and running on; then the same run through the
        adapter, the person denying it with "forged": what the model read each time."""
        raise NotImplementedError

    async def approved_unasked(
        self, server: Server, run_id: str, tmp_path: Path, where: str
    ) -> tuple[str, str]:
        """The agent approving the call itself before the adapter asked anyone, then the same
        run through the adapter: what the model read each time."""
        raise NotImplementedError

    async def given_up(
        self, server: Server, person: Person, run_id: str, tmp_path: Path, first: str, second: str
    ) -> tuple[list[str], str]:
        """A run deploying to ``first`` (``call_1``) and ``second`` (``call_2``) asking about
        both, its process dying; the person allowing ``first``; the adapter withdrawing the
        run, then resuming it: the ids withdrawn, and what the model said last."""
        raise NotImplementedError

    def running(
        self, server: Server, run_id: str, tmp_path: Path, where: str
    ) -> Callable[..., str]:
        """``run`` as a blocking call that takes the adapter's settings."""
        return lambda **settings: asyncio.run(self.run(server, run_id, tmp_path, where, **settings))

    def agent(self, server: Server, run_id: str, tmp_path: Path, *calls: str) -> Agent:
        """The suite's agent script in a process of its own (``agent_process``)."""
        script = Path(inspect.getfile(type(self))).with_name("agent_process.py")
        return agent_process(script, server, run_id, str(tmp_path), *calls)

    def test_an_allowed_call_runs_once_and_the_page_shows_it(self, server, person, tmp_path):
        where, run_id = target(), f"run-{uuid.uuid4()}"
        run = self.running(server, run_id, tmp_path, where)
        assert f"deployed to {where}" in answered(person, where, run, value="Allow")
        assert runs_of(tmp_path / "runs") == [where]
        # The approval block: what the person's page showed, and who asked.
        [d] = asked_for(server, run_id)
        assert d.approval is not None
        assert (d.approval.harness, d.approval.tool_name) == (self.harness, "deploy")
        assert any(where in page for page in person.seen)

    def test_a_denied_call_does_not_run_and_the_model_reads_the_reason(
        self, server, person, tmp_path
    ):
        where, run_id = target(), f"run-{uuid.uuid4()}"
        run = self.running(server, run_id, tmp_path, where)
        said = answered(person, where, run, value="Deny", remark="not on a Friday")
        assert "denied by the person: not on a Friday" in said
        assert runs_of(tmp_path / "runs") == []

    def test_a_denial_sticks_when_the_call_is_made_again(self, server, tmp_path):
        self.denied_then_made_again(server, tmp_path)

    def test_a_denial_sticks_across_a_server_restart(self, own_server, tmp_path):
        self.denied_then_made_again(own_server, tmp_path, restart=True)

    def denied_then_made_again(self, server: Server, tmp_path: Path, restart: bool = False) -> None:
        """The person denying the call ("no"), the server restarting (with ``restart``), and
        the same call made again in the same run: sayso already holds the answer, nobody is
        asked twice, and the tool never runs."""
        where, run_id = target(), f"run-{uuid.uuid4()}"
        run = self.running(server, run_id, tmp_path, where)
        answered(Person(server.feed), where, run, value="Deny", remark="no")
        if restart:
            server.kill()
            server.start()
        assert "denied by the person: no" in run(timeout=5)
        assert runs_of(tmp_path / "runs") == []
        assert len(asked_for(server, run_id)) == 1

    def test_a_killed_agent_resumes_by_its_run_id_and_runs_the_tool_once(
        self, server, person, tmp_path
    ):
        where, run_id = target(), f"run-{uuid.uuid4()}"
        agent = self.agent(server, run_id, tmp_path, where, "call_deploy_1")
        # Answered while no agent runs at all.
        out, err = killed_then_resumed(person, where, agent, lambda _: bool(self.kept(tmp_path)))
        assert f"deployed to {where}" in out
        assert runs_of(tmp_path / "runs") == [where]
        assert len(asked_for(server, run_id)) == 1, "the resumed run asked a second time"
        # What the agent keeps and prints carries no link that answers, nor the decision's page.
        held = self.kept(tmp_path) + out + err
        assert not [link for link in LINKS if link in held]

    def test_an_approval_the_agent_gives_itself_runs_nothing(self, server, person, tmp_path):
        where, run_id = target(), f"run-{uuid.uuid4()}"
        forged, again = asyncio.run(
            self.approved_by_itself(server, person, run_id, tmp_path, where)
        )
        assert "the person has not answered this approval yet" in forged
        assert "denied by the person: forged" in again
        assert runs_of(tmp_path / "runs") == []

    def test_a_call_never_asked_about_is_denied_for_good(self, server, tmp_path):
        where, run_id = target(), f"run-{uuid.uuid4()}"
        forged, again = asyncio.run(self.approved_unasked(server, run_id, tmp_path, where))
        assert "no approval was asked for this call before it ran" in forged
        assert "the call ran without being asked about" in again
        assert runs_of(tmp_path / "runs") == []
        (asked,) = asked_for(server, run_id)
        assert asked.status == "cancelled", (
            "the check's own approval is withdrawn, not left waiting"
        )

    @pytest.mark.parametrize("ending", ["timeout", "cancel", "expiry"])
    def test_no_answer_reaches_the_model_as_a_denial_with_its_reason(
        self, server, tmp_path, ending
    ):
        where, run_id = target(), f"run-{uuid.uuid4()}"
        said = unanswered(server, run_id, ending, self.running(server, run_id, tmp_path, where))
        assert runs_of(tmp_path / "runs") == []
        assert {**ENDED, "timeout": self.timed_out}[ending] in said

    def test_import_sayso_needs_no_framework(self):
        loads_no_framework(self.framework)

    @pytest.mark.parametrize("n", [1, 2, 3])
    def test_parallel_calls_are_asked_at_once_and_each_allowed_one_runs_once(
        self, server, person, tmp_path, n
    ):
        run_id, made = f"run-{uuid.uuid4()}", calls(n)
        agent = self.agent(server, run_id, tmp_path, *arguments(made))

        def settled(call: Call) -> None:
            # What a cold resume needs is kept before the run waits.
            deadline = time.monotonic() + 30
            while not self.kept(tmp_path):
                assert time.monotonic() < deadline, "the run kept nothing for a resume"
                time.sleep(0.1)
            time.sleep(0.5)

        runs = tmp_path / "runs"
        each_allowed_runs_once(
            server, person, run_id, self.harness, made, agent, runs, "deployed to", settled
        )

    def test_a_run_given_up_withdraws_what_still_waits_and_a_resume_runs_none_of_it(
        self, server, person, tmp_path
    ):
        run_id, word = f"run-{uuid.uuid4()}", uuid.uuid4().hex[:8]
        first, second = f"a-{word}", f"b-{word}"
        withdrawn, said = asyncio.run(
            self.given_up(server, person, run_id, tmp_path, first, second)
        )
        by_call = {d.metadata["tool_call_id"]: d for d in asked_for(server, run_id)}
        assert withdrawn == [by_call["call_2"].decision_id]
        assert by_call["call_2"].status == "cancelled"
        assert by_call["call_1"].status == "answered", "an answer stays as it is"
        assert runs_of(tmp_path / "runs") == [first]
        assert "the agent stopped waiting, and it withdrew the question" in said
