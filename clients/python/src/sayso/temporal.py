"""Temporal workflows that wait hours or days on a person through sayso.

A workflow calls ``await approval(tool, arguments, step=…)``; the worker registers
``SaysoActivities(client).all``; a ``relay`` runs next to it. What happens:

1. The activity ``sayso_ask`` asks sayso (an approval the person's phone shows as the tool and
   its arguments, harness ``temporal``). Its ``Idempotency-Key`` is the workflow's id, its
   first run's id and the step, so a retried or replayed ask finds the question already asked,
   and a later workflow that reuses the id is asked anew.
2. The workflow waits in ``workflow.wait_condition`` with a durable timer: no activity runs
   and no worker needs to be up while the person thinks it over.
3. When the decision settles, ``relay`` (following sayso's event stream) sends the workflow the
   signal ``sayso_settled`` with the decision's id. The signal only wakes the workflow: the
   activity ``sayso_read`` then reads the decision from sayso and judges it against the call,
   so a forged signal decides nothing. The workflow also reads on its own every ``recheck``
   (an hour by default), so an answer is never lost even with no relay running.
4. At the workflow's deadline (``ttl``, seven days by default) the activity ``sayso_withdraw``
   cancels the question, so it does not stay on the person's phone, and the workflow gets a
   denial saying why; an answer that landed first is what counts.

The ``Verdict`` it returns is the framework adapters' own: ``allowed`` only for an Allow the
person gave on this very call, ``reason`` saying why (a deny's remark, the expiry, the
withdrawal), ``args`` the arguments to run with.
Import this module in workflow code through ``workflow.unsafe.imports_passed_through()``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ._extra import framework_imports

with framework_imports(__name__, "the Temporal SDK", "temporal"):
    from temporalio import activity, workflow
    from temporalio.client import Client as TemporalClient
    from temporalio.common import RetryPolicy
    from temporalio.exceptions import ApplicationError
    from temporalio.service import RPCError, RPCStatusCode

from . import _durable
from ._async import AsyncClient
from ._tool_gate import AsyncToolGate, Verdict

HARNESS = "temporal"
SIGNAL = "sayso_settled"
# sayso keeps a question at most 30 days (ttl_seconds ≤ 2592000).
MAX_TTL = timedelta(days=30)


@dataclass(frozen=True)
class Ask:
    """The input of ``sayso_ask``."""

    workflow_id: str
    run_key: str
    step: str
    tool_name: str
    arguments: dict[str, Any]
    ttl_seconds: int


@dataclass(frozen=True)
class Asked:
    """The output of ``sayso_ask``: the decision, or a denial when the step was asked before
    with other arguments."""

    decision_id: str | None = None
    refused: Verdict | None = None


@dataclass(frozen=True)
class Look:
    """The input of ``sayso_read`` and ``sayso_withdraw``."""

    decision_id: str
    tool_name: str
    arguments: dict[str, Any]
    reason: str = ""


class SaysoActivities:
    """The activities a worker registers (``activities=SaysoActivities(client).all``).

    ``notify`` and ``project`` go to every approval asked. A request sayso refuses for good
    (a bad field, a key it does not know) fails the activity without retries, naming what is
    wrong; a server that is down or busy is retried by Temporal until it is back.
    """

    def __init__(
        self, client: AsyncClient, *, notify: str | None = None, project: str | None = None
    ) -> None:
        self._client = client
        self._notify = notify
        self._project = project
        self.all = [self.ask, self.read, self.withdraw]

    def _gate(self, ttl_seconds: int | None = None) -> AsyncToolGate:
        return AsyncToolGate(
            self._client, HARNESS, ttl=ttl_seconds, notify=self._notify, project=self._project
        )

    @activity.defn(name="sayso_ask")
    async def ask(self, req: Ask) -> Asked:
        gate = self._gate(req.ttl_seconds)
        call = gate.call(req.tool_name, req.arguments)
        with _failing_for_good():
            got = await _durable.ask_async(gate, call, req.workflow_id, req.run_key, req.step)
        if isinstance(got, str):
            return Asked(decision_id=got)
        return Asked(refused=got)

    @activity.defn(name="sayso_read")
    async def read(self, look: Look) -> Verdict | None:
        gate = self._gate()
        call = gate.call(look.tool_name, look.arguments)
        with _failing_for_good():
            return await _durable.settled_async(gate, look.decision_id, call)

    @activity.defn(name="sayso_withdraw")
    async def withdraw(self, look: Look) -> Verdict:
        gate = self._gate()
        call = gate.call(look.tool_name, look.arguments)
        with _failing_for_good():
            return await _durable.withdraw_async(gate, look.decision_id, call, look.reason)


async def approval(
    tool_name: str,
    arguments: Mapping[str, Any],
    *,
    step: str,
    ttl: timedelta = timedelta(days=7),
    recheck: timedelta = timedelta(hours=1),
    activity_timeout: timedelta = timedelta(minutes=2),
) -> Verdict:
    """Asks the person whether the workflow may run ``tool_name`` with ``arguments``, and waits
    durably for the answer, at most ``ttl``. Call it from workflow code.

    ``step`` names the ask within the workflow (one name per gated call): with the workflow's
    id it is what makes the ask happen once. ``recheck`` is how often the workflow reads sayso
    on its own, in case no relay woke it.
    """
    # An ApplicationError fails the workflow with the message; any other exception would only
    # fail its task, which Temporal retries without end.
    if not timedelta(seconds=10) <= ttl <= MAX_TTL:
        raise ApplicationError(
            f"ttl must be between 10 seconds and {MAX_TTL.days} days, not {ttl}",
            type="ValueError",
            non_retryable=True,
        )
    if recheck <= timedelta(0):
        raise ApplicationError(
            f"recheck must be positive, not {recheck}", type="ValueError", non_retryable=True
        )
    info = workflow.info()
    wakes = _wakes()
    deadline = workflow.now() + ttl
    options: dict[str, Any] = {
        "start_to_close_timeout": activity_timeout,
        # sayso down or restarting is waited out; a refusal for good (SaysoRefused) is raised
        # as non-retryable and fails the workflow.
        "retry_policy": RetryPolicy(maximum_interval=timedelta(minutes=1)),
    }
    asked = await workflow.execute_activity(
        "sayso_ask",
        Ask(
            workflow_id=info.workflow_id,
            run_key=f"{info.workflow_id}:{info.first_execution_run_id}",
            step=step,
            tool_name=tool_name,
            arguments=dict(arguments),
            ttl_seconds=round(ttl.total_seconds()),
        ),
        **options,
    )
    if asked.get("refused") is not None:
        return _verdict(asked["refused"])
    did: str = asked["decision_id"]
    look = Look(did, tool_name, dict(arguments))
    wakes.waiting.add(did)
    while True:
        # Cleared before the read: a signal that arrives while it runs wakes the next wait.
        wakes.woken.discard(did)
        verdict = await workflow.execute_activity("sayso_read", look, **options)
        if verdict is not None:
            wakes.waiting.discard(did)
            return _verdict(verdict)
        left = deadline - workflow.now()
        if left <= timedelta(0):
            reason = _durable.no_answer_within(ttl.total_seconds())
            gone = Look(did, tool_name, dict(arguments), reason)
            wakes.waiting.discard(did)
            return _verdict(await workflow.execute_activity("sayso_withdraw", gone, **options))
        try:
            await workflow.wait_condition(lambda: did in wakes.woken, timeout=min(recheck, left))
        except asyncio.TimeoutError:
            pass


async def relay(
    sayso: AsyncClient, temporal: TemporalClient, *, last_event_id: int | None = None
) -> None:
    """Wakes each workflow whose approval settled: follows sayso's event stream (from
    ``last_event_id``; from the start of the inbox's history without one) and signals
    ``sayso_settled`` to the workflow named in the decision's metadata. Runs until cancelled.

    A workflow that has finished is skipped; a Temporal server that is unreachable is tried
    again. Any number of relays may run: a signal only wakes a workflow, which reads sayso.
    """
    async for event in sayso.events(last_event_id):
        meta = event.decision.metadata
        target = meta.get(_durable.WORKFLOW_ID)
        if meta.get("framework") != HARNESS or not isinstance(target, str):
            continue
        await _signal(temporal, target, event.decision.decision_id)


async def _signal(temporal: TemporalClient, workflow_id: str, decision_id: str) -> None:
    delay = 0.5
    while True:
        try:
            await temporal.get_workflow_handle(workflow_id).signal(SIGNAL, decision_id)
            return
        except RPCError as e:
            if e.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
                return  # finished, or never a workflow: nobody to wake
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)


def _verdict(raw: dict[str, Any]) -> Verdict:
    """An activity's ``Verdict``, decoded here rather than by the converter: in the workflow
    sandbox the converter cannot resolve the annotations of a passed-through module's types."""
    return Verdict(
        bool(raw["allowed"]),
        str(raw["reason"]),
        raw.get("decision_id"),
        dict(raw.get("args") or {}),
    )


class _Wakes:
    """The decisions this workflow waits on, and those a signal said settled. Kept on the
    workflow's instance (module state would be shared by every workflow of the worker); a
    signal about any other id is dropped, so forged ones cannot pile up in its memory."""

    def __init__(self) -> None:
        self.waiting: set[str] = set()
        self.woken: set[str] = set()

    def settled(self, decision_id: str) -> None:
        if decision_id in self.waiting:
            self.woken.add(decision_id)


def _wakes() -> _Wakes:
    """This workflow's ``_Wakes``; the signal's handler is set on the first ask."""
    instance = workflow.instance()
    wakes: _Wakes | None = getattr(instance, "_sayso_wakes", None)
    if wakes is None:
        wakes = _Wakes()
        instance._sayso_wakes = wakes
        workflow.set_signal_handler(SIGNAL, wakes.settled)
    return wakes


class _failing_for_good:
    """Turns ``Refused`` into a non-retryable ``ApplicationError`` of type ``SaysoRefused``."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, e: BaseException | None, tb: object) -> None:
        if isinstance(e, _durable.Refused):
            raise ApplicationError(str(e), type="SaysoRefused", non_retryable=True) from e
