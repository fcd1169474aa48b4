"""A Google ADK agent driven offline: a ``BaseLlm`` of our own that calls the gated tool first
and then says what the tool returned. No network and no API key. The tool appends a line to a
file each time it runs, so a test (or a process started after another was killed) sees how
often it ran, and with which arguments.
Sessions live in ADK's own SQLite session store, so a new process resumes one by its id."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

APP = "deployer"
USER = "dev"


class ToolThenEcho(BaseLlm):
    """Calls ``tool`` with ``arguments`` (a fixed call id, as a model replaying its own turn
    would), and with each of ``more``'s (arguments, call id) pairs in the same step; then
    answers with what the tools returned, as the model read it, joined by " | "."""

    tool: str
    arguments: dict[str, Any]
    call_id: str
    more: list[tuple[dict[str, Any], str]] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        # Only the last turn counts: after a new request from the user it calls again.
        last = llm_request.contents[-1].parts or [] if llm_request.contents else []
        answers = [
            part.function_response
            for part in last
            if part.function_response and part.function_response.name == self.tool
        ]
        if answers:
            said = " | ".join(json.dumps(a.response, sort_keys=True) for a in answers)
            parts = [types.Part(text=f"the tool said: {said}")]
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(id=c, name=self.tool, args=a))
                for a, c in [(self.arguments, self.call_id), *self.more]
            ]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def deploy_runner(
    counter: Path,
    target: str,
    call_id: str,
    make_tool: Callable[[Any], Any],
    *more: tuple[str, str],
) -> Runner:
    """A runner over the SQLite session store beside ``counter``, whose agent's ``deploy`` tool
    needs confirmation; the model deploys to ``target`` (and to each of ``more``'s (target,
    call id) pairs, in the same step)."""

    def deploy(target: str) -> dict[str, str]:
        """Deploys the build to a target."""
        with counter.open("a") as f:
            f.write(target + "\n")
        return {"result": f"deployed to {target}"}

    model = ToolThenEcho(
        model="scripted",
        tool="deploy",
        arguments={"target": target},
        call_id=call_id,
        more=[({"target": t}, c) for t, c in more],
    )
    agent = LlmAgent(
        name=APP, model=model, instruction="Deploy when asked.", tools=[make_tool(deploy)]
    )
    sessions = SqliteSessionService(str(counter.parent / "sessions.db"))
    return Runner(app_name=APP, agent=agent, session_service=sessions)


def last_text(events: list[Any]) -> str:
    """The model's last words in ``events``."""
    texts = [p.text for e in events if e.content for p in e.content.parts or [] if p.text]
    return texts[-1] if texts else ""
