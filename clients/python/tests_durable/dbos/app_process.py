"""The DBOS app the tests run, as its own process: a workflow that asks the person before it
deploys, on a SQLite system database. ``start`` starts the workflow and waits for its result;
``recover`` is the next process after a crash: ``DBOS.launch()`` recovers the workflow, and
this waits for its result. Prints the result as JSON.

The gated tool is a step that appends a line to a file each time it runs, so a test counts
its runs."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

from dbos import DBOS, SetWorkflowID

import sayso
from sayso.dbos import approval, configure


@DBOS.step()
def deploy(version: str, log: str) -> str:
    with Path(log).open("a") as f:
        f.write(f"deployed {version}\n")
    return f"deployed {version}"


@DBOS.workflow()
def release(version: str, log: str, ttl_seconds: int) -> str:
    verdict = approval(
        "deploy", {"version": version}, step="deploy", ttl=timedelta(seconds=ttl_seconds)
    )
    if not verdict.allowed:
        return f"not deployed: {verdict.reason}"
    return deploy(version, log)


def main(
    mode: str, url: str, key: str, db: str, workflow_id: str, version: str, log: str, ttl: str
) -> None:
    DBOS(config={"name": "deploys", "system_database_url": f"sqlite:///{db}"})
    configure(sayso.Client(url, key), notify="none")
    DBOS.launch()
    if mode == "start":
        with SetWorkflowID(workflow_id):
            handle = DBOS.start_workflow(release, version, log, int(ttl))
    else:
        handle = DBOS.retrieve_workflow(workflow_id)
    print(json.dumps(handle.get_result()), flush=True)
    DBOS.destroy()


if __name__ == "__main__":
    main(*sys.argv[1:])
