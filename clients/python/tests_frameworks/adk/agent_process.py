"""One agent process for the cold-resume test: ``start`` runs the agent until it waits for the
person, ``resume`` carries the same ADK session on by its id from the session store. Prints
the run's last text.

python agent_process.py start|resume SESSION_ID WORKDIR TARGET CALL_ID [TARGET CALL_ID]...
(the model deploys to every target in one step), with the server in SAYSO_URL and SAYSO_KEY."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import scripted
from google.genai import types

import sayso
from sayso.adk import SaysoConfirmations


async def main(mode: str, session_id: str, workdir: str, *calls: str) -> None:
    pairs = list(zip(calls[::2], calls[1::2], strict=True))
    async with sayso.AsyncClient() as client:
        confirmations = SaysoConfirmations(client)
        runner = scripted.deploy_runner(
            Path(workdir) / "runs", *pairs[0], confirmations.tool, *pairs[1:]
        )
        message = None
        if mode == "start":
            await runner.session_service.create_session(
                app_name=scripted.APP, user_id=scripted.USER, session_id=session_id
            )
            message = types.Content(role="user", parts=[types.Part(text="deploy it")])
        events = await confirmations.run(
            runner, user_id=scripted.USER, session_id=session_id, new_message=message
        )
        print(scripted.last_text(events), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
