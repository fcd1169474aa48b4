"""DBOS workflows that wait hours or days on a person through sayso.

Inside a ``@DBOS.workflow()``, ``approval(tool, arguments, step=…)`` asks and waits durably:

1. The step ``sayso_ask`` asks sayso (an approval the person's phone shows as the tool and its
   arguments, harness ``dbos``) with the ``Idempotency-Key`` ``dbos:<workflow id>:<step>``: a
   DBOS workflow id names one execution, so a step retried or recovered after a crash finds the
   question already asked.
2. A child workflow, ``sayso_tell_when_settled``, waits on sayso (long polls, through sayso
   restarts) and ``DBOS.send``s the decision's id to the workflow when it settles.
3. The workflow waits in ``DBOS.recv`` (a durable wait: a process killed mid-wait is recovered
   by the next ``DBOS.launch()``, children included). The message only wakes it: the step
   ``sayso_read`` then reads the decision from sayso and judges it against the call, so a
   message sent by anyone else decides nothing.
4. At the workflow's deadline (``ttl``, seven days by default; sayso expires the question at
   the same time) the step ``sayso_withdraw`` cancels the question and the workflow gets a
   denial saying why; an answer or expiry that came first is what counts.

The client comes from ``configure(client)``, or ``sayso.Client()`` (``SAYSO_URL``,
``SAYSO_KEY``) on first use; configure it before ``DBOS.launch()``, which may recover
workflows at once.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from ._extra import framework_imports

with framework_imports(__name__, "DBOS", "dbos"):
    from dbos import DBOS

from . import _durable
from ._errors import SaysoError, Timeout
from ._sync import Client
from ._tool_gate import ToolGate, Verdict

HARNESS = "dbos"
# sayso keeps a question at most 30 days (ttl_seconds ≤ 2592000).
MAX_TTL = timedelta(days=30)

_settings: dict[str, Any] = {}


def configure(client: Client, *, notify: str | None = None, project: str | None = None) -> None:
    """The client the steps use; ``notify`` and ``project`` go to every approval asked."""
    _settings.update(client=client, notify=notify, project=project)


def approval(
    tool_name: str, arguments: Mapping[str, Any], *, step: str, ttl: timedelta = timedelta(days=7)
) -> Verdict:
    """Asks the person whether the workflow may run ``tool_name`` with ``arguments``, and waits
    durably for the answer, at most ``ttl``. Call it from a DBOS workflow.

    ``step`` names the ask within the workflow (one name per gated call): with the workflow's
    id it is what makes the ask happen once.
    """
    workflow_id = DBOS.workflow_id
    if workflow_id is None:
        raise RuntimeError("sayso.dbos.approval runs inside a DBOS workflow")
    if not timedelta(seconds=10) <= ttl <= MAX_TTL:
        raise ValueError(f"ttl must be between 10 seconds and {MAX_TTL.days} days, not {ttl}")
    args = dict(arguments)
    deadline = _clock() + ttl.total_seconds()
    asked = _ask(workflow_id, step, tool_name, args, round(ttl.total_seconds()))
    if "refused" in asked:
        return Verdict(**asked["refused"])
    did: str = asked["decision_id"]
    topic = f"sayso:{did}"
    DBOS.start_workflow(_tell_when_settled, did, workflow_id, topic)
    while True:
        verdict = _read(did, tool_name, args)
        if verdict is not None:
            return Verdict(**verdict)
        left = deadline - _clock()
        if left <= 0:
            reason = _durable.no_answer_within(ttl.total_seconds())
            return Verdict(**_withdraw(did, tool_name, args, reason))
        DBOS.recv(topic, timeout_seconds=left)


def _gate(ttl_seconds: int | None = None) -> ToolGate:
    if "client" not in _settings:
        _settings["client"] = Client()
    return ToolGate(
        _settings["client"],
        HARNESS,
        ttl=ttl_seconds,
        notify=_settings.get("notify"),
        project=_settings.get("project"),
    )


def _retryable(e: BaseException) -> bool:
    return not isinstance(e, _durable.Refused)


# sayso down or restarting is waited out (about half an hour of tries, each one already
# retrying for 30 s); a refusal for good is not retried.
_RETRIES: dict[str, Any] = {
    "retries_allowed": True,
    "max_attempts": 60,
    "interval_seconds": 1.0,
    "backoff_rate": 1.5,
    "should_retry": _retryable,
}


@DBOS.step(name="sayso_clock")
def _clock() -> float:
    """Now, recorded: a recovered workflow keeps the deadline it had."""
    return time.time()


@DBOS.step(name="sayso_ask", **_RETRIES)
def _ask(
    workflow_id: str, step: str, tool_name: str, arguments: dict[str, Any], ttl_seconds: int
) -> dict[str, Any]:
    gate = _gate(ttl_seconds)
    call = gate.call(tool_name, arguments)
    got = _durable.ask(gate, call, workflow_id, workflow_id, step)
    return {"decision_id": got} if isinstance(got, str) else {"refused": asdict(got)}


@DBOS.step(name="sayso_read", **_RETRIES)
def _read(decision_id: str, tool_name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
    gate = _gate()
    got = _durable.settled(gate, decision_id, gate.call(tool_name, arguments))
    return None if got is None else asdict(got)


@DBOS.step(name="sayso_withdraw", **_RETRIES)
def _withdraw(
    decision_id: str, tool_name: str, arguments: dict[str, Any], reason: str
) -> dict[str, Any]:
    gate = _gate()
    return asdict(_durable.withdraw(gate, decision_id, gate.call(tool_name, arguments), reason))


@DBOS.step(name="sayso_wait")
def _wait_settled(decision_id: str) -> str:
    """Waits until the decision is no longer pending, through sayso restarts and outages; a
    step that is cut off by a crash runs again on recovery and reads the answer then."""
    client = _gate().client
    while True:
        try:
            return client.wait(decision_id).status
        except Timeout:
            continue
        except SaysoError as e:
            if _durable.permanent(e):
                raise _durable.Refused(str(e)) from e
            time.sleep(5)


@DBOS.workflow(name="sayso_tell_when_settled")
def _tell_when_settled(decision_id: str, workflow_id: str, topic: str) -> None:
    _wait_settled(decision_id)
    DBOS.send(workflow_id, decision_id, topic)
