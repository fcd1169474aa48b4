"""The OpenAI Agents SDK's tool approvals, answered by a person through sayso.

A tool gated with ``needs_approval`` pauses the run: ``result.interruptions`` lists the calls
waiting. ``SaysoApprovals`` asks sayso for each one (the person sees the tool and its
arguments on their phone), waits, and applies the answer with ``state.approve(item)`` or
``state.reject(item, rejection_message=...)``, so a denied call's reason is what the model
reads as the tool's result. Only this module imports the SDK
(``pip install 'sayso[openai-agents]'``).

The run's serialized state (``state.to_json()``) is the agent's to keep and so the agent's to
edit: nothing in it is trusted. Each interruption's answer is re-read from sayso before the
run resumes, and every gated tool checks sayso again just before it runs (``gate``), so a
state edited to say "approved" runs nothing the person did not allow for that exact call.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from agents import Agent, FunctionTool, Runner, RunResult, RunState
from agents.tool_context import ToolContext

from ._async import AsyncClient
from ._tool_gate import AsyncToolGate, GateTimeout, Verdict, arguments_object

HARNESS = "openai-agents"


class SaysoApprovals(GateTimeout):
    """The approvals of one run: ``run_id`` names it (keep it with the saved state), so the
    approval of each tool call is asked once, however often the run is resumed.

    ``timeout`` (seconds) bounds each wait; when it passes the approval is cancelled and the
    call denied with that reason. ``ttl`` and ``project`` go to every approval asked.
    """

    def __init__(
        self,
        client: AsyncClient,
        run_id: str,
        *,
        timeout: float | None = None,
        ttl: float | timedelta | None = None,
        project: str | None = None,
    ) -> None:
        if not run_id:
            raise ValueError("SaysoApprovals needs a run_id: the id the run is resumed by")
        self.run_id = run_id
        self._gate = AsyncToolGate(client, HARNESS, wait_timeout=timeout, ttl=ttl, project=project)

    def gate(self, tool: FunctionTool) -> FunctionTool:
        """A copy of ``tool`` that pauses for approval and, when it is about to run, checks
        with sayso that the person allowed this very call; otherwise the model gets the
        reason instead of the tool's result."""
        if not isinstance(tool, FunctionTool):
            raise TypeError(f"gate() takes a FunctionTool (from @function_tool), not {tool!r}")
        invoke = tool.on_invoke_tool
        name = tool.name

        async def checked(ctx: ToolContext[Any], input_json: str) -> Any:
            # Not waited for: the run pauses before the tool, so an unanswered approval here
            # means the state was resumed past that pause without an answer.
            found = await self._gate.check(
                name, arguments_object(input_json), self.run_id, ctx.tool_call_id, wait=False
            )
            if not found.allowed:
                return denial(found)
            return await invoke(ctx, input_json)

        gated = copy.copy(tool)
        gated.on_invoke_tool = checked
        gated.needs_approval = True
        return gated

    async def resolve(self, state: RunState[Any, Any]) -> RunState[Any, Any]:
        """Asks the person about every call the run waits on, all of them before waiting on
        any (one batch on the person's phone), and records each answer in ``state``,
        overwriting whatever the state said of that call."""
        items = state.get_interruptions()
        calls = []
        for item in items:
            if not item.call_id or not item.name:
                raise ValueError(f"an interruption without a call id or tool name: {item!r}")
            calls.append((item.name, arguments_object(item.arguments), item.call_id))
        found = await self._gate.verdicts(calls, self.run_id)
        for item, verdict in zip(items, found, strict=True):
            if verdict.allowed:
                state.approve(item)
            else:
                state.reject(item, rejection_message=denial(verdict))
        return state

    async def withdraw(self) -> list[str]:
        """Withdraws (as ``abandoned``) every approval of this run still waiting on the person,
        for a run given up for good: the person's page says the agent stopped waiting, and a
        resume after it denies those calls. Returns the decision ids withdrawn."""
        return await self._gate.withdraw(self.run_id)

    async def run(
        self,
        agent: Agent[Any],
        input: str | list[Any] | RunState[Any, Any],
        *,
        save: Callable[[dict[str, Any]], None] | None = None,
        **runner_kwargs: Any,
    ) -> RunResult:
        """``Runner.run`` until the run ends, asking the person at every pause. ``save`` is
        given the serialized state before each wait, for a resume after a crash: pass the
        state back (``RunState.from_json``) as ``input`` with the same ``run_id``."""
        if isinstance(input, RunState):
            await self.resolve(input)
        result = await Runner.run(agent, input, **runner_kwargs)
        while result.interruptions:
            state = result.to_state()
            if save is not None:
                save(state.to_json())
            await self.resolve(state)
            result = await Runner.run(agent, state, **runner_kwargs)
        return result


def denial(verdict: Verdict) -> str:
    """What the model reads in place of the tool's result."""
    return f"sayso: the tool did not run: {verdict.reason}"
