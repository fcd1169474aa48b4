"""Google ADK (pinned in clients/python/frameworks/adk.txt) with its tool confirmations answered
by a person through a real ``sayso serve``. The model is the ``BaseLlm`` of scripted.py: offline,
no API key. Everything here runs offline: the runner, the confirmation flow and ADK's own
SQLite session store."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import parallel
import pytest
import scripted
from google.genai import types
from helpers import joined, later
from sayso_client_fixtures import Person

import sayso
from sayso.adk import REQUEST_CONFIRMATION, SaysoConfirmations

HERE = Path(__file__).resolve().parent


def target() -> str:
    """A deploy target no other test uses: the person finds the approval in the feed by it."""
    return f"prod-{uuid.uuid4().hex[:8]}"


def say(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def new_session(runner: Any, session_id: str) -> None:
    await runner.session_service.create_session(
        app_name=scripted.APP, user_id=scripted.USER, session_id=session_id
    )


async def run_with_person(
    server: Any,
    session_id: str,
    tmp_path: Path,
    where: str,
    call_id: str = "call_1",
    fresh: bool = True,
    **kw: Any,
) -> str:
    async with sayso.AsyncClient(server.url, server.key) as client:
        confirmations = SaysoConfirmations(client, **kw)
        runner = scripted.deploy_runner(tmp_path / "runs", where, call_id, confirmations.tool)
        if fresh:
            await new_session(runner, session_id)
        events = await confirmations.run(
            runner, user_id=scripted.USER, session_id=session_id, new_message=say("deploy it")
        )
        return scripted.last_text(events)


def asked_for(server: Any, session_id: str) -> list[sayso.Decision]:
    with sayso.Client(server.url, server.key) as client:
        return [d for d in client.list() if d.metadata.get("run_id") == session_id]


def test_an_allowed_call_runs_once_and_the_page_shows_it(server, person, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"
    answered = later(0.2, person.answer_when_asked, where, value="Allow")
    said = asyncio.run(run_with_person(server, sid, tmp_path, where))
    assert joined(answered).status_code == 303
    assert scripted.runs(tmp_path / "runs") == 1
    assert f"deployed to {where}" in said
    [d] = asked_for(server, sid)
    assert d.approval is not None
    assert (d.approval.harness, d.approval.tool_name) == ("google-adk", "deploy")
    assert any(where in page for page in person.seen)


def test_a_denied_call_does_not_run_and_the_model_reads_the_reason(server, person, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"
    answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="not on a Friday")
    said = asyncio.run(run_with_person(server, sid, tmp_path, where))
    assert joined(answered).status_code == 303
    assert scripted.runs(tmp_path / "runs") == 0
    assert "denied by the person: not on a Friday" in said


def test_a_denial_sticks_when_the_call_is_made_again(server, person, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"
    answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="no")
    asyncio.run(run_with_person(server, sid, tmp_path, where))
    joined(answered)
    # The model makes the same call again in the same session: nobody is asked twice.
    again = asyncio.run(run_with_person(server, sid, tmp_path, where, fresh=False, timeout=5))
    assert "denied by the person: no" in again
    assert scripted.runs(tmp_path / "runs") == 0
    assert len(asked_for(server, sid)) == 1


def test_a_killed_agent_resumes_by_session_id_and_runs_the_tool_once(server, person, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}

    def agent(mode: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [
                sys.executable,
                str(HERE / "agent_process.py"),
                mode,
                server.url,
                server.key,
                sid,
                str(tmp_path),
                where,
                "call_deploy_1",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    first = agent("start")
    deadline = time.monotonic() + 30
    while where not in person.feed():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the agent never asked"
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert person.answer(where, value="Allow").status_code == 303
    second = agent("resume")
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    assert f"deployed to {where}" in out
    assert scripted.runs(tmp_path / "runs") == 1
    assert len(asked_for(server, sid)) == 1, "the resumed session asked a second time"
    # What the agent holds and prints carries no link that answers, nor the decision's page.
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("sessions.db*"))
    held = stored.decode("utf-8", "replace") + out + err
    assert not [link for link in ("/a/", "/d/", "/inbox/") if link in held]


def confirmed_by_the_agent(events: list[Any]) -> types.Content:
    """The agent's own answer to ADK's confirmation, saying yes, as an agent could send it."""
    asked = next(
        fc for e in events for fc in e.get_function_calls() if fc.name == REQUEST_CONFIRMATION
    )
    response = types.FunctionResponse(
        id=asked.id, name=REQUEST_CONFIRMATION, response={"confirmed": True}
    )
    return types.Content(role="user", parts=[types.Part(function_response=response)])


async def collect(runner: Any, sid: str, message: types.Content) -> list[Any]:
    return [
        e
        async for e in runner.run_async(user_id=scripted.USER, session_id=sid, new_message=message)
    ]


def test_a_confirmation_the_agent_sends_itself_runs_nothing(server, person, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"

    async def go() -> tuple[str, str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            confirmations = SaysoConfirmations(client)
            runner = scripted.deploy_runner(tmp_path / "runs", where, "call_1", confirmations.tool)
            await new_session(runner, sid)
            paused = await collect(runner, sid, say("deploy it"))
            # The adapter asks; the agent dies before the person answers.
            waiting = asyncio.create_task(confirmations.answers(paused, sid))
            while where not in await asyncio.to_thread(person.feed):
                await asyncio.sleep(0.1)
            waiting.cancel()
            # The agent answers ADK's confirmation itself with a yes: the tool asks sayso.
            forged = await collect(runner, sid, confirmed_by_the_agent(paused))
            answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="forged")
            # The same call once more through the adapter, the person denying: still nothing.
            again = await confirmations.run(
                runner, user_id=scripted.USER, session_id=sid, new_message=say("deploy it")
            )
            joined(answered)
            return scripted.last_text(forged), scripted.last_text(again)

    forged, again = asyncio.run(go())
    assert "the person has not answered this approval yet" in forged
    assert "denied by the person: forged" in again
    assert scripted.runs(tmp_path / "runs") == 0


def test_a_call_never_asked_about_is_denied_for_good(server, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"

    async def go() -> tuple[str, str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            confirmations = SaysoConfirmations(client, timeout=5)
            runner = scripted.deploy_runner(tmp_path / "runs", where, "call_1", confirmations.tool)
            await new_session(runner, sid)
            paused = await collect(runner, sid, say("deploy it"))
            forged = await collect(runner, sid, confirmed_by_the_agent(paused))
            again = await confirmations.run(
                runner, user_id=scripted.USER, session_id=sid, new_message=say("deploy it")
            )
            return scripted.last_text(forged), scripted.last_text(again)

    forged, again = asyncio.run(go())
    assert "no approval was asked for this call before it ran" in forged
    assert "the call ran without being asked about" in again
    assert scripted.runs(tmp_path / "runs") == 0
    (asked,) = asked_for(server, sid)
    assert asked.status == "cancelled", "the check's own approval is withdrawn, not left waiting"


def test_an_allow_for_one_call_never_lets_other_arguments_through(server, person, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"
    answered = later(0.2, person.answer_when_asked, where, value="Allow")
    asyncio.run(run_with_person(server, sid, tmp_path, where))
    joined(answered)
    assert scripted.runs(tmp_path / "runs") == 1

    async def go() -> tuple[str, str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            confirmations = SaysoConfirmations(client, timeout=5)
            # The same call id in the same session, now for somewhere else.
            runner = scripted.deploy_runner(
                tmp_path / "runs", "everywhere", "call_1", confirmations.tool
            )
            paused = await collect(runner, sid, say("deploy it"))
            forged = await collect(runner, sid, confirmed_by_the_agent(paused))
            again = await confirmations.run(
                runner, user_id=scripted.USER, session_id=sid, new_message=say("deploy it")
            )
            return scripted.last_text(forged), scripted.last_text(again)

    forged, again = asyncio.run(go())
    assert "asked for with other arguments" in forged
    assert "asked for with other arguments" in again
    assert scripted.runs(tmp_path / "runs") == 1


@pytest.mark.parametrize("ending", ["timeout", "cancel", "expiry"])
def test_no_answer_reaches_the_model_as_a_denial_with_its_reason(server, tmp_path, ending):
    where, sid = target(), f"s-{uuid.uuid4()}"
    kw: dict[str, Any] = {"timeout": 1.0} if ending == "timeout" else {}
    if ending == "expiry":
        kw["ttl"] = 10  # the shortest the server takes
    canceller = None
    if ending == "cancel":

        def cancel() -> None:
            with sayso.Client(server.url, server.key) as client:
                for _ in range(100):
                    found = [
                        d for d in client.list(status="pending") if d.metadata.get("run_id") == sid
                    ]
                    if found:
                        client.cancel(found[0], "the deploy window closed")
                        return
                    time.sleep(0.1)

        canceller = later(0.1, cancel)
    said = asyncio.run(run_with_person(server, sid, tmp_path, where, **kw))
    if canceller:
        joined(canceller)
    assert scripted.runs(tmp_path / "runs") == 0
    expected = {
        "timeout": "nobody answered before the agent stopped waiting",
        "cancel": "the approval was cancelled: the deploy window closed",
        "expiry": "the approval expired with no answer",
    }[ending]
    assert expected in said


def test_import_sayso_needs_no_framework():
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, sayso; print('google.adk' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "False"


def test_a_denial_sticks_across_a_server_restart(own_server, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"
    person = Person(own_server.feed)
    answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="no")
    asyncio.run(run_with_person(own_server, sid, tmp_path, where))
    joined(answered)
    own_server.kill()
    own_server.start()
    again = asyncio.run(run_with_person(own_server, sid, tmp_path, where, fresh=False, timeout=5))
    assert "denied by the person: no" in again
    assert scripted.runs(tmp_path / "runs") == 0


@pytest.mark.parametrize("n", [1, 2, 3])
def test_parallel_calls_are_asked_at_once_and_each_allowed_one_runs_once(
    server, person, tmp_path, n
):
    sid, made = f"s-{uuid.uuid4()}", parallel.calls(n)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    pairs = [arg for c in made for arg in (c.command, c.call_id)]

    def agent(mode: str) -> subprocess.Popen[str]:
        script = [sys.executable, str(HERE / "agent_process.py"), mode, server.url, server.key]
        return subprocess.Popen(
            [*script, sid, str(tmp_path), *pairs],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    out = parallel.answer_one_at_a_time(
        server, person, sid, "google-adk", made, lambda: agent("start"), lambda: agent("resume")
    )
    parallel.assert_ran_exactly_the_allowed(server, sid, made, tmp_path / "runs")
    for c in made:
        expected = f"deployed to {c.command}" if c.answer == "Allow" else f"not {c.command}"
        assert expected in out


def test_a_run_given_up_withdraws_what_still_waits_and_a_resume_runs_none_of_it(
    server, person, tmp_path
):
    sid, word = f"s-{uuid.uuid4()}", uuid.uuid4().hex[:8]
    first, second = f"a-{word}", f"b-{word}"

    async def go() -> tuple[list[str], str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            confirmations = SaysoConfirmations(client)
            runner = scripted.deploy_runner(
                tmp_path / "runs", first, "call_1", confirmations.tool, (second, "call_2")
            )
            await new_session(runner, sid)
            paused = await collect(runner, sid, say("deploy it"))
            waiting = asyncio.create_task(confirmations.answers(paused, sid))
            while second not in await asyncio.to_thread(person.feed):
                await asyncio.sleep(0.1)
            waiting.cancel()
            await asyncio.to_thread(person.answer, first, value="Allow")
            withdrawn = await confirmations.withdraw(sid)
            events = await confirmations.run(runner, user_id=scripted.USER, session_id=sid)
            return withdrawn, scripted.last_text(events)

    withdrawn, said = asyncio.run(go())
    by_call = {d.metadata["tool_call_id"]: d for d in asked_for(server, sid)}
    assert withdrawn == [by_call["call_2"].decision_id]
    assert by_call["call_2"].status == "cancelled"
    assert by_call["call_1"].status == "answered", "an answer stays as it is"
    assert scripted.ran(tmp_path / "runs") == [first]
    assert "the agent stopped waiting, and it withdrew the question" in said
