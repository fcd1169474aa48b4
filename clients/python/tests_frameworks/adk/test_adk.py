"""Google ADK (pinned in clients/python/frameworks/adk.txt) with its tool confirmations answered
by a person through a real ``sayso serve``. The model is the ``BaseLlm`` of scripted.py: offline,
no API key. Everything here runs offline: the runner, the confirmation flow and ADK's own
SQLite session store. The tests every deploying agent shares are ``scenario.DeploySuite``'s."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import scenario
import scripted
from google.genai import types
from helpers import joined, later
from sayso_client_fixtures import Person, Server
from scenario import runs_of, target

import sayso
from sayso.adk import REQUEST_CONFIRMATION, SaysoConfirmations


def say(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def session_runner(
    confirmations: SaysoConfirmations, sid: str, tmp_path: Path, where: str, *more: tuple[str, str]
) -> Any:
    """The runner of the session ``sid`` (made on its first run) whose model deploys to
    ``where`` (and the ``more`` calls), its tool confirmed through ``confirmations``."""
    runner = scripted.deploy_runner(tmp_path / "runs", where, "call_1", confirmations.tool, *more)
    sessions, ids = runner.session_service, {"app_name": scripted.APP, "user_id": scripted.USER}
    if await sessions.get_session(**ids, session_id=sid) is None:
        await sessions.create_session(**ids, session_id=sid)
    return runner


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


async def said_by(confirmations: SaysoConfirmations, runner: Any, sid: str) -> str:
    """The run asked to deploy through the adapter: what the model said last."""
    events = await confirmations.run(
        runner, user_id=scripted.USER, session_id=sid, new_message=say("deploy it")
    )
    return scripted.last_text(events)


async def asked_then_dropped(
    confirmations: SaysoConfirmations, paused: list[Any], sid: str, person: Person, where: str
) -> None:
    """The adapter asking the person about ``where``, and the agent dying before they answer."""
    waiting = asyncio.create_task(confirmations.answers(paused, sid))
    while where not in await asyncio.to_thread(person.feed):
        await asyncio.sleep(0.1)
    waiting.cancel()


class TestAdk(scenario.DeploySuite):
    harness = "google-adk"
    framework = "google.adk"
    timed_out = "nobody answered before the agent stopped waiting"

    def kept(self, tmp_path: Path) -> str:
        stored = b"".join(f.read_bytes() for f in tmp_path.glob("sessions.db*"))
        return stored.decode("utf-8", "replace")

    async def run(
        self, server: Server, run_id: str, tmp_path: Path, where: str, **settings: Any
    ) -> str:
        async with sayso.AsyncClient(server.url, server.key) as client:
            confirmations = SaysoConfirmations(client, **settings)
            runner = await session_runner(confirmations, run_id, tmp_path, where)
            return await said_by(confirmations, runner, run_id)

    async def approved_by_itself(
        self, server: Server, person: Person, run_id: str, tmp_path: Path, where: str
    ) -> tuple[str, str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            confirmations = SaysoConfirmations(client)
            runner = await session_runner(confirmations, run_id, tmp_path, where)
            paused = await collect(runner, run_id, say("deploy it"))
            await asked_then_dropped(confirmations, paused, run_id, person, where)
            # The agent answers ADK's confirmation itself with a yes: the tool asks sayso.
            forged = await collect(runner, run_id, confirmed_by_the_agent(paused))
            answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="forged")
            again = await said_by(confirmations, runner, run_id)
            joined(answered)
            return scripted.last_text(forged), again

    async def approved_unasked(
        self, server: Server, run_id: str, tmp_path: Path, where: str
    ) -> tuple[str, str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            confirmations = SaysoConfirmations(client, timeout=5)
            runner = await session_runner(confirmations, run_id, tmp_path, where)
            paused = await collect(runner, run_id, say("deploy it"))
            forged = await collect(runner, run_id, confirmed_by_the_agent(paused))
            return scripted.last_text(forged), await said_by(confirmations, runner, run_id)

    async def given_up(
        self, server: Server, person: Person, run_id: str, tmp_path: Path, first: str, second: str
    ) -> tuple[list[str], str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            confirmations = SaysoConfirmations(client)
            more = (second, "call_2")
            runner = await session_runner(confirmations, run_id, tmp_path, first, more)
            paused = await collect(runner, run_id, say("deploy it"))
            await asked_then_dropped(confirmations, paused, run_id, person, second)
            await asyncio.to_thread(person.answer, first, value="Allow")
            withdrawn = await confirmations.withdraw(run_id)
            events = await confirmations.run(runner, user_id=scripted.USER, session_id=run_id)
            return withdrawn, scripted.last_text(events)

    def test_an_allow_for_one_call_never_lets_other_arguments_through(
        self, server, person, tmp_path
    ):
        where, sid = target(), f"run-{uuid.uuid4()}"
        scenario.answered(person, where, self.running(server, sid, tmp_path, where), value="Allow")
        assert runs_of(tmp_path / "runs") == [where]

        # The same call id in the same session, now for somewhere else.
        forged, again = asyncio.run(self.approved_unasked(server, sid, tmp_path, "everywhere"))
        assert "asked for with other arguments" in forged
        assert "asked for with other arguments" in again
        assert runs_of(tmp_path / "runs") == [where]
