"""An agent of the OpenAI Agents SDK driven offline: a ``Model`` of our own that calls the gated
tool first and then says what the tool returned, and a ``ModelProvider`` that hands it out.
No network and no API key; tracing is off. The tool appends a line to a file each time it
runs, so a test (or a process started after another was killed) sees how often it really
ran, and with which arguments."""

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
    """Asks for one tool call, or several in one step (``more``: further (arguments, call id)
    pairs), with fixed call ids, as a model replaying its own turn would; then answers with
    the text of the tools' results as the model read them, joined by " | "."""

    def __init__(
        self, tool: str, arguments: dict[str, Any], call_id: str, *more: tuple[dict[str, Any], str]
    ) -> None:
        self.tool = tool
        self.calls = [(arguments, call_id), *more]

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kw: Any
    ) -> ModelResponse:
        items = input if isinstance(input, list) else []
        outputs = [i for i in items if _field(i, "type") == "function_call_output"]
        if outputs:
            said = [_field(o, "output") for o in outputs]
            text = " | ".join(s if isinstance(s, str) else json.dumps(s) for s in said)
            output = [assistant_message(f"the tool said: {text}")]
        else:
            output = [function_call(self.tool, a, call_id=c) for a, c in self.calls]
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
    counter: Path, target: str, call_id: str, gate: Any, *more: tuple[str, str]
) -> tuple[Agent[Any], RunConfig]:
    """The agent whose ``deploy`` tool needs approval, and the run config that drives it: the
    model deploys to ``target`` (and to each of ``more``'s (target, call id) pairs)."""

    @function_tool
    def deploy(target: str) -> str:
        """Deploys the build to a target."""
        with counter.open("a") as f:
            f.write(target + "\n")
        return f"deployed to {target}"

    agent = Agent(name="deployer", instructions="Deploy when asked.", tools=[gate(deploy)])
    others = [({"target": t}, c) for t, c in more]
    model = ToolThenEcho("deploy", {"target": target}, call_id, *others)
    return agent, RunConfig(model_provider=ScriptedProvider(model), tracing_disabled=True)
