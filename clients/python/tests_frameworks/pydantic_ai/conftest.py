"""The client suite's server and person fixtures (clients/python/tests), shared, not copied."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2] / "tests"
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # parallel.py, shared

# Loaded under a name of its own: this file is a `conftest` too.
_spec = importlib.util.spec_from_file_location("sayso_client_fixtures", TESTS / "conftest.py")
assert _spec and _spec.loader
fixtures = importlib.util.module_from_spec(_spec)
sys.modules["sayso_client_fixtures"] = fixtures
_spec.loader.exec_module(fixtures)

server = fixtures.server
own_server = fixtures.own_server
person = fixtures.person
