"""The approval step the framework adapters share: ask sayso about one tool call, and later
read back what the person decided.

Everything a framework hands back on resume (interrupt values, resume payloads, deferred
results, serialized run state) is the agent's to edit, so none of it decides. The gate keeps
two rules instead:

- The approval's ``Idempotency-Key`` comes from the run's id and the framework's tool-call
  id, and its body holds the tool name and the canonical arguments. Asking again for the
  same call returns the same decision; asking with other arguments under the same call id
  is refused by the server (``idempotency_mismatch``), and the gate reads that as a denial.
- Whether the tool runs is read from sayso, by decision id, right before it would run.
  Only an ``Allow`` recorded there lets it through; pending is waited on, and a timeout, an
  expiry, a cancel or a decline is a denial that says why.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import SaysoError, Timeout
from ._models import AskHandle, Decision
from ._sync import Client

ALLOW = "Allow"
DENY = "Deny"


def canonical(args: Mapping[str, Any]) -> str:
    """The arguments as one string, key order and spacing aside: what an approval binds."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def idempotency_key(harness: str, run_id: str, call_id: str) -> str:
    """One key per tool call of one run; long ids are hashed to stay within 255 characters."""
    key = f"{harness}:{run_id}:{call_id}"
    if len(key) <= 200:
        return key
    return f"{harness}:sha256:{hashlib.sha256(key.encode()).hexdigest()}"


@dataclass(frozen=True)
class Verdict:
    """What the person decided about one call, as read from sayso.

    ``allowed`` is true only for an ``Allow`` sayso recorded; ``reason`` says why not (or
    carries the person's remark); ``args`` are the arguments to run with, the person's
    edited command in place when they changed it."""

    allowed: bool
    reason: str
    decision_id: str | None
    args: dict[str, Any]

    def denial_text(self, tool_name: str) -> str:
        """What the model reads in place of the tool's result."""
        return f"The person did not approve `{tool_name}`: {self.reason}"


class ToolGate:
    """Asks sayso about tool calls and reads the answers back, for one framework (``harness``).

    ``wait_timeout`` (seconds, default: until the decision expires) bounds how long a
    resumed call waits for a pending answer; past it the decision is cancelled and the call
    denied. ``editable`` names tools whose ``command`` argument the person may edit on the
    page (the approval's text box); the edited command replaces it when the tool runs. The
    server offers the box for shell tools only (``bash``, ``shell``, ``run_shell_command``,
    ``exec_command``, …: docs/API.md).
    """

    def __init__(
        self,
        client: Client,
        harness: str,
        *,
        wait_timeout: float | None = None,
        ttl: float | None = None,
        editable: frozenset[str] = frozenset(),
        notify: str | None = None,
    ) -> None:
        self.client = client
        self.harness = harness
        self.wait_timeout = wait_timeout
        self.ttl = ttl
        self.editable = editable
        self.notify = notify

    def ask(self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str) -> AskHandle:
        """The approval for this call: made on the first ask, the same one on every later
        ask. ``SaysoError`` with ``code == "idempotency_mismatch"`` when the call id was
        asked before with other arguments."""
        shown = canonical(args)
        approval: dict[str, Any] = {
            "harness": self.harness,
            "tool_name": tool_name,
            "tool_input": json.loads(shown),
            "session_id": run_id[:200],
        }
        editable = tool_name in self.editable and isinstance(args.get("command"), str)
        if editable:
            approval["editable"] = True
        fields: dict[str, Any] = {
            "options": [ALLOW, DENY],
            "allow_other": False,
            "approval": approval,
            "metadata": {"framework": self.harness, "run_id": run_id, "tool_call_id": call_id},
            "idempotency_key": idempotency_key(self.harness, run_id, call_id),
        }
        if self.ttl is not None:
            fields["ttl"] = self.ttl
        if self.notify is not None:
            fields["notify"] = self.notify
        question = f"{self.harness} wants to run {tool_name} {shown}"[:1000]
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
            why = "its arguments differ from the ones the person was asked about"
            return Verdict(False, why, None, dict(args))

    def verdict(
        self, tool_name: str, args: Mapping[str, Any], run_id: str, call_id: str
    ) -> Verdict:
        """Asks (or finds the earlier ask of) this call, then waits for and reads the
        person's answer from sayso. Never raises for an answer that is not an Allow."""
        asked = self.ask_or_refuse(tool_name, args, run_id, call_id)
        if isinstance(asked, Verdict):
            return asked
        return self.read(asked.decision_id, tool_name, args)

    def read(self, decision_id: str, tool_name: str, args: Mapping[str, Any]) -> Verdict:
        """The decision as sayso has it (waited for while pending), checked against the call."""
        d = self.client.get(decision_id)
        if d.pending:
            try:
                d = self.client.wait(decision_id, self.wait_timeout)
            except Timeout:
                d = self._cancel(decision_id, f"no answer within {self.wait_timeout:g} s")
        return self._judge(d, tool_name, args)

    def _cancel(self, decision_id: str, reason: str) -> Decision:
        """Withdraws the question so a late Allow cannot be taken for a call that gave up;
        an answer that arrived first is what counts."""
        try:
            return self.client.cancel(decision_id, reason)
        except SaysoError as e:
            if e.code != "already_resolved":
                raise
            return self.client.get(decision_id)

    def _judge(self, d: Decision, tool_name: str, args: Mapping[str, Any]) -> Verdict:
        def deny(why: str) -> Verdict:
            return Verdict(False, why, d.decision_id, dict(args))

        if d.approval is None or d.approval.tool_name != tool_name:
            return deny(f"decision {d.decision_id} is not an approval of {tool_name}")
        if d.approval.harness != self.harness:
            return deny(f"decision {d.decision_id} was asked by {d.approval.harness}")
        if d.status == "expired":
            return deny("the approval expired with no answer")
        if d.status == "cancelled":
            return deny(f"the approval was cancelled ({self._cancel_reason(d.decision_id)})")
        if d.status != "answered" or d.outcome is None:
            return deny("the person declined to answer")
        if d.outcome != ALLOW:
            return deny(f"denied ({d.remark})" if d.remark else "denied")
        run_args = dict(args)
        if tool_name in self.editable:
            # The Decision does not carry the edit; its answer in the audit trail does.
            edited = self._edited_command(d.decision_id)
            if edited is not None:
                run_args["command"] = edited
        return Verdict(True, d.remark or "allowed", d.decision_id, run_args)

    def _cancel_reason(self, decision_id: str) -> str:
        """The reason the cancel gave, which the audit trail keeps."""
        for event in self.client.audit_trail(decision_id):
            if event.kind == "cancelled" and event.detail.get("reason"):
                return str(event.detail["reason"])
        return "no reason given"

    def _edited_command(self, decision_id: str) -> str | None:
        """The command the person typed on the page, from the audit trail's answer."""
        for event in self.client.audit_trail(decision_id):
            if event.kind == "answered" and isinstance(event.detail.get("edited_command"), str):
                return str(event.detail["edited_command"])
        return None
