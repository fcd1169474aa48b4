"""The client suite's real server and person (clients/python/tests/conftest.py), loaded under a
name of their own, and this folder on the path for the DBOS app the tests run as processes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

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
