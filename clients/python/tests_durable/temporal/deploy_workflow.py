"""The workflow the tests run: it asks the person before it deploys, and deploys only on an
Allow. The gated tool is an activity that appends a line to a file each time it runs, so a
test counts its runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from sayso.temporal import approval

TASK_QUEUE = "deploys"


@dataclass(frozen=True)
class Deploy:
    version: str
    log: str
    ttl_seconds: int = 7 * 24 * 3600


@activity.defn
async def deploy(req: Deploy) -> str:
    with Path(req.log).open("a") as f:
        f.write(f"deployed {req.version}\n")
    return f"deployed {req.version}"


@workflow.defn
class DeployWorkflow:
    @workflow.run
    async def run(self, req: Deploy) -> str:
        verdict = await approval(
            "deploy",
            {"version": req.version},
            step="deploy",
            ttl=timedelta(seconds=req.ttl_seconds),
        )
        if not verdict.allowed:
            return f"not deployed: {verdict.reason}"
        return await workflow.execute_activity(
            deploy, req, start_to_close_timeout=timedelta(minutes=1)
        )


def runs(log: Path) -> int:
    """How often the tool ran."""
    return len(log.read_text().splitlines()) if log.exists() else 0
