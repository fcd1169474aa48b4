"""sayso.temporal against a real Temporal server and a real ``sayso serve``: the workflow asks,
waits durably, and runs its gated tool only on the person's Allow, exactly once."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from deploy_workflow import Deploy, DeployWorkflow, deploy, runs
from sayso_client_fixtures import Person, Server, unique
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

import sayso
from conftest import binary
from sayso.temporal import SIGNAL, SaysoActivities, relay

HERE = Path(__file__).resolve().parent


async def with_worker(
    temporal: Client, srv: Server, body: Callable[[str], Awaitable[Any]], *, with_relay: bool = True
) -> Any:
    """Runs ``body(task_queue)`` while a worker (and the relay) serve a task queue of its own."""
    queue = f"deploys-{uuid.uuid4().hex[:8]}"
    async with sayso.AsyncClient(srv.url, srv.key) as client:
        activities = [deploy, *SaysoActivities(client, notify="none").all]
        async with Worker(
            temporal, task_queue=queue, workflows=[DeployWorkflow], activities=activities
        ):
            waker = asyncio.create_task(relay(client, temporal)) if with_relay else None
            try:
                return await body(queue)
            finally:
                if waker:
                    waker.cancel()


async def started(
    address: str, srv: Server, queue: str, req: Deploy
) -> tuple[WorkflowHandle[Any, str], sayso.Decision]:
    """The workflow of ``req`` started on ``queue``, once it has asked the person: its handle,
    and the question."""
    temporal = await Client.connect(address)
    handle = await temporal.start_workflow(
        DeployWorkflow.run, req, id=f"deploy-{req.version}", task_queue=queue
    )
    async with sayso.AsyncClient(srv.url, srv.key) as client:
        return handle, await asked(client, req.version)


def run_answered(address: str, srv: Server, person: Person, log: Path, **answer: Any) -> str:
    """Starts the workflow, has the person answer on their phone, returns its result."""
    version = unique("v2.3")

    async def body(queue: str) -> str:
        handle, _ = await started(address, srv, queue, Deploy(version, str(log)))
        resp = await asyncio.to_thread(person.answer, version, **answer)
        assert resp.status_code == 303, resp.text
        return await asyncio.wait_for(handle.result(), 60)

    async def main() -> str:
        return await with_worker(await Client.connect(address), srv, body)

    return asyncio.run(main())


def test_an_allowed_deploy_runs_once(
    temporal_address: str, server: Server, person: Person, tmp_path: Path
) -> None:
    log = tmp_path / "deploys.log"
    result = run_answered(temporal_address, server, person, log, value="Allow")
    assert result.startswith("deployed v2.3"), result
    assert runs(log) == 1


def test_a_denial_reaches_the_workflow_with_its_reason(
    temporal_address: str, server: Server, person: Person, tmp_path: Path
) -> None:
    log = tmp_path / "deploys.log"
    result = run_answered(
        temporal_address, server, person, log, value="Deny", remark="not on a Friday"
    )
    assert result == "not deployed: denied by the person: not on a Friday"
    assert runs(log) == 0


def test_a_forged_signal_decides_nothing(
    temporal_address: str, server: Server, person: Person, tmp_path: Path
) -> None:
    log = tmp_path / "deploys.log"
    version = unique("v3.0")

    async def body(queue: str) -> str:
        req = Deploy(version, str(log))
        handle, decision = await started(temporal_address, server, queue, req)
        # Anyone who can signal the workflow says "settled", for its question and for another.
        await handle.signal(SIGNAL, decision.decision_id)
        await handle.signal(SIGNAL, str(uuid.uuid4()))
        await asyncio.sleep(2)
        assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
        assert runs(log) == 0
        await asyncio.to_thread(person.answer, version, value="Deny", remark="no")
        return await asyncio.wait_for(handle.result(), 60)

    async def main() -> str:
        return await with_worker(await Client.connect(temporal_address), server, body)

    assert asyncio.run(main()) == "not deployed: denied by the person: no"
    assert runs(log) == 0


def test_a_seven_day_ttl_ends_in_a_denial_and_withdraws_the_question(
    server: Server, tmp_path: Path
) -> None:
    """The time-skipping test server runs the week in seconds; nobody answers."""
    log = tmp_path / "deploys.log"
    version = unique("v4.0")

    async def main() -> tuple[str, sayso.Decision, float]:
        async with await WorkflowEnvironment.start_time_skipping(
            test_server_existing_path=binary("temporal-test-server")
        ) as env:

            async def body(queue: str) -> str:
                return await env.client.execute_workflow(
                    DeployWorkflow.run,
                    Deploy(version, str(log)),
                    id=f"deploy-{version}",
                    task_queue=queue,
                )

            started = time.monotonic()
            result = await with_worker(env.client, server, body, with_relay=False)
            took = time.monotonic() - started
        async with sayso.AsyncClient(server.url, server.key) as client:
            return result, await asked(client, version), took

    result, decision, took = asyncio.run(main())
    assert result == "not deployed: the approval was cancelled: no answer within 7 days"
    assert decision.status == "cancelled", "the question stays on the person's phone"
    assert runs(log) == 0
    assert took < 60, f"the week took {took:.0f} s"


def test_the_answer_given_while_worker_and_sayso_were_down_finishes_the_workflow(
    temporal_address: str, own_server: Server, tmp_path: Path
) -> None:
    log = tmp_path / "deploys.log"
    version = unique("v5.0")
    queue = f"deploys-{uuid.uuid4().hex[:8]}"
    workflow_id = f"deploy-{version}"

    def start_worker() -> subprocess.Popen[bytes]:
        args = [temporal_address, own_server.url, own_server.key, queue]
        return subprocess.Popen(
            [sys.executable, str(HERE / "worker_process.py"), *args],
            stdout=subprocess.PIPE,
            stderr=open(tmp_path / "worker.log", "ab"),  # noqa: SIM115 - kept by the process
        )

    worker = start_worker()
    try:
        asyncio.run(started(temporal_address, own_server, queue, Deploy(version, str(log))))
        worker.kill()  # mid-wait, as a crash does
        worker.wait()
        own_server.kill()
        own_server.start()
        person = Person(own_server.feed)
        assert person.answer(version, value="Allow").status_code == 303
        worker = start_worker()

        async def finish() -> tuple[str, list[sayso.Decision]]:
            temporal = await Client.connect(temporal_address)
            result = await asyncio.wait_for(temporal.get_workflow_handle(workflow_id).result(), 60)
            async with sayso.AsyncClient(own_server.url, own_server.key) as client:
                return result, [d async for d in client.list() if version in d.question]

        result, decisions = asyncio.run(finish())
    finally:
        worker.kill()
        worker.wait()
    assert result == f"deployed {version}"
    assert runs(log) == 1
    assert len(decisions) == 1, "the person was asked more than once"


async def asked(client: sayso.AsyncClient, text: str) -> sayso.Decision:
    """The question the workflow asked, once it has (within 20 s)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = [d async for d in client.list() if text in d.question]
        if found:
            assert len(found) == 1, found
            return found[0]
        await asyncio.sleep(0.2)
    raise AssertionError(f"no question about {text!r} within 20 s")


def test_a_ttl_sayso_cannot_keep_fails_the_workflow_naming_it(
    temporal_address: str, server: Server, tmp_path: Path
) -> None:
    log = tmp_path / "deploys.log"
    month = Deploy(unique("v6.0"), str(log), ttl_seconds=31 * 24 * 3600)
    assert "ttl must be between 10 seconds and 30 days" in failure(temporal_address, server, month)
    assert runs(log) == 0


def test_a_key_sayso_refuses_fails_the_workflow_without_retries(
    temporal_address: str, server: Server, tmp_path: Path
) -> None:
    log = tmp_path / "deploys.log"
    wrong = Server.__new__(Server)
    wrong.url, wrong.key = server.url, "sk_not_a_key"
    message = failure(temporal_address, wrong, Deploy(unique("v7.0"), str(log)))
    assert "SaysoRefused" in message and "401" in message, message
    assert runs(log) == 0


def failure(address: str, srv: Server, req: Deploy) -> str:
    """What a workflow that fails says, through its causes."""

    async def body(queue: str) -> str:
        temporal = await Client.connect(address)
        try:
            await asyncio.wait_for(
                temporal.execute_workflow(
                    DeployWorkflow.run, req, id=f"deploy-{req.version}", task_queue=queue
                ),
                30,
            )
        except WorkflowFailureError as e:
            causes, err = [], e.cause
            while err is not None:
                causes.append(f"{type(err).__name__}: {err} {getattr(err, 'type', '')}")
                err = err.__cause__
            return " / ".join(causes)
        raise AssertionError("the workflow did not fail")

    async def main() -> str:
        return await with_worker(await Client.connect(address), srv, body, with_relay=False)

    return asyncio.run(main())
