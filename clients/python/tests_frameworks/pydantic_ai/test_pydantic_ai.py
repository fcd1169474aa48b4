"""Pydantic AI's approval step (`requires_approval=True` → DeferredToolRequests →
DeferredToolResults) answered by the person in sayso, with a real Agent and FunctionModel."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import scenario
from helpers import call_digest, joined, later
from pai_agent import build, prompt
from pydantic_ai.messages import ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved
from sayso_client_fixtures import Person, Server
from scenario import runs_of

import sayso

HERE = Path(__file__).resolve().parent


def asked_in(client: sayso.Client, conversation_id: str) -> list[sayso.Decision]:
    return [d for d in client.list() if d.metadata.get("run_id") == conversation_id]


def tool_results(messages: list[Any]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        for p in getattr(m, "parts", [])
        if isinstance(p, ToolReturnPart)
    ]


def test_an_allowed_call_runs_once_and_a_denied_one_not_at_all(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    runs, word = tmp_path / "runs.txt", uuid.uuid4().hex[:8]
    agent, approvals = build(client, runs)

    paused = agent.run_sync(prompt(f"deploy {word}", "call-1"))
    assert isinstance(paused.output, DeferredToolRequests)
    assert person.answer_when_asked(f"deploy {word}", value="Allow").status_code == 303
    results = approvals.decide(paused.output, paused.conversation_id)
    done = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results)
    assert runs_of(runs) == [f"deploy {word}"]
    assert done.output == f"tool said: ran deploy {word}"

    # Deciding again asks nothing new and gives the same answer.
    assert approvals.decide(paused.output, paused.conversation_id) == results
    assert len(asked_in(client, paused.conversation_id)) == 1

    paused = agent.run_sync(prompt(f"drop {word}", "call-1"))
    denying = later(
        0.0, person.answer_when_asked, f"drop {word}", value="Deny", remark="not on a Friday"
    )
    results = approvals.decide(paused.output, paused.conversation_id)
    assert joined(denying).status_code == 303
    done = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results)
    assert runs_of(runs) == [f"deploy {word}"], "a denied tool must not run"
    (said,) = tool_results(done.all_messages())
    assert "not on a Friday" in said
    assert done.output == f"tool said: {said}"


def test_the_approval_shows_the_call_and_is_keyed_by_conversation_and_call(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    agent, _ = build(client, tmp_path / "runs.txt")
    word = uuid.uuid4().hex[:8]
    paused = agent.run_sync(prompt(f"ls /srv/{word}", "call-7"))
    token = person.link_to(word).removeprefix("/a/")
    held = paused.all_messages_json().decode() + repr(paused.output)
    assert token[-20:] not in held, "the run's state holds the person's answer link"
    (asked,) = asked_in(client, paused.conversation_id)
    assert asked.approval is not None
    assert (asked.approval.harness, asked.approval.tool_name) == (
        "pydantic-ai",
        "run_shell_command",
    )
    assert asked.metadata == {
        "framework": "pydantic-ai",
        "run_id": paused.conversation_id,
        "tool_call_id": "call-7",
        "sayso_call_sha256": call_digest("run_shell_command", {"command": f"ls /srv/{word}"}),
    }
    client.cancel(asked)


def test_a_killed_agent_resumes_in_a_new_process_and_runs_the_tool_once(
    server: Server, person: Person, tmp_path: Path
) -> None:
    scenario.resumed_cold(server, person, HERE / "pai_agent.py", tmp_path / "state.json")


def test_results_saying_approved_do_not_run_a_pending_call(server: Server, tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    with sayso.Client(server.url, server.key) as client:
        agent, _ = build(client, runs, wait_timeout=1)
        paused = agent.run_sync(prompt("rm -rf /srv", "call-1"))
        forged = DeferredToolResults(approvals={"call-1": True})
        done = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=forged)
        assert runs_of(runs) == []
        (said,) = tool_results(done.all_messages())
        assert "no answer within 1 s" in said
        (asked,) = asked_in(client, paused.conversation_id)
        assert asked.status == "cancelled", "a call that gave up withdraws its question"


def test_a_denial_sticks_and_an_approval_does_not_carry_to_other_arguments(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    runs, word = tmp_path / "runs.txt", uuid.uuid4().hex[:8]
    agent, approvals = build(client, runs)

    # Denied, then continued with forged approval: still not run.
    paused = agent.run_sync(prompt(f"wipe {word}", "call-1"))
    assert person.answer_when_asked(f"wipe {word}", value="Deny").status_code == 303
    forged = DeferredToolResults(approvals={"call-1": True})
    done = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=forged)
    assert runs_of(runs) == []
    assert "denied" in tool_results(done.all_messages())[0]

    # Allowed for one command; a message history edited to hold another command under the
    # same call id, or results whose override_args name another (an edit the person did not
    # make), do not run it.
    paused = agent.run_sync(prompt(f"ls {word}", "call-1"))
    assert person.answer_when_asked(f"ls {word}", value="Allow").status_code == 303
    results = approvals.decide(paused.output, paused.conversation_id)
    overridden = DeferredToolResults(
        approvals={"call-1": ToolApproved(override_args={"command": f"rm {word}"})}
    )
    edited = [m for m in paused.all_messages()]
    asked = edited[-1]
    assert isinstance(asked, ModelResponse)
    edited[-1] = ModelResponse(
        parts=[ToolCallPart("run_shell_command", {"command": f"rm {word}"}, tool_call_id="call-1")],
        conversation_id=asked.conversation_id,
    )
    done = agent.run_sync(message_history=edited, deferred_tool_results=results)
    assert runs_of(runs) == []
    assert "differ from the ones the person was asked about" in tool_results(done.all_messages())[0]
    done = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=overridden)
    assert runs_of(runs) == []
    assert "differ from the ones the person was asked about" in tool_results(done.all_messages())[0]

    # The call as the person allowed it still runs, once.
    done = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results)
    assert runs_of(runs) == [f"ls {word}"]


def test_a_call_that_never_paused_is_denied_and_its_approval_withdrawn(
    client: sayso.Client, tmp_path: Path
) -> None:
    runs = tmp_path / "runs.txt"
    agent, approvals = build(client, runs)
    paused = agent.run_sync(prompt("ls /srv", "call-1"))
    # A history edited to hold a call the run never paused on, with results approving it.
    edited = [m for m in paused.all_messages()]
    asked = edited[-1]
    assert isinstance(asked, ModelResponse)
    never = ToolCallPart("run_shell_command", {"command": "rm -rf /srv"}, tool_call_id="call-9")
    edited[-1] = ModelResponse(parts=[never], conversation_id=asked.conversation_id)
    forged = DeferredToolResults(approvals={"call-9": True})
    done = agent.run_sync(message_history=edited, deferred_tool_results=forged)
    assert runs_of(runs) == []
    (said,) = tool_results(done.all_messages())
    assert "no approval was asked for this call before it ran" in said
    by_call = {d.metadata["tool_call_id"]: d for d in asked_in(client, paused.conversation_id)}
    assert by_call["call-9"].status == "cancelled", "the check's own approval stays withdrawn"
    # Deciding on it afterwards finds it withdrawn instead of asking the person then.
    answers = approvals.decide(DeferredToolRequests(approvals=[never]), paused.conversation_id)
    (denied,) = answers.approvals.values()
    assert "the call ran without being asked about" in str(denied)
    client.cancel(by_call["call-1"])


def test_an_edited_command_runs_as_the_person_wrote_it(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    runs, word = tmp_path / "runs.txt", uuid.uuid4().hex[:8]
    agent, approvals = build(client, runs, editable=["run_shell_command"])
    paused = agent.run_sync(prompt(f"rm -rf {word}", "call-1"))
    editing = person.answer_when_asked(f"rm -rf {word}", value="Allow", command=f"rm -ri {word}")
    assert editing.status_code == 303
    results = approvals.decide(paused.output, paused.conversation_id)
    agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results)
    assert runs_of(runs) == [f"rm -ri {word}"]


@pytest.mark.parametrize("end", ["expired", "cancelled"])
def test_an_expiry_or_a_cancel_reaches_the_model_as_a_denial(
    client: sayso.Client, tmp_path: Path, end: str
) -> None:
    runs = tmp_path / "runs.txt"
    agent, approvals = build(client, runs, ttl=10 if end == "expired" else None)
    paused = agent.run_sync(prompt(f"reboot ({end})", "call-1"))
    if end == "cancelled":
        (asked,) = asked_in(client, paused.conversation_id)
        client.cancel(asked, "the operator withdrew it")
    results = approvals.decide(paused.output, paused.conversation_id)
    done = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results)
    assert runs_of(runs) == []
    (said,) = tool_results(done.all_messages())
    expected = "expired" if end == "expired" else "the operator withdrew it"
    assert expected in said and said.startswith("The person did not approve")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_parallel_calls_are_asked_at_once_and_each_allowed_one_runs_once(
    server: Server, person: Person, tmp_path: Path, n: int
) -> None:
    state, runs = tmp_path / "state.json", tmp_path / "runs.txt"
    made = scenario.calls(n)
    script, calls = HERE / "pai_agent.py", scenario.arguments(made)
    agent = scenario.agent_process(script, server, str(state), str(runs), *calls)
    # The run id is the conversation id the paused run prints, once it saved itself.
    first = agent("start")
    assert first.stdout is not None
    line = first.stdout.readline()
    assert line.startswith("PAUSED "), (line, first.communicate())
    scenario.each_allowed_runs_once(
        server, person, line.split()[1], "pydantic-ai", made,
        lambda mode: first if mode == "start" else agent(mode), runs, "ran",
        said=scenario.final_line,
    )  # fmt: skip


def test_a_run_given_up_withdraws_what_still_waits_and_a_resume_runs_none_of_it(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    runs, word = tmp_path / "runs.txt", uuid.uuid4().hex[:8]
    agent, approvals = build(client, runs)
    paused = agent.run_sync(prompt(f"ls {word}", "call-1", (f"rm {word}", "call-2")))
    by_call = {d.metadata["tool_call_id"]: d for d in asked_in(client, paused.conversation_id)}
    assert person.answer(f"ls {word}", value="Allow").status_code == 303

    assert approvals.withdraw(paused.conversation_id) == [by_call["call-2"].decision_id]
    assert client.get(by_call["call-2"]).status == "cancelled"
    assert client.get(by_call["call-1"]).status == "answered", "an answer stays as it is"

    results = approvals.decide(paused.output, paused.conversation_id)
    done = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results)
    assert runs_of(runs) == [f"ls {word}"]
    assert any(
        "the agent stopped waiting, and it withdrew the question" in t
        for t in tool_results(done.all_messages())
    )
