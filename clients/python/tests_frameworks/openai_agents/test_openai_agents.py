"""The OpenAI Agents SDK (pinned in clients/python/frameworks/openai_agents.txt) with its tool
approvals answered by a person through a real ``sayso serve``. The model is the scripted one of
scripted.py: offline, no API key. The tests every deploying agent shares are
``scenario.DeploySuite``'s."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path
from typing import Any

import scenario
import scripted
from agents import Runner, RunState
from helpers import joined, later
from sayso_client_fixtures import Person, Server
from scenario import runs_of, target

import sayso
from sayso.openai_agents import SaysoApprovals


def agent_for(approvals: SaysoApprovals, tmp_path: Path, where: str, *more: tuple[str, str]) -> Any:
    """The agent deploying to ``where`` (and the ``more`` calls) and its run config."""
    return scripted.deploy_agent(tmp_path / "runs", where, "call_1", approvals.gate, *more)


async def paused_state(client: sayso.AsyncClient, run_id: str, tmp_path: Path, where: str) -> Any:
    """A run paused on its gated call, as the agent would save it, and the approval asked."""
    approvals = SaysoApprovals(client, run_id, timeout=0.5)
    agent, config = agent_for(approvals, tmp_path, where)
    result = await Runner.run(agent, "deploy it", run_config=config)
    assert [i.name for i in result.interruptions] == ["deploy"]
    return approvals, agent, config, result.to_state().to_json()


async def dropped(
    client: sayso.AsyncClient,
    run_id: str,
    tmp_path: Path,
    person: Person,
    where: str,
    *more: tuple[str, str],
) -> tuple[SaysoApprovals, Any, Any, dict[str, Any]]:
    """A run deploying to ``where`` (and the ``more`` calls) that asked the person about all of
    them and died waiting: the adapter, the agent, its run config and the state it saved."""
    approvals = SaysoApprovals(client, run_id)
    agent, config = agent_for(approvals, tmp_path, where, *more)
    saved: list[dict[str, Any]] = []
    waiting = asyncio.create_task(
        approvals.run(agent, "deploy it", save=saved.append, run_config=config)
    )
    asked = [where, *(t for t, _ in more)]
    deadline = time.monotonic() + 30
    while True:
        feed = await asyncio.to_thread(person.feed)
        if saved and all(t in feed for t in asked):
            break
        assert time.monotonic() < deadline, "the agent never asked"
        await asyncio.sleep(0.1)
    waiting.cancel()
    return approvals, agent, config, saved[-1]


def approved_in(saved: dict[str, Any]) -> dict[str, Any]:
    """The serialized state edited to say the pending call was approved, as an agent could."""
    forged = json.loads(json.dumps(saved))
    forged["context"]["approvals"] = {"deploy": {"approved": ["call_1"], "rejected": []}}
    return forged


class TestOpenAIAgents(scenario.DeploySuite):
    harness = "openai-agents"
    framework = "agents"
    timed_out = "not allowed: no answer within 1 s, the question withdrawn"

    def kept(self, tmp_path: Path) -> str:
        state = tmp_path / "state.json"
        return state.read_text() if state.exists() else ""

    async def run(
        self, server: Server, run_id: str, tmp_path: Path, where: str, **settings: Any
    ) -> str:
        async with sayso.AsyncClient(server.url, server.key) as client:
            approvals = SaysoApprovals(client, run_id, **settings)
            agent, config = agent_for(approvals, tmp_path, where)
            return (await approvals.run(agent, "deploy it", run_config=config)).final_output

    async def approved_by_itself(
        self, server: Server, person: Person, run_id: str, tmp_path: Path, where: str
    ) -> tuple[str, str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            approvals, agent, config, saved = await dropped(client, run_id, tmp_path, person, where)
            # The saved state edited to say "approved", run straight through the SDK past the
            # adapter's resolve: the gated tool asks sayso itself, finds no answer, runs nothing.
            forged = await RunState.from_json(agent, approved_in(saved))
            straight = await Runner.run(agent, forged, run_config=config)
            assert runs_of(tmp_path / "runs") == []
            # Through the adapter, with the person denying: the edit counts for nothing.
            answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="forged")
            again = await RunState.from_json(agent, approved_in(saved))
            result = await approvals.run(agent, again, run_config=config)
            joined(answered)
            return straight.final_output, result.final_output

    async def approved_unasked(
        self, server: Server, run_id: str, tmp_path: Path, where: str
    ) -> tuple[str, str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            approvals, agent, config, saved = await paused_state(client, run_id, tmp_path, where)
            forged = await RunState.from_json(agent, approved_in(saved))
            straight = await Runner.run(agent, forged, run_config=config)
            # Resumed through the adapter afterwards: the withdrawn approval stays withdrawn.
            again = await RunState.from_json(agent, approved_in(saved))
            resumed = await approvals.run(agent, again, run_config=config)
            return straight.final_output, resumed.final_output

    async def given_up(
        self, server: Server, person: Person, run_id: str, tmp_path: Path, first: str, second: str
    ) -> tuple[list[str], str]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            more = (second, "call_2")
            approvals, agent, config, saved = await dropped(
                client, run_id, tmp_path, person, first, more
            )
            await asyncio.to_thread(person.answer, first, value="Allow")
            withdrawn = await approvals.withdraw()
            state = await RunState.from_json(agent, saved)
            return withdrawn, (await approvals.run(agent, state, run_config=config)).final_output

    def test_an_allow_for_one_call_never_lets_other_arguments_through(
        self, server, person, tmp_path
    ):
        where, run_id = target(), f"run-{uuid.uuid4()}"

        async def go() -> tuple[Any, Any]:
            async with sayso.AsyncClient(server.url, server.key) as client:
                approvals, agent, config, saved = await dropped(
                    client, run_id, tmp_path, person, where
                )
                await asyncio.to_thread(person.answer, where, value="Allow")
                # The state edited so that the allowed call deploys somewhere else, with the
                # SDK's own record of the call's fingerprint removed so the SDK does not notice.
                forged = json.loads(json.dumps(approved_in(saved)).replace(where, "everywhere"))
                forged["context"]["tool_invocations"] = {}
                # The SDK itself asks again for a call it has no record of; the agent's own code
                # approving it in the state gets past the SDK, not past the gated tool.
                state = await RunState.from_json(agent, forged)
                for item in state.get_interruptions():
                    state.approve(item)
                straight = await Runner.run(agent, state, run_config=config)
                resumed = await approvals.run(
                    agent, await RunState.from_json(agent, forged), run_config=config
                )
                return straight, resumed

        straight, resumed = asyncio.run(go())
        assert "asked for with other arguments" in straight.final_output
        assert "asked for with other arguments" in resumed.final_output
        assert runs_of(tmp_path / "runs") == []
