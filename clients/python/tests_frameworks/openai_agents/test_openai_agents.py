"""The OpenAI Agents SDK (pinned in clients/python/frameworks/openai_agents.txt) with its tool
approvals answered by a person through a real ``sayso serve``. The model is the scripted one of
scripted.py: offline, no API key."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import scenario
import scripted
from agents import Runner, RunState
from helpers import joined, later
from scenario import asked_for, target

import sayso
from sayso.openai_agents import SaysoApprovals

HERE = Path(__file__).resolve().parent


def agent_for(
    approvals: SaysoApprovals, tmp_path: Path, where: str, call_id: str = "call_1"
) -> Any:
    return scripted.deploy_agent(tmp_path / "runs", where, call_id, approvals.gate)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def run_with_person(server: Any, run_id: str, tmp_path: Path, where: str, **kw: Any) -> Any:
    async with sayso.AsyncClient(server.url, server.key) as client:
        approvals = SaysoApprovals(client, run_id, **kw)
        agent, config = agent_for(approvals, tmp_path, where)
        return await approvals.run(agent, "deploy it", run_config=config)


def test_an_allowed_call_runs_once_and_the_page_shows_it(server, person, tmp_path):
    where = target()
    answered = later(0.2, person.answer_when_asked, where, value="Allow")
    result = run(run_with_person(server, "run-allow", tmp_path, where))
    assert joined(answered).status_code == 303
    assert scripted.runs(tmp_path / "runs") == 1
    assert result.final_output == f"the tool said: deployed to {where}"
    # The approval block: what the person's page showed, and who asked.
    d = asked_for(server, "run-allow")[0]
    assert d.approval is not None
    assert (d.approval.harness, d.approval.tool_name) == ("openai-agents", "deploy")
    assert any(where in page for page in person.seen)


def test_a_denied_call_does_not_run_and_the_model_reads_the_reason(server, person, tmp_path):
    where = target()
    answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="not on a Friday")
    result = run(run_with_person(server, f"run-{uuid.uuid4()}", tmp_path, where))
    assert joined(answered).status_code == 303
    assert scripted.runs(tmp_path / "runs") == 0
    assert "denied by the person: not on a Friday" in result.final_output


def test_a_denial_sticks_when_the_run_is_tried_again(server, person, tmp_path):
    where, run_id = target(), f"run-{uuid.uuid4()}"
    answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="no")
    run(run_with_person(server, run_id, tmp_path, where))
    joined(answered)
    # The same run and call again: sayso already holds the answer, nobody is asked twice.
    again = run(run_with_person(server, run_id, tmp_path, where, timeout=5))
    assert "denied by the person: no" in again.final_output
    assert scripted.runs(tmp_path / "runs") == 0
    asked = asked_for(server, run_id)
    assert len(asked) == 1


def test_a_killed_agent_resumes_by_run_id_and_runs_the_tool_once(server, person, tmp_path):
    where, run_id = target(), f"run-{uuid.uuid4()}"
    agent = scenario.agent_process(
        HERE / "agent_process.py", server, run_id, tmp_path, where, "call_deploy_1"
    )
    # Answered while no agent runs at all.
    out, err = scenario.killed_then_resumed(person, where, agent, (tmp_path / "state.json").exists)
    assert out.strip() == f"the tool said: deployed to {where}"
    assert scripted.runs(tmp_path / "runs") == 1
    asked = asked_for(server, run_id)
    assert len(asked) == 1, "the resumed run asked a second time"
    # What the agent holds and prints carries no link that answers, nor the decision's page.
    held = (tmp_path / "state.json").read_text() + out + err
    assert not [link for link in scenario.LINKS if link in held]


async def paused_state(client: sayso.AsyncClient, run_id: str, tmp_path: Path, where: str) -> Any:
    """A run paused on its gated call, as the agent would save it, and the approval asked."""
    approvals = SaysoApprovals(client, run_id, timeout=0.5)
    agent, config = agent_for(approvals, tmp_path, where)
    result = await Runner.run(agent, "deploy it", run_config=config)
    assert [i.name for i in result.interruptions] == ["deploy"]
    return approvals, agent, config, result.to_state().to_json()


async def asked_then_dropped(
    approvals: SaysoApprovals, agent: Any, config: Any, person: Any, where: str
) -> dict[str, Any]:
    """The state an agent saved before it died waiting, with the approval asked and pending."""
    saved: list[dict[str, Any]] = []
    waiting = asyncio.create_task(
        approvals.run(agent, "deploy it", save=saved.append, run_config=config)
    )
    deadline = time.monotonic() + 30
    while not saved or where not in await asyncio.to_thread(person.feed):
        assert time.monotonic() < deadline, "the agent never asked"
        await asyncio.sleep(0.1)
    waiting.cancel()
    return saved[-1]


def approved_in(saved: dict[str, Any]) -> dict[str, Any]:
    """The serialized state edited to say the pending call was approved, as an agent could."""
    forged = json.loads(json.dumps(saved))
    forged["context"]["approvals"] = {"deploy": {"approved": ["call_1"], "rejected": []}}
    return forged


def test_a_state_edited_to_say_approved_runs_nothing(server, person, tmp_path):
    where, run_id = target(), f"run-{uuid.uuid4()}"

    async def go() -> tuple[Any, Any]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            approvals = SaysoApprovals(client, run_id)
            agent, config = agent_for(approvals, tmp_path, where)
            saved = [await asked_then_dropped(approvals, agent, config, person, where)]
            # The saved state edited to say "approved", run straight through the SDK past the
            # adapter's resolve: the gated tool asks sayso itself, finds no answer, runs nothing.
            forged = await RunState.from_json(agent, approved_in(saved[-1]))
            straight = await Runner.run(agent, forged, run_config=config)
            assert scripted.runs(tmp_path / "runs") == 0
            # Through the adapter, with the person denying: the edit counts for nothing.
            answered = later(0.2, person.answer_when_asked, where, value="Deny", remark="forged")
            again = await RunState.from_json(agent, approved_in(saved[-1]))
            result = await approvals.run(agent, again, run_config=config)
            joined(answered)
            return straight, result

    straight, result = run(go())
    assert "the person has not answered this approval yet" in straight.final_output
    assert "denied by the person: forged" in result.final_output
    assert scripted.runs(tmp_path / "runs") == 0


def test_a_call_never_asked_about_is_denied_for_good(server, tmp_path):
    where, run_id = target(), f"run-{uuid.uuid4()}"

    async def go() -> tuple[Any, Any]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            approvals, agent, config, saved = await paused_state(client, run_id, tmp_path, where)
            forged = await RunState.from_json(agent, approved_in(saved))
            straight = await Runner.run(agent, forged, run_config=config)
            # Resumed through the adapter afterwards: the withdrawn approval stays withdrawn.
            again = await RunState.from_json(agent, approved_in(saved))
            return straight, await approvals.run(agent, again, run_config=config)

    straight, resumed = run(go())
    assert "no approval was asked for this call before it ran" in straight.final_output
    assert "the call ran without being asked about" in resumed.final_output
    assert scripted.runs(tmp_path / "runs") == 0
    (asked,) = asked_for(server, run_id)
    assert asked.status == "cancelled", "the check's own approval is withdrawn, not left waiting"


def test_an_allow_for_one_call_never_lets_other_arguments_through(server, person, tmp_path):
    where, run_id = target(), f"run-{uuid.uuid4()}"

    async def go() -> tuple[Any, Any]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            approvals = SaysoApprovals(client, run_id)
            agent, config = agent_for(approvals, tmp_path, where)
            saved = await asked_then_dropped(approvals, agent, config, person, where)
            await asyncio.to_thread(person.answer, where, value="Allow")
            # The state edited so that the allowed call deploys somewhere else, with the SDK's
            # own record of the call's fingerprint removed so the SDK does not notice.
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

    straight, resumed = run(go())
    assert "asked for with other arguments" in straight.final_output
    assert "asked for with other arguments" in resumed.final_output
    assert scripted.runs(tmp_path / "runs") == 0


@pytest.mark.parametrize("ending", ["timeout", "cancel", "expiry"])
def test_no_answer_reaches_the_model_as_a_denial_with_its_reason(server, tmp_path, ending):
    where, run_id = target(), f"run-{uuid.uuid4()}"
    said = scenario.unanswered(
        server, run_id, ending,
        lambda **kw: run(run_with_person(server, run_id, tmp_path, where, **kw)).final_output,
    )  # fmt: skip
    assert scripted.runs(tmp_path / "runs") == 0
    timed_out = "not allowed: no answer within 1 s, the question withdrawn"
    ended = {**scenario.ENDED, "timeout": timed_out}
    assert ended[ending] in said


def test_import_sayso_needs_no_framework():
    scenario.loads_no_framework("agents")


def test_a_denial_sticks_across_a_server_restart(own_server, tmp_path):
    where, run_id = target(), f"run-{uuid.uuid4()}"
    scenario.denied_then_restarted(
        own_server, where, lambda: run(run_with_person(own_server, run_id, tmp_path, where))
    )
    again = run(run_with_person(own_server, run_id, tmp_path, where, timeout=5))
    assert "denied by the person: no" in again.final_output
    assert scripted.runs(tmp_path / "runs") == 0


@pytest.mark.parametrize("n", [1, 2, 3])
def test_parallel_calls_are_asked_at_once_and_each_allowed_one_runs_once(
    server, person, tmp_path, n
):
    def saved(call: scenario.Call) -> None:
        # The state a cold resume needs is saved before the run waits.
        deadline = time.monotonic() + 30
        while not (tmp_path / "state.json").exists():
            assert time.monotonic() < deadline, "the run saved no state"
            time.sleep(0.1)
        time.sleep(0.3)

    scenario.each_allowed_runs_once_in_processes(
        HERE / "agent_process.py", server, person, f"run-{uuid.uuid4()}", tmp_path,
        "openai-agents", n, saved,
    )  # fmt: skip


def test_a_run_given_up_withdraws_what_still_waits_and_a_resume_runs_none_of_it(
    server, person, tmp_path
):
    run_id, word = f"run-{uuid.uuid4()}", uuid.uuid4().hex[:8]
    first, second = f"a-{word}", f"b-{word}"

    async def go() -> tuple[list[str], Any]:
        async with sayso.AsyncClient(server.url, server.key) as client:
            approvals = SaysoApprovals(client, run_id)
            agent, config = scripted.deploy_agent(
                tmp_path / "runs", first, "call_1", approvals.gate, (second, "call_2")
            )
            saved = await asked_then_dropped(approvals, agent, config, person, second)
            await asyncio.to_thread(person.answer, first, value="Allow")
            withdrawn = await approvals.withdraw()
            state = await RunState.from_json(agent, saved)
            return withdrawn, await approvals.run(agent, state, run_config=config)

    withdrawn, result = run(go())
    by_call = {d.metadata["tool_call_id"]: d for d in asked_for(server, run_id)}
    assert withdrawn == [by_call["call_2"].decision_id]
    assert by_call["call_2"].status == "cancelled"
    assert by_call["call_1"].status == "answered", "an answer stays as it is"
    assert scripted.ran(tmp_path / "runs") == [first]
    assert "the agent stopped waiting, and it withdrew the question" in result.final_output
