"""The DBOS block of docs/DURABLE.md runs as written, as a file (its SQLite system database in
the test's folder), against a sayso server; the test answers as the person. Killed while it
waits and started again, the same script finishes with the answer given in between."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from docs_blocks import python_blocks, run_allowed
from sayso_client_fixtures import Person, Server

import sayso


def test_the_docs_example_asks_the_person_and_deploys(own_server: Server, tmp_path: Path) -> None:
    assert run_allowed("DBOS", own_server, tmp_path, "v2.3") == "deployed v2.3\n"


def test_the_docs_example_started_again_after_a_crash_finishes_once(
    own_server: Server, tmp_path: Path
) -> None:
    block = python_blocks("DURABLE.md", "DBOS")[0]
    tool = '    return f"deployed {version}"\n'
    assert tool in block
    # The tool also counts its runs, in a file beside the script.
    counted = block.replace(tool, '    open("runs.log", "a").write("ran\\n")\n' + tool)
    (tmp_path / "release.py").write_text(counted)
    env = {**os.environ, "SAYSO_URL": own_server.url, "SAYSO_KEY": own_server.key}

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "release.py"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    first = start()
    with sayso.Client(own_server.url, own_server.key) as client:
        deadline = time.monotonic() + 45
        while not list(client.list()) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)
        first.kill()  # mid-wait, as a crash does
        first.wait()
        again = start()
        assert Person(own_server.feed).answer("v2.3", value="Allow").status_code == 303
        out, _ = again.communicate(timeout=120)
        assert again.returncode == 0
        assert out == "deployed v2.3\n"
        assert (tmp_path / "runs.log").read_text() == "ran\n"
        assert len(list(client.list())) == 1, "the person was asked more than once"
