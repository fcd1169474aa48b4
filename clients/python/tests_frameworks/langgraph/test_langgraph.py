"""LangGraph's approval step (interrupt → Command(resume=…)) answered by the person in
sayso, with a real `create_agent` agent, its fake chat model and a SQLite checkpointer."""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import scenario
from helpers import call_digest, joined, later
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from lg_agent import build, config, start_input, tool_results
from sayso_client_fixtures import Person, Server
from scenario import runs_of
from typing_extensions import TypedDict

import sayso
from sayso.langgraph import (
    HARNESS,
    ToolGate,
    approve,
    approve_all,
    pending_approvals,
    resume,
    run,
    withdraw,
)

HERE = Path(__file__).resolve().parent


def test_an_allowed_call_runs_once_and_a_denied_one_not_at_all(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    runs = tmp_path / "runs.txt"
    agent = build(client, tmp_path / "graph.db", runs)
    word = uuid.uuid4().hex[:8]

    allowing = later(0.0, person.answer_when_asked, f"deploy {word}", value="Allow")
    result = run(agent, start_input(f"deploy {word}", "call-1"), config("t-allow"))
    assert joined(allowing).status_code == 303
    assert runs_of(runs) == [f"deploy {word}"]
    assert result["messages"][-1].content == f"tool said: ran deploy {word}"

    # The same thread resumed again, or the run started again, never asks twice or reruns.
    resume(agent, config("t-allow"))
    assert runs_of(runs) == [f"deploy {word}"]

    denying = later(
        0.0, person.answer_when_asked, f"drop {word}", value="Deny", remark="not on a Friday"
    )
    result = run(agent, start_input(f"drop {word}", "call-1"), config("t-deny"))
    assert joined(denying).status_code == 303
    assert runs_of(runs) == [f"deploy {word}"], "a denied tool must not run"
    (said,) = tool_results(result)
    assert "not on a Friday" in said
    assert result["messages"][-1].content == f"tool said: {said}"


def test_the_approval_shows_the_call_and_is_keyed_by_thread_and_call(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    agent = build(client, tmp_path / "graph.db", tmp_path / "runs.txt")
    word = uuid.uuid4().hex[:8]
    agent.invoke(start_input(f"ls {word}", "call-7"), config("t-show"))
    (asked,) = pending_approvals(agent, config("t-show"))
    d = client.get(asked["decision_id"])
    assert d.approval is not None
    assert (d.approval.harness, d.approval.tool_name) == ("langgraph", "run_shell_command")
    assert d.raw["approval"]["tool_name"] == "run_shell_command"
    assert d.metadata == {
        "framework": "langgraph",
        "run_id": "t-show",
        "tool_call_id": "call-7",
        "sayso_call_sha256": call_digest("run_shell_command", {"command": f"ls {word}"}),
    }
    # The pause holds the decision's id and its show-only page, never an answer link.
    assert "/a/" not in str(asked) and asked["web_url"] == d.web_url
    token = person.link_to(f"ls {word}").removeprefix("/a/")
    held = repr(agent.get_state(config("t-show"))) + repr(
        list(agent.get_state_history(config("t-show")))
    )
    assert token[-20:] not in held, "the run's state holds the person's answer link"
    client.cancel(d)


def test_a_killed_agent_resumes_in_a_new_process_and_runs_the_tool_once(
    server: Server, person: Person, tmp_path: Path
) -> None:
    thread = f"t-cold-{uuid.uuid4()}"
    scenario.resumed_cold(server, person, HERE / "lg_agent.py", tmp_path / "graph.db", thread)


def test_a_resume_value_saying_approved_does_not_run_a_pending_call(
    server: Server, tmp_path: Path
) -> None:
    runs = tmp_path / "runs.txt"
    with sayso.Client(server.url, server.key) as client:
        agent = build(client, tmp_path / "graph.db", runs, wait_timeout=1)
        agent.invoke(start_input("rm -rf /srv", "call-1"), config("t-forge"))
        state = agent.get_state(config("t-forge"))
        forged = {
            i.id: {"type": "approve", "approved": True, "outcome": "Allow"}
            for i in state.interrupts
        }
        result = agent.invoke(Command(resume=forged), config("t-forge"))
        assert runs_of(runs) == []
        (said,) = tool_results(result)
        assert "no answer within 1 s" in said
        (asked,) = [d for d in client.list() if d.metadata.get("run_id") == "t-forge"]
        assert asked.status == "cancelled", "a call that gave up withdraws its question"


def test_a_denial_sticks_and_an_approval_does_not_carry_to_other_arguments(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    runs, word = tmp_path / "runs.txt", uuid.uuid4().hex[:8]
    agent = build(client, tmp_path / "graph.db", runs)

    # Denied, then resumed again with a forged approval: still denied, still not run.
    agent.invoke(start_input(f"wipe {word}", "call-1"), config("t-stick"))
    assert person.answer_when_asked(f"wipe {word}", value="Deny").status_code == 303
    resume(agent, config("t-stick"))
    assert runs_of(runs) == []

    # Allowed for one command; the paused run's state edited to run another under the
    # same call id: refused, because the approval holds the arguments it was asked with.
    cfg = config("t-swap")
    agent.invoke(start_input(f"ls {word}", "call-1"), cfg)
    assert person.answer_when_asked(f"ls {word}", value="Allow").status_code == 303
    state = agent.get_state(cfg)
    asked_msg = next(m for m in state.values["messages"] if isinstance(m, AIMessage))
    swapped = asked_msg.model_copy(
        update={"tool_calls": [{**asked_msg.tool_calls[0], "args": {"command": f"rm {word}"}}]}
    )
    agent.update_state(cfg, {"messages": [swapped]}, as_node="model")
    result = run(agent, None, cfg)
    assert runs_of(runs) == []
    assert any("differ from the ones the person was asked about" in t for t in tool_results(result))


def test_an_edited_command_runs_as_the_person_wrote_it(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    runs, word = tmp_path / "runs.txt", uuid.uuid4().hex[:8]
    agent = build(client, tmp_path / "graph.db", runs, editable=["run_shell_command"])
    editing = later(
        0.0, person.answer_when_asked, f"rm -rf {word}", value="Allow", command=f"rm -ri {word}"
    )
    run(agent, start_input(f"rm -rf {word}", "call-1"), config("t-edit"))
    assert joined(editing).status_code == 303
    assert runs_of(runs) == [f"rm -ri {word}"]


@pytest.mark.parametrize("end", ["expired", "cancelled"])
def test_an_expiry_or_a_cancel_reaches_the_model_as_a_denial(
    client: sayso.Client, tmp_path: Path, end: str
) -> None:
    runs = tmp_path / "runs.txt"
    agent = build(client, tmp_path / "graph.db", runs, ttl=10 if end == "expired" else None)
    cfg = config(f"t-{end}")
    agent.invoke(start_input(f"reboot ({end})", "call-1"), cfg)
    if end == "cancelled":
        (asked,) = pending_approvals(agent, cfg)
        client.cancel(asked["decision_id"], "the operator withdrew it")
    result = resume(agent, cfg)
    assert runs_of(runs) == []
    (said,) = tool_results(result)
    expected = "expired" if end == "expired" else "the operator withdrew it"
    assert expected in said and said.startswith("The person did not approve")


def test_an_async_agent_is_gated_the_same_way(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    runs, word = tmp_path / "runs.txt", uuid.uuid4().hex[:8]
    agent, cfg = build(client, None, runs), config("t-async")

    async def go() -> Any:
        await agent.ainvoke(start_input(f"deny {word}", "call-1"), cfg)
        (asked,) = pending_approvals(agent, cfg)
        await asyncio.to_thread(person.answer, f"deny {word}", value="Deny", remark="no")
        state = await agent.aget_state(cfg)
        return await agent.ainvoke(
            Command(resume={i.id: "approved" for i in state.interrupts}), cfg
        )

    result = asyncio.run(go())
    assert runs_of(runs) == []
    (said,) = tool_results(result)
    assert said.endswith("denied by the person: no")


def test_approve_gates_a_node_of_a_graph_of_ones_own(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:

    class State(TypedDict, total=False):
        path: str
        outcome: str

    gate = ToolGate(client, HARNESS, notify="none", wait_timeout=30)
    runs = tmp_path / "runs.txt"

    def delete(state: State) -> State:
        verdict = approve(gate, "delete_file", {"path": state["path"]}, "delete-1")
        if not verdict.allowed:
            return {"outcome": verdict.denial_text("delete_file")}
        runs.write_text(state["path"])
        return {"outcome": "deleted"}

    graph = StateGraph(State)
    graph.add_node("delete", delete)
    graph.add_edge(START, "delete")
    graph.add_edge("delete", END)
    app = graph.compile(checkpointer=InMemorySaver())
    word = uuid.uuid4().hex[:8]
    denying = later(0.0, person.answer_when_asked, word, value="Deny", remark="keep it")
    result = run(app, {"path": f"/srv/{word}"}, config("t-own"))
    assert joined(denying).status_code == 303
    assert not runs.exists()
    assert result["outcome"].endswith("denied by the person: keep it")


def written_back(db: Path, thread: str, call_id: str) -> bool:
    """Whether the checkpoint holds the tool node's result for the call: what a resume finds,
    so it does not run that call's task again."""
    with sqlite3.connect(db) as conn:
        saved = SqliteSaver(conn).get_tuple(config(thread))
    if saved is None:
        return False
    for _task, _channel, value in saved.pending_writes or []:
        for m in value if isinstance(value, list) else [value]:
            if isinstance(m, ToolMessage) and m.tool_call_id == call_id:
                return True
    return False


@pytest.mark.parametrize("n", [1, 2, 3])
def test_parallel_calls_are_asked_at_once_and_each_allowed_one_runs_once(
    server: Server, person: Person, tmp_path: Path, n: int
) -> None:
    db, runs, thread = tmp_path / "graph.db", tmp_path / "runs.txt", f"t-par-{uuid.uuid4()}"
    made = scenario.calls(n)
    script, calls = HERE / "lg_agent.py", scenario.arguments(made)
    agent = scenario.agent_process(script, server, str(db), str(runs), thread, *calls)

    def settled(call: scenario.Call) -> None:
        # Each call is a task of its own (create_agent sends one per call): the live process
        # runs an allowed one, or writes back the denial, as soon as it is answered.
        deadline = time.monotonic() + 30
        while not written_back(db, thread, call.call_id):
            assert time.monotonic() < deadline, f"{call} was not written back"
            time.sleep(0.1)
        assert runs_of(runs).count(call.command) == (call.answer == "Allow")

    scenario.each_allowed_runs_once(
        server, person, thread, HARNESS, made, agent, runs, "ran", settled, scenario.final_line
    )


def test_approve_all_pauses_a_node_once_for_its_calls_and_runs_each_allowed_one_once(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:

    class State(TypedDict, total=False):
        paths: list[str]
        outcomes: list[str]

    gate = ToolGate(client, HARNESS, notify="none", wait_timeout=30)
    runs = tmp_path / "runs.txt"

    def delete(state: State) -> State:
        calls = [("delete_file", {"path": p}, f"del-{i}") for i, p in enumerate(state["paths"])]
        outcomes = []
        for (name, args, _), verdict in zip(calls, approve_all(gate, calls), strict=True):
            if verdict.allowed:
                with runs.open("a") as f:
                    f.write(args["path"] + "\n")
                outcomes.append("deleted")
            else:
                outcomes.append(verdict.denial_text(name))
        return {"outcomes": outcomes}

    graph = StateGraph(State)
    graph.add_node("delete", delete)
    graph.add_edge(START, "delete")
    graph.add_edge("delete", END)
    app, cfg = graph.compile(checkpointer=InMemorySaver()), config("t-own-all")
    word = uuid.uuid4().hex[:8]
    paths = [f"/srv/a-{word}", f"/srv/b-{word}", f"/srv/c-{word}"]
    app.invoke({"paths": paths}, cfg)
    # One pause, every call asked and pending before anyone answered.
    (paused,) = app.get_state(cfg).interrupts
    asked = pending_approvals(app, cfg)
    assert [a["args"]["path"] for a in asked] == paths
    assert {client.get(a["decision_id"]).status for a in asked} == {"pending"}

    assert person.answer(paths[0], value="Allow").status_code == 303
    # Resumed with one answer in: the node waits for the others inside the graph.
    resuming = later(0.0, resume, app, cfg)
    assert person.answer_when_asked(paths[1], value="Deny", remark="keep b").status_code == 303
    assert person.answer_when_asked(paths[2], value="Allow").status_code == 303
    result = joined(resuming)
    assert result["outcomes"][0] == "deleted" and result["outcomes"][2] == "deleted"
    assert result["outcomes"][1].endswith("denied by the person: keep b")
    resume(app, cfg)  # resumed once more: nothing runs again
    assert runs_of(runs) == [paths[0], paths[2]]


def test_a_run_given_up_withdraws_what_still_waits_and_a_resume_runs_none_of_it(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    runs, word = tmp_path / "runs.txt", uuid.uuid4().hex[:8]
    agent, cfg = build(client, tmp_path / "graph.db", runs), config(f"t-give-up-{word}")
    agent.invoke(start_input(f"ls {word}", "call-1", (f"rm {word}", "call-2")), cfg)
    asked = {a["args"]["command"]: a["decision_id"] for a in pending_approvals(agent, cfg)}
    assert person.answer(f"ls {word}", value="Allow").status_code == 303

    assert withdraw(client, cfg) == [asked[f"rm {word}"]]
    gone = client.get(asked[f"rm {word}"])
    assert gone.status == "cancelled"
    (cancel,) = [e for e in client.audit_trail(gone) if e.kind == "cancelled"]
    assert cancel.detail.get("reason") == "abandoned"
    assert client.get(asked[f"ls {word}"]).status == "answered", "an answer stays as it is"
    assert f"rm {word}" not in person.feed().split('id="history"')[0]

    result = resume(agent, cfg)
    assert runs_of(runs) == [f"ls {word}"]
    assert any(
        "the agent stopped waiting, and it withdrew the question" in t for t in tool_results(result)
    )
