"""One agent process for the cold-resume tests: ``start`` runs the agent until it waits for the
person (saving the run state first), ``resume`` loads that state in a new process and carries
the run on by its id. Prints the run's final output.

python agent_process.py start|resume RUN_ID WORKDIR TARGET CALL_ID [TARGET CALL_ID]...
(the model deploys to every target in one step), with the server in SAYSO_URL and SAYSO_KEY."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import scripted
from agents import RunState

import sayso
from sayso.openai_agents import SaysoApprovals


async def main(mode: str, run_id: str, workdir: str, *calls: str) -> None:
    work = Path(workdir)
    pairs = list(zip(calls[::2], calls[1::2], strict=True))
    async with sayso.AsyncClient() as client:
        approvals = SaysoApprovals(client, run_id)
        agent, config = scripted.deploy_agent(work / "runs", *pairs[0], approvals.gate, *pairs[1:])

        def save(state: dict) -> None:
            (work / "state.json").write_text(json.dumps(state))

        if mode == "start":
            result = await approvals.run(agent, "deploy it", save=save, run_config=config)
        else:
            saved = json.loads((work / "state.json").read_text())
            state = await RunState.from_json(agent, saved)
            result = await approvals.run(agent, state, save=save, run_config=config)
        print(result.final_output, flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
