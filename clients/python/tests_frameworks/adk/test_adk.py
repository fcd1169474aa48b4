"""Google ADK (pinned in clients/python/frameworks/adk.txt) with its tool confirmations answered
by a person through a real ``sayso serve``. The model is the ``BaseLlm`` of scripted.py: offline,
no API key. Everything here runs offline: the runner, the confirmation flow and ADK's own
SQLite session store."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
import scenario
import scripted
from google.genai import types
from helpers import joined, later
from scenario import asked_for, target

import sayso
from sayso.adk import REQUEST_CONFIRMATION, SaysoConfirmations

HERE = Path(__file__).resolve().parent


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
    script = HERE / "agent_process.py"
    agent = scenario.agent_process(script, server, sid, tmp_path, where, "call_deploy_1")
    out, err = scenario.killed_then_resumed(person, where, agent)
    assert f"deployed to {where}" in out
    assert scripted.runs(tmp_path / "runs") == 1
    assert len(asked_for(server, sid)) == 1, "the resumed session asked a second time"
    # What the agent holds and prints carries no link that answers, nor the decision's page.
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("sessions.db*"))
    held = stored.decode("utf-8", "replace") + out + err
    assert not [link for link in scenario.LINKS if link in held]


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


async def confirmed_by_itself(
    server: Any, sid: str, tmp_path: Path, where: str, fresh: bool = True
) -> tuple[str, str]:
    """The agent answering ADK's confirmation of a deploy to ``where`` itself, then the same
    call through the adapter: what the model read each time."""
    async with sayso.AsyncClient(server.url, server.key) as client:
        confirmations = SaysoConfirmations(client, timeout=5)
        runner = scripted.deploy_runner(tmp_path / "runs", where, "call_1", confirmations.tool)
        if fresh:
            await new_session(runner, sid)
        paused = await collect(runner, sid, say("deploy it"))
        forged = await collect(runner, sid, confirmed_by_the_agent(paused))
        again = await confirmations.run(
            runner, user_id=scripted.USER, session_id=sid, new_message=say("deploy it")
        )
        return scripted.last_text(forged), scripted.last_text(again)


async def paused_run(
    client: sayso.AsyncClient, sid: str, tmp_path: Path, where: str, *more: tuple[str, str]
) -> tuple[SaysoConfirmations, Any, list[Any]]:
    """A new session's run of a deploy to ``where`` (and the ``more`` calls), paused on ADK's
    confirmation: the adapter, the runner and the events so far."""
    confirmations = SaysoConfirmations(client)
    runner = scripted.deploy_runner(tmp_path / "runs", where, "call_1", confirmations.tool, *more)
    await new_session(runner, sid)
    return confirmations, runner, await collect(runner, sid, say("deploy it"))


async def asked_then_dropped(
    confirmations: SaysoConfirmations, paused: list[Any], sid: str, person: Any, where: str
) -> None:
    """The adapter asking the person about ``where``, and the agent dying before they answer."""
    waiting = asyncio.create_task(confirmations.answers(paused, sid))
    while where not in await asyncio.to_thread(person.feed):
        await asyncio.sleep(0.1)
    waiting.cancel()


def test_a_confirmation_the_agent_sends_itself_runs_nothing(server, person, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"

    async def go() -> tuple[str, str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            confirmations, runner, paused = await paused_run(client, sid, tmp_path, where)
            # The adapter asks; the agent dies before the person answers.
            await asked_then_dropped(confirmations, paused, sid, person, where)
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

    forged, again = asyncio.run(confirmed_by_itself(server, sid, tmp_path, where))
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

    # The same call id in the same session, now for somewhere else.
    forged, again = asyncio.run(confirmed_by_itself(server, sid, tmp_path, "everywhere", False))
    assert "asked for with other arguments" in forged
    assert "asked for with other arguments" in again
    assert scripted.runs(tmp_path / "runs") == 1


@pytest.mark.parametrize("ending", ["timeout", "cancel", "expiry"])
def test_no_answer_reaches_the_model_as_a_denial_with_its_reason(server, tmp_path, ending):
    where, sid = target(), f"s-{uuid.uuid4()}"
    said = scenario.unanswered(
        server, sid, ending,
        lambda **kw: asyncio.run(run_with_person(server, sid, tmp_path, where, **kw)),
    )  # fmt: skip
    assert scripted.runs(tmp_path / "runs") == 0
    ended = {**scenario.ENDED, "timeout": "nobody answered before the agent stopped waiting"}
    assert ended[ending] in said


def test_import_sayso_needs_no_framework():
    scenario.loads_no_framework("google.adk")


def test_a_denial_sticks_across_a_server_restart(own_server, tmp_path):
    where, sid = target(), f"s-{uuid.uuid4()}"
    scenario.denied_then_restarted(
        own_server, where, lambda: asyncio.run(run_with_person(own_server, sid, tmp_path, where))
    )
    again = asyncio.run(run_with_person(own_server, sid, tmp_path, where, fresh=False, timeout=5))
    assert "denied by the person: no" in again
    assert scripted.runs(tmp_path / "runs") == 0


@pytest.mark.parametrize("n", [1, 2, 3])
def test_parallel_calls_are_asked_at_once_and_each_allowed_one_runs_once(
    server, person, tmp_path, n
):
    scenario.each_allowed_runs_once_in_processes(
        HERE / "agent_process.py", server, person, f"s-{uuid.uuid4()}", tmp_path, "google-adk", n
    )


def test_a_run_given_up_withdraws_what_still_waits_and_a_resume_runs_none_of_it(
    server, person, tmp_path
):
    sid, word = f"s-{uuid.uuid4()}", uuid.uuid4().hex[:8]
    first, second = f"a-{word}", f"b-{word}"

    async def go() -> tuple[list[str], str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            more = (second, "call_2")
            confirmations, runner, paused = await paused_run(client, sid, tmp_path, first, more)
            await asked_then_dropped(confirmations, paused, sid, person, second)
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
