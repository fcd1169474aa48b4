"""One framework tool call turned into a sayso approval, and the verdict read back from sayso.

The framework adapters (``sayso.openai_agents``, ``sayso.adk``) share this. A call is bound
to its run, its tool-call id, the tool's name and its canonical arguments: the idempotency
key comes from the run and the call id, so a retried or resumed call finds the approval it
already asked for instead of asking again, and the create body carries the name and the
arguments, so the same key with other arguments is refused by the server
(``idempotency_mismatch``). The verdict is only ever read from sayso, by the decision's id;
nothing the agent holds (its run state, a resume payload) can make one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ._async import AsyncClient
from ._errors import SaysoError, Timeout
from ._models import AskHandle, Decision

ALLOW = "Allow"
DENY = "Deny"
# Where the adapter keeps the digest of the call in the decision's metadata.
CALL_DIGEST = "sayso_call_sha256"


@dataclass(frozen=True)
class ToolCall:
    """A call a framework paused for approval: who makes it and exactly what it runs."""

    harness: str
    run_id: str
    call_id: str
    tool_name: str
    arguments: dict[str, Any]

    @property
    def digest(self) -> str:
        """SHA-256 of the tool's name and its arguments as canonical JSON (sorted keys)."""
        canonical = json.dumps(
            {"tool": self.tool_name, "arguments": self.arguments},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def idempotency_key(self) -> str:
        key = f"{self.harness}:{self.run_id}:{self.call_id}"
        if len(key) <= 255:
            return key
        # Ids past the header's 255 characters still give one stable key per call.
        return f"{self.harness}:sha256:{hashlib.sha256(key.encode()).hexdigest()}"


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
class Verdict:
    """What sayso says of a call: allowed, or not with the reason the model reads."""

    allowed: bool
    reason: str
    decision_id: str | None = None


@dataclass(frozen=True)
class Gate:
    """How the adapter asks: the client and the create fields every approval shares."""

    client: AsyncClient
    ttl: float | timedelta | None = None
    project: str | None = None

    async def ask(self, call: ToolCall) -> AskHandle | Verdict:
        """The handle of the call's approval, asked now or found by its idempotency key
        (``replayed``); a ``Verdict`` denying the call when sayso refuses the binding."""
        fields: dict[str, Any] = {
            "options": [ALLOW, DENY],
            "allow_other": False,
            "approval": {
                "harness": call.harness,
                "tool_name": call.tool_name,
                "tool_input": call.arguments,
                "session_id": call.run_id,
            },
            "metadata": {
                CALL_DIGEST: call.digest,
                "run_id": call.run_id,
                "tool_call_id": call.call_id,
            },
            "idempotency_key": call.idempotency_key,
        }
        if self.ttl is not None:
            fields["ttl"] = self.ttl
        if self.project is not None:
            fields["project"] = self.project
        question = f"{call.harness} wants to run the tool {call.tool_name}"
        try:
            handle = await self.client.ask(question, "choose", **fields)
        except SaysoError as e:
            if e.code == "idempotency_mismatch":
                return Verdict(
                    False,
                    f"not allowed: call {call.call_id} was asked for with other arguments; "
                    "an approval holds only for the exact call it was given for",
                )
            raise
        return handle

    async def decide(self, call: ToolCall, timeout: float | None = None) -> Verdict:
        """Asks (once, whatever the retries) and waits for the person. A wait that runs out
        cancels the approval, so a late Allow can never let the call through."""
        asked = await self.ask(call)
        if isinstance(asked, Verdict):
            return asked
        asked_id = asked.decision_id
        try:
            decision = await self.client.wait(asked_id, timeout)
        except Timeout:
            try:
                decision = await self.client.cancel(asked_id, f"no answer within {timeout:g} s")
            except SaysoError as e:
                if e.code != "already_resolved":
                    raise
                # Answered in the moment between: the answer counts as given.
                decision = await self.client.get(asked_id)
        return await self.verdict(decision, call)

    async def check(self, call: ToolCall) -> Verdict:
        """The verdict sayso holds for the call right now, without waiting: what a tool reads
        just before it runs. A call nobody asked about is denied (and the approval this
        lookup made for it withdrawn)."""
        asked = await self.ask(call)
        if isinstance(asked, Verdict):
            return asked
        if not asked.replayed:
            await self.client.cancel(asked.decision_id, "the call ran without being asked about")
            return Verdict(
                False,
                "not allowed: no approval was asked for this call before it ran",
                asked.decision_id,
            )
        decision = await self.client.get(asked.decision_id)
        if decision.pending:
            return Verdict(
                False,
                "not allowed: the person has not answered this approval yet",
                decision.decision_id,
            )
        return await self.verdict(decision, call)

    async def verdict(self, decision: Decision, call: ToolCall) -> Verdict:
        """``verdict``, with a cancel's reason read from the audit trail, where sayso keeps it."""
        reason = None
        if decision.status == "cancelled":
            for event in await self.client.audit_trail(decision.decision_id):
                if event.kind == "cancelled" and event.detail.get("reason"):
                    reason = str(event.detail["reason"])
        return verdict(decision, call, reason)


def verdict(decision: Decision, call: ToolCall, cancel_reason: str | None = None) -> Verdict:
    """Allowed only when the person picked Allow on the approval made for this very call."""
    did = decision.decision_id
    if decision.metadata.get(CALL_DIGEST) != call.digest:
        return Verdict(
            False,
            f"not allowed: approval {did} was given for another call than "
            f"{call.tool_name} with these arguments",
            did,
        )
    remark = f": {decision.remark}" if decision.remark else ""
    if decision.status == "answered":
        if decision.outcome == ALLOW:
            return Verdict(True, "allowed by the person", did)
        return Verdict(False, f"denied by the person{remark}", did)
    if decision.status == "declined":
        return Verdict(False, f"the person declined to answer{remark}", did)
    if decision.status == "expired":
        return Verdict(False, "the approval expired with no answer", did)
    if decision.status == "cancelled":
        why = f": {cancel_reason}" if cancel_reason else remark
        return Verdict(False, f"the approval was cancelled{why}", did)
    return Verdict(False, f"not allowed: the approval is {decision.status}", did)
