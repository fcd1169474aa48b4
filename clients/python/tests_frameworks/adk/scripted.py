"""A Google ADK agent driven offline: a ``BaseLlm`` of our own that calls the gated tool first
and then says what the tool returned. No network and no API key. The tool counts its runs in
a file, so a test (or a process started after another was killed) sees how often it ran.
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
    would), then answers with what the tool returned, as the model read it."""

    tool: str
    arguments: dict[str, Any]
    call_id: str

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
            said = json.dumps(answers[-1].response, sort_keys=True)
            part = types.Part(text=f"the tool said: {said}")
        else:
            call = types.FunctionCall(id=self.call_id, name=self.tool, args=self.arguments)
            part = types.Part(function_call=call)
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def deploy_runner(
    counter: Path, target: str, call_id: str, make_tool: Callable[[Any], Any]
) -> Runner:
    """A runner over the SQLite session store beside ``counter``, whose agent's ``deploy`` tool
    needs confirmation."""

    def deploy(target: str) -> dict[str, str]:
        """Deploys the build to a target."""
        counter.write_text(str(runs(counter) + 1))
        return {"result": f"deployed to {target}"}

    model = ToolThenEcho(
        model="scripted", tool="deploy", arguments={"target": target}, call_id=call_id
    )
    agent = LlmAgent(
        name=APP, model=model, instruction="Deploy when asked.", tools=[make_tool(deploy)]
    )
    sessions = SqliteSessionService(str(counter.parent / "sessions.db"))
    return Runner(app_name=APP, agent=agent, session_service=sessions)


def runs(counter: Path) -> int:
    return int(counter.read_text()) if counter.exists() else 0


def last_text(events: list[Any]) -> str:
    """The model's last words in ``events``."""
    texts = [p.text for e in events if e.content for p in e.content.parts or [] if p.text]
    return texts[-1] if texts else ""
