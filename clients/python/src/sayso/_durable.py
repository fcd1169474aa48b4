"""What the durable workflow engines' helpers (``sayso.temporal``, ``sayso.dbos``) share: the
three calls a workflow makes to sayso, each one a step the engine records and retries.

- ``ask``: the approval of one step of one workflow, with an ``Idempotency-Key`` made of the
  engine, the workflow's id and the step, so an ask retried or replayed after a crash finds
  the question already asked instead of asking again.
- ``settled``: the decision as sayso has it, judged against the call, or ``None`` while it is
  pending. Nothing a workflow is told (a signal, a message) decides: only this read does.
- ``withdraw``: the workflow's own deadline passed: the question is cancelled, so it does not
  stay on the person's phone, and an answer that landed first is what counts.

Each takes a gate (``ToolGate`` or ``AsyncToolGate``, which hold the rules), the call as the
gate binds it (``gate.call(tool_name, arguments)``) and the engine's step input; a request the
server refuses for good (a ``4xx`` other than ``408``/``429``) is
raised as ``Refused``, which the engines turn into a failure they do not retry.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._errors import SaysoError
from ._models import Decision
from ._tool_gate import AsyncToolGate, ToolCall, ToolGate, Verdict

# The metadata key naming the workflow an approval was asked for; a relay that hears the
# decision settle wakes that workflow.
WORKFLOW_ID = "workflow_id"


class Refused(Exception):
    """sayso refused a request for good: retrying the step cannot help."""


def permanent(e: SaysoError) -> bool:
    """Whether the error will come back however often the step is retried."""
    return e.status is not None and 400 <= e.status < 500 and e.status not in (408, 429)


def ask_request(
    gate: ToolGate | AsyncToolGate, call: ToolCall, workflow_id: str, run_key: str, step: str
) -> tuple[str, dict[str, Any]]:
    """The question and create fields of a workflow step's approval: the gate's, with the
    workflow's id in the metadata for the relay."""
    question, fields = gate.request(call, run_key, step)
    fields["metadata"][WORKFLOW_ID] = workflow_id
    return question, fields


def ask(gate: ToolGate, call: ToolCall, workflow_id: str, run_key: str, step: str) -> str | Verdict:
    """The approval's decision id; a denial when the step was asked with other arguments."""
    question, fields = ask_request(gate, call, workflow_id, run_key, step)
    with for_good():
        try:
            return gate.client.ask(question, "choose", **fields).decision_id
        except SaysoError as e:
            return _refused(gate, e, call, step)


async def ask_async(
    gate: AsyncToolGate, call: ToolCall, workflow_id: str, run_key: str, step: str
) -> str | Verdict:
    """``ask`` on the asyncio client."""
    question, fields = ask_request(gate, call, workflow_id, run_key, step)
    with for_good():
        try:
            return (await gate.client.ask(question, "choose", **fields)).decision_id
        except SaysoError as e:
            return _refused(gate, e, call, step)


def settled(gate: ToolGate, decision_id: str, call: ToolCall) -> Verdict | None:
    """The person's verdict on the call, or ``None`` while the decision is pending."""
    with for_good():
        d = gate.client.get(decision_id)
        return None if d.pending else _judged(gate, d, call)


async def settled_async(gate: AsyncToolGate, decision_id: str, call: ToolCall) -> Verdict | None:
    """``settled`` on the asyncio client."""
    with for_good():
        d = await gate.client.get(decision_id)
        return None if d.pending else await _judged_async(gate, d, call)


def withdraw(gate: ToolGate, decision_id: str, call: ToolCall, reason: str) -> Verdict:
    """Cancels the question with ``reason`` and judges what it ended as: the cancel, or the
    answer (or expiry) that came first."""
    with for_good():
        return _judged(gate, gate._cancel(decision_id, reason), call)


async def withdraw_async(
    gate: AsyncToolGate, decision_id: str, call: ToolCall, reason: str
) -> Verdict:
    """``withdraw`` on the asyncio client."""
    with for_good():
        return await _judged_async(gate, await gate._cancel(decision_id, reason), call)


def no_answer_within(seconds: float) -> str:
    """The reason a workflow gives when it withdraws a question at its deadline."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            return f"no answer within {n} {unit}{'s' if n != 1 else ''}"
    return f"no answer within {seconds:g} s"


def _refused(gate: ToolGate | AsyncToolGate, e: SaysoError, call: ToolCall, step: str) -> Verdict:
    """The denial of a step asked before with other arguments (the server's
    ``idempotency_mismatch``); any other error is raised again."""
    if e.code != "idempotency_mismatch":
        raise e
    return gate.refused(call, step)


def _judged(gate: ToolGate, d: Decision, call: ToolCall) -> Verdict:
    trail = gate.client.audit_trail(d.decision_id) if gate.needs_trail(d, call) else []
    return gate.judge(d, call, trail)


async def _judged_async(gate: AsyncToolGate, d: Decision, call: ToolCall) -> Verdict:
    trail = await gate.client.audit_trail(d.decision_id) if gate.needs_trail(d, call) else []
    return gate.judge(d, call, trail)


@contextmanager
def for_good() -> Iterator[None]:
    """Turns an error that retrying cannot mend into ``Refused``; the rest stay as they are,
    for the engine to retry."""
    try:
        yield
    except SaysoError as e:
        if permanent(e):
            raise Refused(str(e)) from e
        raise
