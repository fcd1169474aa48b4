"""Google ADK's tool confirmations, answered by a person through sayso.

A tool made with ``SaysoConfirmations.tool`` is an ADK ``FunctionTool`` that asks for
confirmation (``tool_context.request_confirmation``): ADK pauses the call with an
``adk_request_confirmation`` function call. ``SaysoConfirmations.run`` asks sayso for each
one (the person sees the tool and its arguments on their phone), waits, and sends the answer
back as ADK's confirmation response (``{"confirmed": ...}``). Only this module imports ADK
(``pip install 'sayso[adk]'``).

The confirmation response is a message anyone driving the runner can write, so it is not
trusted: the gated tool re-reads the decision from sayso just before it runs, by the session
and the call's id, and runs only when the person allowed this very call; otherwise the model
reads the reason as the tool's result. A session is resumed by its id (``run`` with no
message), from the session store, after the process that waited died.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from ._async import AsyncClient
from ._tool_gate import AsyncToolGate, GateTimeout, Verdict, arguments_object

HARNESS = "google-adk"
# ADK's name for the function call that pauses a tool for confirmation.
REQUEST_CONFIRMATION = "adk_request_confirmation"


class SaysoConfirmations(GateTimeout):
    """Answers ADK's tool confirmations through sayso. ``timeout`` (seconds) bounds each
    wait; when it passes the approval is cancelled and the call denied with that reason.
    ``ttl`` and ``project`` go to every approval asked."""

    def __init__(
        self,
        client: AsyncClient,
        *,
        timeout: float | None = None,
        ttl: float | timedelta | None = None,
        project: str | None = None,
    ) -> None:
        self._gate = AsyncToolGate(client, HARNESS, wait_timeout=timeout, ttl=ttl, project=project)

    def tool(self, func: Callable[..., Any]) -> FunctionTool:
        """``func`` as an ADK tool that needs confirmation and runs only when sayso says the
        person allowed this call."""
        return _SaysoTool(func, self._gate)

    async def run(
        self,
        runner: Runner,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | None = None,
    ) -> list[Event]:
        """``runner.run_async`` until the session stops asking for confirmations, answering
        each through sayso; the events of the last round. With no ``new_message`` the session
        is resumed: the confirmations it still waits on are asked (once: an approval already
        asked is found again) and answered."""
        message = new_message
        if message is None:
            session = await runner.session_service.get_session(
                app_name=runner.app_name, user_id=user_id, session_id=session_id
            )
            if session is None:
                raise ValueError(f"no ADK session {session_id!r} of user {user_id!r} to resume")
            message = await self.answers(session.events, session_id)
            if message is None:
                raise ValueError(f"session {session_id!r} waits on no tool confirmation")
        while True:
            events = [
                e
                async for e in runner.run_async(
                    user_id=user_id, session_id=session_id, new_message=message
                )
            ]
            message = await self.answers(events, session_id)
            if message is None:
                return events

    async def withdraw(self, session_id: str) -> list[str]:
        """Withdraws (as ``abandoned``) every approval of the session still waiting on the
        person, for a run given up for good: the person's page says the agent stopped waiting,
        and a resume after it denies those calls. Returns the decision ids withdrawn."""
        return await self._gate.withdraw(session_id)

    async def answers(self, events: list[Event], session_id: str) -> types.Content | None:
        """The user message answering every confirmation ``events`` ask for and do not
        answer themselves, each asked of the person through sayso; ``None`` when none is
        waiting."""
        answered = {
            r.id
            for e in events
            for r in e.get_function_responses()
            if r.name == REQUEST_CONFIRMATION
        }
        waiting = []
        for event in events:
            for asked in event.get_function_calls():
                if asked.name != REQUEST_CONFIRMATION or asked.id in answered:
                    continue
                original = (asked.args or {}).get("originalFunctionCall") or {}
                if not original.get("id") or not original.get("name"):
                    raise ValueError(f"a tool confirmation without the call it is for: {asked!r}")
                args = arguments_object(original.get("args") or {})
                waiting.append((asked.id, (original["name"], args, original["id"])))
        # Every confirmation is asked before any is waited on: one batch on the person's phone.
        found = await self._gate.verdicts([call for _, call in waiting], session_id)
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=confirmation_id,
                    name=REQUEST_CONFIRMATION,
                    response={"confirmed": verdict.allowed, "payload": {"reason": verdict.reason}},
                )
            )
            for (confirmation_id, _), verdict in zip(waiting, found, strict=True)
        ]
        return types.Content(role="user", parts=parts) if parts else None


class _SaysoTool(FunctionTool):
    """A ``FunctionTool`` that asks for confirmation itself (``request_confirmation``) and,
    once answered, checks with sayso that the person allowed this very call before it runs.
    It does not use ``require_confirmation=True``: with it ADK answers a refusal with a fixed
    text of its own, and the model would never read the person's reason."""

    def __init__(self, func: Callable[..., Any], gate: AsyncToolGate) -> None:
        super().__init__(func)
        self._sayso = gate

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            tool_context.request_confirmation(
                hint=f"The person approves or denies {self.name}() through sayso."
            )
            # The pause is no result for the model to read.
            tool_context.actions.skip_summarization = True
            return {"error": "This tool call waits for the person's approval."}
        call_id = tool_context.function_call_id
        if not call_id:
            return {"error": denial(Verdict(False, "the call has no id to check it by"))}
        # Not waited for: the confirmation answers the pause, so an approval still pending
        # here means the answer was written by someone other than the person.
        found = await self._sayso.check(
            self.name, arguments_object(args), tool_context.session.id, call_id, wait=False
        )
        if not found.allowed:
            return {"error": denial(found)}
        if not confirmation.confirmed:
            return {"error": denial(Verdict(False, "the confirmation sent back said no"))}
        return await super().run_async(args=args, tool_context=tool_context)


def denial(verdict: Verdict) -> str:
    """What the model reads in place of the tool's result."""
    return f"sayso: the tool did not run: {verdict.reason}"
