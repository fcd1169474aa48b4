"""sayso for Pydantic AI: tools marked ``requires_approval=True`` are approved by a person
on their phone.

``SaysoApprovals`` is an agent capability. When a run pauses on such calls (its output is
``DeferredToolRequests``), it asks sayso about each one, right away; ``decide`` waits for the
answers and turns them into the ``DeferredToolResults`` the next run takes. Before an
approved call runs, the capability reads the person's answer from sayso again, so
``DeferredToolResults`` built or edited by anyone else (``True``, ``override_args``) cannot
run a call the person did not allow.

The idempotency key is the run's ``conversation_id`` (kept in the message history) and the
model's tool-call id; the approval holds the tool name and the arguments the model gave
(docs/CLIENTS.md, "Pydantic AI"). Needs ``pip install 'sayso[pydantic-ai]'``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

from ._extra import framework_imports

with framework_imports(__name__, "Pydantic AI", "pydantic-ai"):
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelMessage, ToolCallPart
    from pydantic_ai.tools import (
        DeferredToolRequests,
        DeferredToolResults,
        RunContext,
        ToolApproved,
        ToolDefinition,
        ToolDenied,
    )

from ._sync import Client
from ._tool_gate import ToolGate, Verdict

__all__ = ["HARNESS", "SaysoApprovals", "ToolGate", "Verdict", "conversation_of"]

HARNESS = "pydantic-ai"


def conversation_of(messages: Sequence[ModelMessage]) -> str:
    """The conversation id a message history carries: what a run resumed from it uses."""
    for message in reversed(messages):
        if message.conversation_id:
            return message.conversation_id
    raise ValueError("the message history carries no conversation_id: pass the run's own")


class SaysoApprovals(AbstractCapability[Any]):
    """Puts the agent's approval-requiring tool calls to a person through sayso.

    ``tools`` limits it to those names (default: every tool with ``requires_approval``).
    ``editable`` names shell tools whose ``command`` the person may edit on the page;
    ``wait_timeout``, ``ttl`` and ``notify`` are ``ToolGate``'s.
    """

    def __init__(
        self,
        client: Client,
        *,
        tools: Iterable[str] | None = None,
        editable: Iterable[str] = (),
        wait_timeout: float | None = None,
        ttl: float | None = None,
        notify: str | None = None,
    ) -> None:
        self.only = frozenset(tools) if tools is not None else None
        self.gate = ToolGate(
            client,
            HARNESS,
            wait_timeout=wait_timeout,
            ttl=ttl,
            editable=frozenset(editable),
            notify=notify,
        )

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a client: not for agent specs

    def _gated(self, tool_def: ToolDefinition) -> bool:
        if self.only is not None:
            return tool_def.name in self.only
        return tool_def.kind == "unapproved"

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """The run pauses: the person is asked now; the calls go back to the caller."""
        for call in requests.approvals:
            if self.only is None or call.tool_name in self.only:
                await asyncio.to_thread(self._ask, call, _conversation(ctx))
        return None

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        """An approved call runs only if sayso says the person allowed it, with the
        arguments the person saw (or edited), whatever the results said."""
        if not self._gated(tool_def):
            return await handler(args)
        # The pause asked the person (``handle_deferred_tool_calls``): a call it never asked
        # about is denied rather than asked now; a pending one is waited for.
        verdict = await asyncio.to_thread(
            self.gate.check,
            call.tool_name,
            call.args_as_dict(),
            _conversation(ctx),
            call.tool_call_id,
            wait=True,
        )
        if not verdict.allowed:
            return verdict.denial_text(call.tool_name)
        return await handler({**args, **verdict.args})

    def _ask(self, call: ToolCallPart, conversation_id: str) -> None:
        self.gate.ask_or_refuse(
            call.tool_name, call.args_as_dict(), conversation_id, call.tool_call_id
        )

    def decide(self, requests: DeferredToolRequests, conversation_id: str) -> DeferredToolResults:
        """Waits for the person's answers to a paused run's approvals (asking any not yet
        asked) and returns them as ``DeferredToolResults``: an Allow approves, anything
        else is a ``ToolDenied`` whose message says why. Pass the result's
        ``conversation_id`` (or ``conversation_of(messages)`` in a new process)."""
        gated = [c for c in requests.approvals if self.only is None or c.tool_name in self.only]
        found = self.gate.verdicts(
            [(c.tool_name, c.args_as_dict(), c.tool_call_id) for c in gated], conversation_id
        )
        approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
        for call, verdict in zip(gated, found, strict=True):
            if verdict.allowed:
                approvals[call.tool_call_id] = ToolApproved()
            else:
                approvals[call.tool_call_id] = ToolDenied(verdict.denial_text(call.tool_name))
        return DeferredToolResults(approvals=approvals)

    def withdraw(self, conversation_id: str) -> list[str]:
        """Withdraws (as ``abandoned``) every approval of the run still waiting on the person,
        for a run given up for good; a resume after it denies those calls. Returns the
        decision ids withdrawn."""
        return self.gate.withdraw(conversation_id)


def _conversation(ctx: RunContext[Any]) -> str:
    if not ctx.conversation_id:
        raise ValueError("sayso approvals need the run's conversation_id, and this run has none")
    return ctx.conversation_id
