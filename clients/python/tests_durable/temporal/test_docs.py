"""The Temporal block of docs/DURABLE.md runs as written, as a file, against the session's
Temporal dev server and a sayso server; the test answers as the person."""

from __future__ import annotations

from pathlib import Path

from docs_blocks import run_allowed
from sayso_client_fixtures import Server


def test_the_docs_example_asks_the_person_and_deploys(
    temporal_address: str, own_server: Server, tmp_path: Path
) -> None:
    out = run_allowed("Temporal", own_server, tmp_path, "v2.3", TEMPORAL_ADDRESS=temporal_address)
    assert out == "deployed v2.3\n"
