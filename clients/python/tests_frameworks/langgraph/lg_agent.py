"""A LangChain agent with one gated tool, a scripted chat model and a SQLite checkpointer:
what the tests drive, in the test process or as a process of its own that they kill.

The model is LangChain's fake chat model taught to do one thing: ask for the tool call the
run was started with, then repeat what the tool returned, so the test reads what the model
read. The tool counts its runs in a file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

import sayso
from sayso.langgraph import SaysoApproval


class ScriptedModel(FakeMessagesListChatModel):
    """Calls `run_shell_command` once for each call in the JSON of the first human message,
    all in one step; then answers with the text of the tool results, joined by " | "."""

    responses: list[BaseMessage] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], *a: Any, **kw: Any) -> ChatResult:
        if isinstance(messages[-1], ToolMessage):
            said = []
            for m in reversed(messages):
                if not isinstance(m, ToolMessage):
                    break
                said.insert(0, str(m.content))
            reply = AIMessage(content=f"tool said: {' | '.join(said)}")
        else:
            asked = json.loads(next(m for m in messages if isinstance(m, HumanMessage)).content)
            tool_calls = [
                {"name": "run_shell_command", "args": {"command": command}, "id": call_id}
                for command, call_id in asked
            ]
            reply = AIMessage(content="", tool_calls=tool_calls)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build(client: sayso.Client, db: Path | None, runs: Path, **gate: Any) -> Any:
    """The agent; with `db` None, an in-memory checkpointer (which also runs `ainvoke`)."""

    @tool
    def run_shell_command(command: str) -> str:
        """Runs a shell command."""
        with runs.open("a") as f:
            f.write(command + "\n")
        return f"ran {command}"

    gate.setdefault("wait_timeout", 30)  # a test that goes wrong fails, not hangs
    saver = (
        InMemorySaver() if db is None else SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    )
    middleware: list[Any] = [SaysoApproval(client, ["run_shell_command"], notify="none", **gate)]
    if gate.get("behind_review"):
        # LangChain's own review step pauses; sayso's middleware checks what then runs.
        review = {"allowed_decisions": ["approve", "edit", "reject"]}
        hitl = HumanInTheLoopMiddleware({"run_shell_command": review}, interrupt_mode="per_call")
        middleware.insert(0, hitl)
    return create_agent(
        model=ScriptedModel(),
        tools=[run_shell_command],
        middleware=middleware,
        checkpointer=saver,
    )


def start_input(command: str, call_id: str, *more: tuple[str, str]) -> dict[str, Any]:
    """The first message: the (command, call id) pairs the model calls the tool with."""
    text = json.dumps([(command, call_id), *more])
    return {"messages": [HumanMessage(content=text)]}


def config(thread: str) -> dict[str, Any]:
    """The run configuration of the thread ``thread``."""
    return {"configurable": {"thread_id": thread}}


def tool_results(result: dict[str, Any]) -> list[str]:
    """What the tool returned, each time, in a run's result."""
    return [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]


if __name__ == "__main__":
    # python lg_agent.py start|resume DB RUNS THREAD [COMMAND CALL_ID]...: the agent process
    # the cold-resume tests kill, and the new one that resumes its run (the calls are the
    # start's; a resume takes them from the checkpoint).
    from sayso.langgraph import pending_approvals, resume

    mode, db, runs, thread = sys.argv[1:5]
    config = {"configurable": {"thread_id": thread}}
    with sayso.Client(os.environ["SAYSO_URL"], os.environ["SAYSO_KEY"]) as client:
        agent = build(client, Path(db), Path(runs))
        if mode == "start":
            pairs = list(zip(sys.argv[5::2], sys.argv[6::2], strict=True))
            agent.invoke(start_input(*pairs[0], *pairs[1:]), config)
            for asked in pending_approvals(agent, config):
                print("PAUSED", asked["decision_id"], flush=True)
        result = resume(agent, config)
    print("FINAL", result["messages"][-1].content, flush=True)
