"""The approval step every framework adapter shares (``sayso.langgraph``,
``sayso.pydantic_ai``, ``sayso.openai_agents``, ``sayso.adk``): ask sayso about one tool call,
and later read back what the person decided.

Everything a framework hands back on resume (interrupt values, resume payloads, deferred
results, serialized run state, confirmation responses) is the agent's to edit, so none of it
decides. The gate keeps these rules instead:

- A call is bound to its approval. The ``Idempotency-Key`` comes from the harness, the run's
  id and the framework's tool-call id, so a retried or resumed call finds the approval it
  already asked for instead of asking again. The body holds the tool name and the canonical
  arguments, so the same call id with other arguments is refused by the server
  (``idempotency_mismatch``), which the gate reads as a denial. The metadata holds a SHA-256
  digest of the tool name and arguments (``CALL_DIGEST``): a decision's view does not return
  the arguments it showed, and the digest lets a read check them all the same.
- Whether the tool runs is read from sayso, by decision id, right before it would run. Only an
  ``Allow`` recorded there, on the approval of this very call, lets it through; a deny, a
  decline, an expiry, a cancel or a wait that ran out is a denial that says why.
- A check made just before a tool runs (``check``) finds the approval asked when the run
  paused. When there is none, the call never paused for the person: the approval the check
  just made is withdrawn and the call denied, so a forged "approved" cannot start a question
  that a later resume would take as asked. ``verdict`` asks and waits instead, for a caller
  entitled to put the question: a pause, or LangGraph's own review step, which can be resumed
  before anything asked sayso.
- The calls of one model step are asked together (``verdicts``): every approval is made
  before any is waited on, in the same session (the run's id), so the person sees them as one
  batch (the feed's session group, the session page) and a person who answers one and steps
  away has still been asked about the others.
- A run given up leaves nothing waiting on the person: ``withdraw`` cancels every approval of
  the run still pending, as ``abandoned``.

One module, two kinds of I/O: ``_Rules`` builds the ask and reads a ``Decision`` without
sending anything; ``ToolGate`` (the blocking ``Client``) and ``AsyncToolGate``
(``AsyncClient``) only send, wait and hand what comes back to it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Generic, TypeVar

from ._async import AsyncClient
from ._errors import SaysoError, Timeout
from ._models import AskHandle, AuditEvent, Decision
from ._sync import Client

#: The reason a denial gives for a question the agent withdrew unanswered.
WITHDRAWN = "nobody answered before the agent stopped waiting, and it withdrew the question"

C = TypeVar("C", Client, AsyncClient)

ALLOW = "Allow"
DENY = "Deny"
# One gated call of a model step: the tool's name, its arguments, the call's id.
StepCall = tuple[str, Mapping[str, Any], str]
# Where the gate keeps the digest of the call in the decision's metadata.
CALL_DIGEST = "sayso_call_sha256"
# The cancel reason of an approval made by a check for a call that never paused for it; the
# audit trail keeps it, so a later resume says why the call stays denied.
UNASKED = "the call ran without being asked about"
# The cancel reason the server reads as "the agent stopped waiting" (docs/API.md, Lifecycle):
# the person's page says an answer changes nothing now.
ABANDONED = "abandoned"
# The server's bounds on an Idempotency-Key and on an approval's session id.
MAX_KEY_CHARS = 255
MAX_SESSION_CHARS = 200
# The question repeats the arguments for a notification; the approval block shows them whole.
MAX_QUESTION_CHARS = 1000


def canonical(value: Any) -> str:
    """``value`` as one JSON string, key order and spacing aside: what an approval binds.
    A value JSON cannot hold is written as its ``str``, so any call can be asked about."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def idempotency_key(harness: str, run_id: str, call_id: str) -> str:
    """One key per tool call of one run. Ids too long for the header, or that it cannot carry
    (it is ASCII), still give one stable key per call: their hash."""
    key = f"{harness}:{run_id}:{call_id}"
    if len(key) <= MAX_KEY_CHARS and key.isascii():
        return key
    return f"{harness}:sha256:{hashlib.sha256(key.encode()).hexdigest()}"


def arguments_object(raw: Any) -> dict[str, Any]:
    """The call's arguments as the object the approval shows; a model's JSON string is parsed,
    anything that is not an object is shown under ``arguments``."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {"arguments": raw}
    if isinstance(raw, Mapping):
        return dict(raw)
    return {"arguments": raw}


@dataclass(frozen=True)
class ToolCall:
    """What an approval binds: who calls, which tool, with exactly which arguments. The run's
    id and the tool-call id only name the approval (``idempotency_key``)."""

    harness: str
    tool_name: str
    arguments: dict[str, Any]

    @property
    def digest(self) -> str:
        """SHA-256 of the tool's name and its arguments as canonical JSON."""
        shown = canonical({"tool": self.tool_name, "arguments": self.arguments})
        return hashlib.sha256(shown.encode()).hexdigest()


@dataclass(frozen=True)
class Verdict:
    """What the person decided about one call, as read from sayso.

    ``allowed`` is true only for an ``Allow`` sayso recorded on this call's approval;
    ``reason`` says why not (or that the person allowed it); ``args`` are the arguments to run
    with, the person's edited command in place when they changed it."""

    allowed: bool
    reason: str
    decision_id: str | None = None
    args: dict[str, Any] = field(default_factory=dict)

    def denial_text(self, tool_name: str) -> str:
        """What the model reads in place of the tool's result."""
        return f"The person did not approve `{tool_name}`: {self.reason}"


class _Rules(Generic[C]):
    """What both gates share and the I/O does not touch: the client, the settings
    (``ToolGate`` says what they mean), the ask, and what a decision read back means for
    the call."""

    def __init__(
        self,
        client: C,
        harness: str,
        *,
        wait_timeout: float | None = None,
        ttl: float | timedelta | None = None,
        editable: Iterable[str] = frozenset(),
        notify: str | None = None,
        project: str | None = None,
    ) -> None:
        self.client: C = client
        self.harness = harness
        self.wait_timeout = wait_timeout
        self.ttl = ttl
        self.editable = frozenset(editable)
        self.notify = notify
        self.project = project

    def call(self, tool_name: str, args: Mapping[str, Any]) -> ToolCall:
        return ToolCall(self.harness, tool_name, dict(args))

    def request(self, call: ToolCall, run_id: str, call_id: str) -> tuple[str, dict[str, Any]]:
        """The question and the create fields of the call's approval. Everything in them is
        what the server compares on a replay: the same call asks the same body every time."""
        shown = canonical(call.arguments)
        approval: dict[str, Any] = {
            "harness": call.harness,
            "tool_name": call.tool_name,
            "tool_input": json.loads(shown),
            "session_id": run_id[:MAX_SESSION_CHARS],
        }
        if call.tool_name in self.editable and isinstance(call.arguments.get("command"), str):
            approval["editable"] = True
        fields: dict[str, Any] = {
            "options": [ALLOW, DENY],
            "allow_other": False,
            "approval": approval,
            "metadata": {
                "framework": call.harness,
                "run_id": run_id,
                "tool_call_id": call_id,
                CALL_DIGEST: call.digest,
            },
            "idempotency_key": idempotency_key(call.harness, run_id, call_id),
        }
        for name, value in (("ttl", self.ttl), ("notify", self.notify), ("project", self.project)):
            if value is not None:
                fields[name] = value
        question = f"{call.harness} wants to run {call.tool_name} {shown}"
        return question[:MAX_QUESTION_CHARS], fields

    def refused(self, call: ToolCall, call_id: str) -> Verdict:
        """The server refused the ask: the call id was asked about with other arguments."""
        why = (
            f"not allowed: call {call_id} was asked for with other arguments; these differ "
            "from the ones the person was asked about"
        )
        return Verdict(False, why, None, dict(call.arguments))

    def unasked(self, call: ToolCall, decision_id: str) -> Verdict:
        why = "not allowed: no approval was asked for this call before it ran"
        return Verdict(False, why, decision_id, dict(call.arguments))

    def unanswered(self, call: ToolCall, decision_id: str) -> Verdict:
        why = "not allowed: the person has not answered this approval yet"
        return Verdict(False, why, decision_id, dict(call.arguments))

    def of_run(self, d: Decision, run_id: str) -> bool:
        """Whether ``d`` is an approval this gate asked for the run ``run_id``."""
        return d.metadata.get("framework") == self.harness and d.metadata.get("run_id") == run_id

    def gave_up(self) -> str:
        """Why a call whose wait ran out is denied."""
        if self.wait_timeout is None:
            return "not allowed: no answer in time, the question withdrawn"
        return f"not allowed: no answer within {self.wait_timeout:g} s, the question withdrawn"

    def needs_trail(self, d: Decision, call: ToolCall) -> bool:
        """Whether ``judge`` needs the audit trail: a cancel's reason and an Allow's edited
        command are kept there, not in the ``Decision``."""
        if d.status == "cancelled":
            return True
        allowed = d.status == "answered" and d.outcome == ALLOW
        return allowed and call.tool_name in self.editable

    def judge(self, d: Decision, call: ToolCall, trail: Iterable[AuditEvent]) -> Verdict:
        """Allowed only when the person picked Allow on the approval made for this very call."""
        did = d.decision_id

        def deny(why: str) -> Verdict:
            return Verdict(False, why, did, dict(call.arguments))

        a = d.approval
        if (
            a is None
            or (a.harness, a.tool_name) != (call.harness, call.tool_name)
            or d.metadata.get(CALL_DIGEST) != call.digest
        ):
            return deny(
                f"not allowed: approval {did} was given for another call than "
                f"{call.tool_name} with these arguments"
            )
        events = list(trail)
        remark = f": {d.remark}" if d.remark else ""
        if d.status == "answered":
            if d.outcome != ALLOW:
                return deny(f"denied by the person{remark}")
            args = dict(call.arguments)
            edited = _edited_command(events) if call.tool_name in self.editable else None
            if edited is not None:
                args["command"] = edited
            return Verdict(True, f"allowed by the person{remark}", did, args)
        if d.status == "declined":
            return deny(f"the person declined to answer{remark}")
        if d.status == "expired":
            return deny("the approval expired with no answer")
        if d.status == "cancelled":
            why = _cancel_reason(events) or d.remark
            if why == ABANDONED:
                why = WITHDRAWN
            return deny(f"the approval was cancelled: {why or 'no reason given'}")
        return deny(f"not allowed: the approval is {d.status}")


def _cancel_reason(trail: list[AuditEvent]) -> str | None:
    for event in trail:
        if event.kind == "cancelled" and event.detail.get("reason"):
            return str(event.detail["reason"])
    return None


def _edited_command(trail: list[AuditEvent]) -> str | None:
    """The command the person typed on the page, from the audit trail's answer."""
    for event in trail:
        if event.kind == "answered" and isinstance(event.detail.get("edited_command"), str):
            return str(event.detail["edited_command"])
    return None


class GateTimeout:
    """An adapter's ``timeout``: the bound on each wait, in seconds, which its gate keeps."""

    _gate: _Rules[Any]

    @property
    def timeout(self) -> float | None:
        """The bound on each wait, in seconds; the gate keeps it."""
        return self._gate.wait_timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._gate.wait_timeout = value


class ToolGate(_Rules[Client]):
    """Asks sayso about tool calls and reads the answers back, for one framework (``harness``),
    on the blocking ``Client``.

    ``wait_timeout`` (seconds, default: until the decision expires) bounds how long a call
    waits for a pending answer; past it the decision is cancelled and the call denied.
    ``editable`` names tools whose ``command`` argument the person may edit on the page (the
    approval's text box); the edited command replaces it when the tool runs. The server offers
    the box for shell tools only (``bash``, ``shell``, ``run_shell_command``,
    ``exec_command``, …: docs/API.md). ``ttl``, ``notify`` and ``project`` go to every
    approval asked.

    ``ask`` / ``ask_or_refuse`` put the question; ``read`` takes the answer of a decision
    asked before (waiting while it is pending); ``verdict`` is both, for a caller entitled to
    ask (a pause); ``check`` is the read just before a tool runs, which denies a call that
    never paused for the person.
    """

    def ask(self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str) -> AskHandle:
        """The approval for this call: made on the first ask, the same one on every later
        ask (``replayed``). ``SaysoError`` with ``code == "idempotency_mismatch"`` when the
        call id was asked before with other arguments."""
        question, fields = self.request(self.call(tool_name, args), run_id, call_id)
        return self.client.ask(question, "choose", **fields)

    def ask_or_refuse(
        self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str
    ) -> AskHandle | Verdict:
        """``ask``, with a call whose arguments changed since it was asked refused as a
        denial rather than raised."""
        try:
            return self.ask(tool_name, args, run_id, call_id)
        except SaysoError as e:
            if e.code != "idempotency_mismatch":
                raise
            return self.refused(self.call(tool_name, args), call_id)

    def verdict(
        self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str
    ) -> Verdict:
        """Asks (or finds the earlier ask of) this call, then waits for and reads the
        person's answer from sayso. Never raises for an answer that is not an Allow."""
        asked = self.ask_or_refuse(tool_name, args, run_id, call_id)
        if isinstance(asked, Verdict):
            return asked
        return self.read(asked.decision_id, tool_name, args)

    def verdicts(self, calls: Sequence[StepCall], run_id: str) -> list[Verdict]:
        """``verdict`` for every call of one model step, in order: all are asked (or found
        asked) before the first answer is waited for, so the person sees them together."""
        asked = [self.ask_or_refuse(name, args, run_id, call_id) for name, args, call_id in calls]
        return [
            a if isinstance(a, Verdict) else self.read(a.decision_id, name, args)
            for a, (name, args, _) in zip(asked, calls, strict=True)
        ]

    def check(
        self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str, *, wait: bool
    ) -> Verdict:
        """The verdict just before the call runs. A call whose approval was never asked is
        denied (and the approval this lookup made withdrawn); a pending one is waited for
        with ``wait``, denied at once without."""
        asked = self.ask_or_refuse(tool_name, args, run_id, call_id)
        if isinstance(asked, Verdict):
            return asked
        if not asked.replayed:
            self._cancel(asked.decision_id, UNASKED)
            return self.unasked(self.call(tool_name, args), asked.decision_id)
        return self.read(asked.decision_id, tool_name, args, wait=wait)

    def read(
        self, decision_id: str, tool_name: str, args: Mapping[str, Any], *, wait: bool = True
    ) -> Verdict:
        """The decision as sayso has it (waited for while pending, unless ``wait`` is
        false), checked against the call."""
        call = self.call(tool_name, args)
        d = self.client.get(decision_id)
        if d.pending:
            if not wait:
                return self.unanswered(call, decision_id)
            try:
                d = self.client.wait(decision_id, self.wait_timeout)
            except Timeout:
                # The agent stops waiting: withdrawn as `abandoned`, so the person's page says
                # an answer changes nothing now. One given in the meantime still counts.
                d = self._cancel(decision_id, ABANDONED)
                if d.status == "cancelled":
                    return Verdict(False, self.gave_up(), decision_id, dict(call.arguments))
        trail = self.client.audit_trail(decision_id) if self.needs_trail(d, call) else []
        return self.judge(d, call, trail)

    def withdraw(self, run_id: str, reason: str = ABANDONED) -> list[str]:
        """Withdraws every approval of the run ``run_id`` still waiting on the person, for a
        run given up for good (a resume after it finds them cancelled, and runs none of its
        calls). Returns the ids withdrawn; one answered meanwhile is left as it is."""
        waiting = [d for d in self.client.list(status="pending") if self.of_run(d, run_id)]
        return [
            d.decision_id
            for d in waiting
            if self._cancel(d.decision_id, reason).status == "cancelled"
        ]

    def _cancel(self, decision_id: str, reason: str) -> Decision:
        """Withdraws the question so a late Allow cannot be taken for a call that gave up;
        an answer that arrived first is what counts."""
        try:
            return self.client.cancel(decision_id, reason)
        except SaysoError as e:
            if e.code != "already_resolved":
                raise
            return self.client.get(decision_id)


class AsyncToolGate(_Rules[AsyncClient]):
    """``ToolGate`` on ``AsyncClient``: the same methods, awaited, with the same rules."""

    async def ask(
        self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str
    ) -> AskHandle:
        question, fields = self.request(self.call(tool_name, args), run_id, call_id)
        return await self.client.ask(question, "choose", **fields)

    async def ask_or_refuse(
        self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str
    ) -> AskHandle | Verdict:
        try:
            return await self.ask(tool_name, args, run_id, call_id)
        except SaysoError as e:
            if e.code != "idempotency_mismatch":
                raise
            return self.refused(self.call(tool_name, args), call_id)

    async def verdict(
        self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str
    ) -> Verdict:
        asked = await self.ask_or_refuse(tool_name, args, run_id, call_id)
        if isinstance(asked, Verdict):
            return asked
        return await self.read(asked.decision_id, tool_name, args)

    async def verdicts(self, calls: Sequence[StepCall], run_id: str) -> list[Verdict]:
        """``ToolGate.verdicts``: every call asked first, then the answers waited for
        together; when one wait fails the others stop too (their approvals stay asked, for a
        resume to find)."""
        asked = [
            await self.ask_or_refuse(name, args, run_id, call_id) for name, args, call_id in calls
        ]

        async def answer(a: AskHandle | Verdict, name: str, args: Mapping[str, Any]) -> Verdict:
            return a if isinstance(a, Verdict) else await self.read(a.decision_id, name, args)

        waits = [
            asyncio.ensure_future(answer(a, name, args))
            for a, (name, args, _) in zip(asked, calls, strict=True)
        ]
        try:
            return list(await asyncio.gather(*waits))
        except BaseException:
            for w in waits:
                w.cancel()
            raise

    async def check(
        self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str, *, wait: bool
    ) -> Verdict:
        asked = await self.ask_or_refuse(tool_name, args, run_id, call_id)
        if isinstance(asked, Verdict):
            return asked
        if not asked.replayed:
            await self._cancel(asked.decision_id, UNASKED)
            return self.unasked(self.call(tool_name, args), asked.decision_id)
        return await self.read(asked.decision_id, tool_name, args, wait=wait)

    async def read(
        self, decision_id: str, tool_name: str, args: Mapping[str, Any], *, wait: bool = True
    ) -> Verdict:
        call = self.call(tool_name, args)
        d = await self.client.get(decision_id)
        if d.pending:
            if not wait:
                return self.unanswered(call, decision_id)
            try:
                d = await self.client.wait(decision_id, self.wait_timeout)
            except Timeout:
                # The agent stops waiting: withdrawn as `abandoned`, so the person's page says
                # an answer changes nothing now. One given in the meantime still counts.
                d = await self._cancel(decision_id, ABANDONED)
                if d.status == "cancelled":
                    return Verdict(False, self.gave_up(), decision_id, dict(call.arguments))
        trail = await self.client.audit_trail(decision_id) if self.needs_trail(d, call) else []
        return self.judge(d, call, trail)

    async def withdraw(self, run_id: str, reason: str = ABANDONED) -> list[str]:
        """``ToolGate.withdraw``, awaited."""
        waiting = [d async for d in self.client.list(status="pending") if self.of_run(d, run_id)]
        withdrawn = []
        for d in waiting:
            if (await self._cancel(d.decision_id, reason)).status == "cancelled":
                withdrawn.append(d.decision_id)
        return withdrawn

    async def _cancel(self, decision_id: str, reason: str) -> Decision:
        try:
            return await self.client.cancel(decision_id, reason)
        except SaysoError as e:
            if e.code != "already_resolved":
                raise
            return await self.client.get(decision_id)
