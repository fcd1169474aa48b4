"""An agent of the OpenAI Agents SDK driven offline: a ``Model`` of our own that calls the gated
tool first and then says what the tool returned, and a ``ModelProvider`` that hands it out.
No network and no API key; tracing is off. The tool counts its runs in a file, so a test (or
a process started after another was killed) sees how often it really ran."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    Model,
    ModelProvider,
    ModelResponse,
    RunConfig,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from agents.testing import assistant_message, function_call

set_tracing_disabled(True)


class ToolThenEcho(Model):
    """Asks for one tool call (a fixed call id, as a model replaying its own turn would), then
    answers with the text of the tool's result as the model read it."""

    def __init__(self, tool: str, arguments: dict[str, Any], call_id: str) -> None:
        self.tool, self.arguments, self.call_id = tool, arguments, call_id

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kw: Any
    ) -> ModelResponse:
        items = input if isinstance(input, list) else []
        outputs = [i for i in items if _field(i, "type") == "function_call_output"]
        if outputs:
            said = _field(outputs[-1], "output")
            text = said if isinstance(said, str) else json.dumps(said)
            output = [assistant_message(f"the tool said: {text}")]
        else:
            output = [function_call(self.tool, self.arguments, call_id=self.call_id)]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kw: Any) -> Any:
        raise NotImplementedError("the scripted model does not stream")


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


class ScriptedProvider(ModelProvider):
    def __init__(self, model: Model) -> None:
        self.model = model

    def get_model(self, model_name: str | None) -> Model:
        return self.model


def deploy_agent(
    counter: Path, target: str, call_id: str, gate: Any
) -> tuple[Agent[Any], RunConfig]:
    """The agent whose ``deploy`` tool needs approval, and the run config that drives it."""

    @function_tool
    def deploy(target: str) -> str:
        """Deploys the build to a target."""
        runs = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(runs + 1))
        return f"deployed to {target}"

    agent = Agent(name="deployer", instructions="Deploy when asked.", tools=[gate(deploy)])
    model = ToolThenEcho("deploy", {"target": target}, call_id)
    return agent, RunConfig(model_provider=ScriptedProvider(model), tracing_disabled=True)


def runs(counter: Path) -> int:
    return int(counter.read_text()) if counter.exists() else 0
