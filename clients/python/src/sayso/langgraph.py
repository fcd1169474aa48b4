"""sayso for LangGraph: a gated tool call pauses the graph with ``interrupt``, the person
answers on their phone, and ``Command(resume=…)`` continues it.

``SaysoApproval`` is a LangChain agent middleware (``create_agent(..., middleware=[…])``)
that gates the tools it names; ``approve`` (one call) and ``approve_all`` (the calls of one
node) are the same step for a graph of your own, called inside a node. Either needs a
checkpointer, so a new process can resume a paused run by its ``thread_id`` (``resume``).

Exactly once: LangGraph runs a node again from its start when it is resumed after a pause.
``create_agent`` sends each tool call to a task of its own (``Send``), so the middleware
pauses one call per task, and a call that ran is kept as its task's result and not run again
by a later resume. In a node of your own, pause once: ``approve_all`` for every call the
node runs, then run the tools.

The resume value carries nothing: whatever it says, the gate asks sayso again for the
same call (same idempotency key: thread id + tool-call id) and reads the person's answer
from there (docs/CLIENTS.md, "LangGraph"). Needs ``pip install 'sayso[langgraph]'``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from ._extra import framework_imports

with framework_imports(__name__, "LangGraph and LangChain", "langgraph"):
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import ToolMessage
    from langgraph.config import get_config
    from langgraph.types import Command, interrupt

from ._sync import Client
from ._tool_gate import ToolGate, Verdict

__all__ = [
    "HARNESS",
    "SaysoApproval",
    "ToolGate",
    "Verdict",
    "approve",
    "approve_all",
    "pending_approvals",
    "resume",
    "review_answers",
    "run",
    "withdraw",
]

HARNESS = "langgraph"

# Mark the interrupts this module raises (one approval, or a node's several), so `resume`
# answers only its own.
_MARK = "sayso_approval"
_MARK_ALL = "sayso_approvals"


def _thread_id() -> str:
    configurable = get_config().get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if not thread_id:
        raise ValueError(
            "sayso approvals need a checkpointer and a thread: pass "
            'config={"configurable": {"thread_id": …}} to invoke'
        )
    return str(thread_id)


def _approval(
    handle_id: str, web_url: str, name: str, args: Mapping[str, Any], call_id: str
) -> dict[str, Any]:
    """What a pause shows of one approval: never an answer link."""
    return {
        "type": _MARK,
        "decision_id": handle_id,
        "web_url": web_url,
        "tool_name": name,
        "args": dict(args),
        "tool_call_id": call_id,
    }


def _pause(handle_id: str, web_url: str, name: str, args: Mapping[str, Any], call_id: str) -> None:
    """The framework's own pause; what it is resumed with is ignored on purpose."""
    interrupt(_approval(handle_id, web_url, name, args, call_id))


def approve(gate: ToolGate, tool_name: str, args: Mapping[str, Any], call_id: str) -> Verdict:
    """The approval step inside a graph node: asks sayso (once per thread and call id),
    pauses the graph, and on resume returns what the person decided, read from sayso."""
    asked = gate.ask_or_refuse(tool_name, args, _thread_id(), call_id)
    if isinstance(asked, Verdict):
        return asked
    _pause(asked.decision_id, asked.web_url, tool_name, args, call_id)
    return gate.read(asked.decision_id, tool_name, args)


def approve_all(
    gate: ToolGate, calls: Sequence[tuple[str, Mapping[str, Any], str]]
) -> list[Verdict]:
    """``approve`` for every call a node runs, given as (tool name, arguments, call id): all
    are asked at once (the person sees them together), the graph pauses once for all of
    them, and on resume the verdicts come back in order, each waited for. Run the tools after
    it returns: with one pause in the node, no tool has run when LangGraph runs the node
    again on resume."""
    thread_id = _thread_id()
    asked = [gate.ask_or_refuse(name, args, thread_id, call_id) for name, args, call_id in calls]
    waiting = [
        _approval(a.decision_id, a.web_url, name, args, call_id)
        for a, (name, args, call_id) in zip(asked, calls, strict=True)
        if not isinstance(a, Verdict)
    ]
    if waiting:
        interrupt({"type": _MARK_ALL, "approvals": waiting})
    return [
        a if isinstance(a, Verdict) else gate.read(a.decision_id, name, args)
        for a, (name, args, _) in zip(asked, calls, strict=True)
    ]


def _denied(call: Mapping[str, Any], verdict: Verdict) -> ToolMessage:
    return ToolMessage(
        content=verdict.denial_text(call["name"]),
        name=call["name"],
        tool_call_id=call["id"],
        status="error",
    )


class SaysoApproval(AgentMiddleware):
    """Gates the named tools of a ``create_agent`` agent on a person's answer in sayso.

    An Allow runs the tool (with the person's edited ``command`` when the tool is in
    ``editable``); anything else returns the reason to the model as the tool's result and
    the tool does not run. ``wait_timeout``, ``ttl`` and ``notify`` are ``ToolGate``'s.

    ``behind_review=True`` is for an agent that pauses with LangChain's own
    ``HumanInTheLoopMiddleware`` (``interrupt_mode="per_call"``, listed before this one) and
    is resumed with ``review_answers``: this middleware then does not pause, it only checks
    that the call about to run is the one the person allowed in sayso, with the arguments
    they allowed, whatever decision the review was resumed with.
    """

    def __init__(
        self,
        client: Client,
        tools: Iterable[str],
        *,
        editable: Iterable[str] = (),
        wait_timeout: float | None = None,
        ttl: float | None = None,
        notify: str | None = None,
        behind_review: bool = False,
    ) -> None:
        super().__init__()
        self.behind_review = behind_review
        # Not `tools`: a middleware's `tools` are tools it adds to the agent.
        self.gated = frozenset(tools)
        self.gate = ToolGate(
            client,
            HARNESS,
            wait_timeout=wait_timeout,
            ttl=ttl,
            editable=frozenset(editable),
            notify=notify,
        )

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        call = request.tool_call
        if call["name"] not in self.gated:
            return handler(request)
        if self.behind_review:
            verdict = self._reviewed(request)
            if not verdict.allowed:
                return _denied(call, verdict)
            return handler(request)
        verdict = approve(self.gate, call["name"], call["args"], call["id"])
        if not verdict.allowed:
            return _denied(call, verdict)
        if verdict.args != call["args"]:
            request = request.override(tool_call={**call, "args": verdict.args})
        return handler(request)

    def _reviewed(self, request: Any) -> Verdict:
        """The person's answer about the call as the model made it (the review may have
        replaced its arguments since), checked against the arguments about to run."""
        call = request.tool_call
        asked = _model_call(request.state, call["id"]) or call
        verdict = self.gate.verdict(call["name"], asked["args"], _thread_id(), call["id"])
        if verdict.allowed and verdict.args != call["args"]:
            why = "the arguments about to run are not the ones the person allowed"
            return Verdict(False, why, verdict.decision_id, dict(call["args"]))
        return verdict

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        call = request.tool_call
        if call["name"] not in self.gated:
            return await handler(request)
        if self.behind_review:
            verdict = await asyncio.to_thread(self._reviewed, request)
            if not verdict.allowed:
                return _denied(call, verdict)
            return await handler(request)
        name, args, call_id = call["name"], call["args"], call["id"]
        # The client blocks; a thread keeps the event loop free (the graph's config
        # travels with the copied context).
        asked = await asyncio.to_thread(self.gate.ask_or_refuse, name, args, _thread_id(), call_id)
        if isinstance(asked, Verdict):
            return _denied(call, asked)
        _pause(asked.decision_id, asked.web_url, name, args, call_id)
        verdict = await asyncio.to_thread(self.gate.read, asked.decision_id, name, args)
        if not verdict.allowed:
            return _denied(call, verdict)
        if verdict.args != args:
            request = request.override(tool_call={**call, "args": verdict.args})
        return await handler(request)


def _model_call(state: Any, call_id: str) -> dict[str, Any] | None:
    """The tool call as the model's message holds it (a review's edit does not change it)."""
    messages = state.get("messages", []) if isinstance(state, Mapping) else []
    for message in reversed(messages):
        for call in getattr(message, "tool_calls", None) or []:
            if call.get("id") == call_id:
                return dict(call)
    return None


def review_answers(
    graph: Any, config: Mapping[str, Any], gate: ToolGate
) -> dict[str, dict[str, Any]]:
    """Answers for the pending reviews of LangChain's ``HumanInTheLoopMiddleware``
    (``interrupt_mode="per_call"``), from sayso: each call is asked there (once per thread and
    call id) and waited for; an Allow is ``approve``, or ``edit`` with the person's edited
    command; anything else is ``reject`` with the reason. Resume with
    ``graph.invoke(Command(resume=answers), config)``; keep ``SaysoApproval(...,
    behind_review=True)`` in the agent so only what the person allowed runs."""
    thread_id = str((config.get("configurable") or {}).get("thread_id") or "")
    if not thread_id:
        raise ValueError('review_answers needs config={"configurable": {"thread_id": …}}')
    reviews = [
        (pending.id, pending.value)
        for pending in graph.get_state(config).interrupts
        if isinstance(pending.value, Mapping) and pending.value.get("type") == "tool_approval"
    ]
    # All of them asked before any is waited for: the person sees the step's calls together.
    found = gate.verdicts(
        [(v["name"], v["args"], v["tool_call_id"]) for _, v in reviews], thread_id
    )
    answers: dict[str, dict[str, Any]] = {}
    for (interrupt_id, value), verdict in zip(reviews, found, strict=True):
        name, args = value["name"], value["args"]
        if not verdict.allowed:
            answers[interrupt_id] = {"type": "reject", "message": verdict.denial_text(name)}
        elif verdict.args != args:
            answers[interrupt_id] = {
                "type": "edit",
                "edited_action": {"name": name, "args": verdict.args},
            }
        else:
            answers[interrupt_id] = {"type": "approve"}
    return answers


def _ours(value: Any) -> list[dict[str, Any]]:
    """The approvals an interrupt of this module waits on; none for anyone else's."""
    if not isinstance(value, Mapping):
        return []
    if value.get("type") == _MARK:
        return [dict(value)]
    if value.get("type") == _MARK_ALL:
        return [dict(a) for a in value.get("approvals") or [] if isinstance(a, Mapping)]
    return []


def pending_approvals(graph: Any, config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sayso approvals a paused run waits on: decision id, tool name, arguments."""
    state = graph.get_state(config)
    return [a for i in state.interrupts for a in _ours(i.value)]


def resume(graph: Any, config: Mapping[str, Any]) -> Any:
    """Continues a paused run, in this process or a new one (same checkpointer and
    ``thread_id``). The gated calls wait for the person's answers inside the graph."""
    state = graph.get_state(config)
    ours = {i.id: {"resumed_by": "sayso"} for i in state.interrupts if _ours(i.value)}
    return graph.invoke(Command(resume=ours), config)


def run(graph: Any, input: Any, config: Mapping[str, Any]) -> Any:
    """``invoke`` until the run ends or pauses for something other than a sayso approval."""
    result = graph.invoke(input, config)
    while pending_approvals(graph, config):
        result = resume(graph, config)
    return result


def withdraw(client: Client, config: Mapping[str, Any]) -> list[str]:
    """Withdraws (as ``abandoned``) every approval of the thread still waiting on the person,
    for a run given up for good: the person's page says the agent stopped waiting, and a
    resume after it denies those calls. Returns the decision ids withdrawn."""
    thread_id = str((config.get("configurable") or {}).get("thread_id") or "")
    if not thread_id:
        raise ValueError('withdraw needs config={"configurable": {"thread_id": …}}')
    return ToolGate(client, HARNESS).withdraw(thread_id)
