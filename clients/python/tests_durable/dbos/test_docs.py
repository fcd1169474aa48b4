"""The DBOS block of docs/DURABLE.md runs as written, as a file (its SQLite system database in
the test's folder), against a sayso server; the test answers as the person."""

from __future__ import annotations

from pathlib import Path

from docs_block import run_allowed
from sayso_client_fixtures import Server


def test_the_docs_example_asks_the_person_and_deploys(own_server: Server, tmp_path: Path) -> None:
    assert run_allowed("DBOS", own_server, tmp_path, "v2.3") == "deployed v2.3\n"
