"""A worker as its own process, for the restart test: the deploy workflow, the tool, sayso's
activities and the relay, until it is killed."""

from __future__ import annotations

import asyncio
import sys

from deploy_workflow import DeployWorkflow, deploy
from temporalio.client import Client
from temporalio.worker import Worker

import sayso
from sayso.temporal import SaysoActivities, relay


async def main(address: str, url: str, key: str, task_queue: str) -> None:
    temporal = await Client.connect(address)
    async with sayso.AsyncClient(url, key) as client:
        activities = [deploy, *SaysoActivities(client, notify="none").all]
        worker = Worker(
            temporal, task_queue=task_queue, workflows=[DeployWorkflow], activities=activities
        )
        print("worker up", flush=True)
        await asyncio.gather(worker.run(), relay(client, temporal))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
