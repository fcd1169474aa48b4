"""sayso.dbos against a real DBOS (its system database on SQLite) and a real ``sayso serve``:
the workflow asks, waits durably in ``DBOS.recv``, and runs its gated tool only on the
person's Allow, exactly once; a process killed mid-wait is recovered with the answer given
while it was down."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

from dbos import DBOSClient
from sayso_client_fixtures import Person, Server, unique

import sayso

HERE = Path(__file__).resolve().parent


class App:
    """The DBOS app of one test: its system database, the tool's log, one workflow."""

    def __init__(self, srv: Server, tmp: Path, ttl: int = 7 * 24 * 3600) -> None:
        self.srv = srv
        self.db = tmp / "dbos.sqlite"
        self.log = tmp / "deploys.log"
        self.version = unique("v2.3")
        self.workflow_id = f"release-{uuid.uuid4().hex[:8]}"
        self.ttl = ttl
        self.stderr = tmp / "app.log"

    def run(self, mode: str) -> subprocess.Popen[str]:
        args = [mode, self.srv.url, self.srv.key, str(self.db), self.workflow_id, self.version]
        return subprocess.Popen(
            [sys.executable, str(HERE / "app_process.py"), *args, str(self.log), str(self.ttl)],
            stdout=subprocess.PIPE,
            stderr=open(self.stderr, "ab"),  # noqa: SIM115 - kept by the process
            text=True,
        )

    def result(self, proc: subprocess.Popen[str], timeout: float = 120) -> str:
        out, _ = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, self.stderr.read_text()
        return str(json.loads(out.strip().splitlines()[-1]))

    def runs(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0

    def started(self) -> tuple[subprocess.Popen[str], sayso.Decision]:
        """The workflow started, once it has asked the person: its process, and the question."""
        proc = self.run("start")
        return proc, asked(self.srv, self.version)

    def answered(self, person: Person, **answer: str) -> str:
        """The workflow's result, the person having given ``answer`` once it asked."""
        proc, _ = self.started()
        assert person.answer(self.version, **answer).status_code == 303
        return self.result(proc)


def asked(srv: Server, text: str) -> sayso.Decision:
    """The question the workflow asked, once it has (within 30 s)."""
    with sayso.Client(srv.url, srv.key) as client:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = [d for d in client.list() if text in d.question]
            if found:
                assert len(found) == 1, found
                return found[0]
            time.sleep(0.2)
    raise AssertionError(f"no question about {text!r} within 30 s")


def test_an_allowed_deploy_runs_once(server: Server, person: Person, tmp_path: Path) -> None:
    app = App(server, tmp_path)
    assert app.answered(person, value="Allow") == f"deployed {app.version}"
    assert app.runs() == 1


def test_a_denial_reaches_the_workflow_with_its_reason(
    server: Server, person: Person, tmp_path: Path
) -> None:
    app = App(server, tmp_path)
    said = app.answered(person, value="Deny", remark="not on a Friday")
    assert said == "not deployed: denied by the person: not on a Friday"
    assert app.runs() == 0


def test_an_expired_question_is_a_denial_never_an_allow(server: Server, tmp_path: Path) -> None:
    app = App(server, tmp_path, ttl=10)
    result = app.result(app.run("start"))
    # sayso expires the question at the deadline the workflow withdraws it at; either way
    # the workflow is told why, and nothing stays on the person's phone.
    assert result in (
        "not deployed: the approval expired with no answer",
        "not deployed: the approval was cancelled: no answer within 10 s",
    ), result
    assert asked(server, app.version).status in ("expired", "cancelled")
    assert app.runs() == 0


def test_a_message_from_anyone_else_decides_nothing(
    server: Server, person: Person, tmp_path: Path
) -> None:
    app = App(server, tmp_path)
    proc, decision = app.started()
    forger = DBOSClient(system_database_url=f"sqlite:///{app.db}")
    forger.send(app.workflow_id, decision.decision_id, f"sayso:{decision.decision_id}")
    time.sleep(2)
    assert proc.poll() is None, "the workflow ended on a message sayso did not send"
    assert app.runs() == 0
    person.answer(app.version, value="Deny", remark="no")
    assert app.result(proc) == "not deployed: denied by the person: no"
    assert app.runs() == 0


def test_the_answer_given_while_app_and_sayso_were_down_finishes_the_workflow(
    own_server: Server, tmp_path: Path
) -> None:
    app = App(own_server, tmp_path)
    proc, _ = app.started()
    time.sleep(0.5)  # in DBOS.recv, and the child waiting on sayso
    proc.kill()  # mid-wait, as a crash does
    proc.wait()
    own_server.kill()
    own_server.start()
    assert Person(own_server.feed).answer(app.version, value="Allow").status_code == 303
    assert app.result(app.run("recover")) == f"deployed {app.version}"
    assert app.runs() == 1
    with sayso.Client(own_server.url, own_server.key) as client:
        assert len([d for d in client.list() if app.version in d.question]) == 1


def test_a_key_sayso_refuses_fails_the_workflow_at_once(server: Server, tmp_path: Path) -> None:
    wrong = Server.__new__(Server)
    wrong.url, wrong.key = server.url, "sk_not_a_key"
    app = App(wrong, tmp_path)
    proc = app.run("start")
    started = time.monotonic()
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    said = app.stderr.read_text()
    assert "Refused" in said and "401 unauthorized" in said, said
    assert time.monotonic() - started < 30, "a refusal for good was retried"
    assert app.runs() == 0
