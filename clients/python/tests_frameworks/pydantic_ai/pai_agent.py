"""A Pydantic AI agent with one approval-requiring tool, driven by a FunctionModel: what the
tests run, in the test process or as a process of their own that they kill.

The model asks for the tool call the run was started with (a JSON prompt), then repeats
what the tool returned, so the test reads what the model read. The tool counts its runs
in a file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

import sayso
from sayso.pydantic_ai import SaysoApprovals

REQUESTS = TypeAdapter(DeferredToolRequests)


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls the tool once for each (command, call id) pair of the JSON prompt, all in one
    step; then repeats the tool results, joined by " | "."""
    last = messages[-1]
    returned = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returned:
        said = " | ".join(str(p.content) for p in returned)
        return ModelResponse(parts=[TextPart(f"tool said: {said}")])
    prompt = next(
        p.content
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    )
    return ModelResponse(
        parts=[
            ToolCallPart("run_shell_command", {"command": command}, tool_call_id=call_id)
            for command, call_id in json.loads(str(prompt))
        ]
    )


def build(client: sayso.Client, runs: Path, **gate: Any) -> tuple[Agent[None, Any], SaysoApprovals]:
    gate.setdefault("wait_timeout", 30)  # a test that goes wrong fails, not hangs
    approvals = SaysoApprovals(client, notify="none", **gate)
    agent: Agent[None, Any] = Agent(
        FunctionModel(scripted),
        output_type=[str, DeferredToolRequests],
        capabilities=[approvals],
    )

    @agent.tool_plain(requires_approval=True)
    def run_shell_command(command: str) -> str:
        """Runs a shell command."""
        with runs.open("a") as f:
            f.write(command + "\n")
        return f"ran {command}"

    return agent, approvals


def prompt(command: str, call_id: str, *more: tuple[str, str]) -> str:
    """The prompt: the (command, call id) pairs the model calls the tool with."""
    return json.dumps([(command, call_id), *more])


if __name__ == "__main__":
    # python pai_agent.py start|resume STATE RUNS [COMMAND CALL_ID]...: the agent process the
    # cold-resume tests kill, and the new one that resumes its run from the saved state (the
    # calls are the start's; a resume takes them from there).
    mode, state, runs = sys.argv[1:4]
    saved = Path(state)
    with sayso.Client(os.environ["SAYSO_URL"], os.environ["SAYSO_KEY"]) as client:
        agent, approvals = build(client, Path(runs))
        if mode == "start":
            pairs = list(zip(sys.argv[4::2], sys.argv[5::2], strict=True))
            paused = agent.run_sync(prompt(*pairs[0], *pairs[1:]))
            saved.write_text(
                json.dumps(
                    {
                        "messages": json.loads(paused.all_messages_json()),
                        "requests": REQUESTS.dump_python(paused.output, mode="json"),
                    }
                )
            )
            print("PAUSED", paused.conversation_id, flush=True)
        data = json.loads(saved.read_text())
        messages = ModelMessagesTypeAdapter.validate_python(data["messages"])
        requests = REQUESTS.validate_python(data["requests"])
        results = approvals.decide(requests, sayso.pydantic_ai.conversation_of(messages))
        done = agent.run_sync(message_history=messages, deferred_tool_results=results)
    print("FINAL", done.output, flush=True)
