"""What every suite of the client shares (tests/, tests_frameworks/*, tests_durable/*): the
real server and the person who answers through its pages (tests/sayso_client_fixtures.py),
and the suites' shared helpers on the path (tests/docs_blocks.py,
tests_frameworks/scenario.py)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in ("tests", "tests_frameworks", "tests_durable"):
    sys.path.insert(0, str(HERE / folder))

from sayso_client_fixtures import client, own_server, person, server  # noqa: E402, F401  (fixtures)
