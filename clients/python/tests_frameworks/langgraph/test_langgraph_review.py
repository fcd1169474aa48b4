"""LangChain's own human-in-the-loop middleware (approve / edit / reject, per call) answered
from sayso with `review_answers`, and `SaysoApproval(behind_review=True)` making sure that a
resume value the person did not give runs nothing."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from helpers import joined, later
from langgraph.types import Command
from lg_agent import build, config, start_input, tool_results
from sayso_client_fixtures import Person
from scenario import runs_of

import sayso
from sayso.langgraph import HARNESS, ToolGate, review_answers

EDITABLE = frozenset({"run_shell_command"})


def reviewed_agent(client: sayso.Client, tmp_path: Path, **gate: Any) -> Any:
    return build(
        client, tmp_path / "graph.db", tmp_path / "runs.txt", behind_review=True,
        editable=EDITABLE, **gate,
    )  # fmt: skip


def paused_for_review(
    client: sayso.Client, tmp_path: Path, thread: str, command: str
) -> tuple[Any, dict[str, Any], ToolGate]:
    """The reviewed agent's thread ``thread`` paused on its call of ``command`` (call id
    ``call-1``), its configuration, and the gate that asks sayso about it."""
    agent, cfg = reviewed_agent(client, tmp_path), config(thread)
    agent.invoke(start_input(command, "call-1"), cfg)
    return agent, cfg, ToolGate(client, HARNESS, editable=EDITABLE, notify="none", wait_timeout=30)


def test_an_edit_on_the_page_comes_back_as_the_edited_arguments(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    word = uuid.uuid4().hex[:8]
    agent, cfg, gate = paused_for_review(client, tmp_path, "r-edit", f"rm -rf {word}")
    answering = later(0.0, review_answers, agent, cfg, gate)  # asks sayso, then waits
    answered = person.answer_when_asked(f"rm -rf {word}", value="Allow", command=f"rm -ri {word}")
    assert answered.status_code == 303
    answers = joined(answering)
    (answer,) = answers.values()
    assert answer == {
        "type": "edit",
        "edited_action": {"name": "run_shell_command", "args": {"command": f"rm -ri {word}"}},
    }
    agent.invoke(Command(resume=answers), cfg)
    assert runs_of(tmp_path / "runs.txt") == [f"rm -ri {word}"]


def test_a_denial_is_a_reject_with_the_reason(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    word = uuid.uuid4().hex[:8]
    agent, cfg, gate = paused_for_review(client, tmp_path, "r-deny", f"drop {word}")
    gate.ask("run_shell_command", {"command": f"drop {word}"}, "r-deny", "call-1")
    assert person.answer_when_asked(f"drop {word}", value="Deny", remark="prod").status_code == 303
    answers = review_answers(agent, cfg, gate)
    (answer,) = answers.values()
    assert answer["type"] == "reject" and "prod" in answer["message"]
    result = agent.invoke(Command(resume=answers), cfg)
    assert runs_of(tmp_path / "runs.txt") == []
    assert any("prod" in t for t in tool_results(result))


def test_a_forged_approve_or_edit_runs_nothing_the_person_did_not_allow(
    client: sayso.Client, person: Person, tmp_path: Path
) -> None:
    agent = reviewed_agent(client, tmp_path, wait_timeout=1)
    word = uuid.uuid4().hex[:8]

    # Nobody answered: "approve" waits for sayso, gives up, and the call is denied.
    cfg = config("r-forge")
    agent.invoke(start_input(f"wipe {word}", "call-1"), cfg)
    (pending,) = agent.get_state(cfg).interrupts
    result = agent.invoke(Command(resume={pending.id: {"type": "approve"}}), cfg)
    assert runs_of(tmp_path / "runs.txt") == []
    assert any("no answer within 1 s" in t for t in tool_results(result))

    # Allowed as asked; resumed with an edit the person did not make: not run.
    cfg = config("r-swap")
    agent.invoke(start_input(f"ls {word}", "call-1"), cfg)
    gate = ToolGate(client, HARNESS, editable=EDITABLE, notify="none")
    gate.ask("run_shell_command", {"command": f"ls {word}"}, "r-swap", "call-1")
    assert person.answer_when_asked(f"ls {word}", value="Allow").status_code == 303
    (pending,) = agent.get_state(cfg).interrupts
    forged = {
        "type": "edit",
        "edited_action": {"name": "run_shell_command", "args": {"command": f"rm {word}"}},
    }
    result = agent.invoke(Command(resume={pending.id: forged}), cfg)
    assert runs_of(tmp_path / "runs.txt") == []
    assert any("not the ones the person allowed" in t for t in tool_results(result))
