"""The Python examples of docs/CLIENTS.md's client section run as written."""

from __future__ import annotations

import contextlib
import http.server
import io
import queue
import threading

import pytest
from docs_blocks import python_blocks, run_answered
from sayso_client_fixtures import Person, Server, unique

import sayso


def docs_examples() -> list[str]:
    return python_blocks("CLIENTS.md", "Python")


def test_the_section_has_the_blocks_this_file_runs() -> None:
    assert len(docs_examples()) == 2


def test_the_docs_example_asks_waits_and_reads_the_answer(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = docs_examples()[0]
    out = run_answered(own_server, monkeypatch, block, "Deploy v2.3 to production?", "yes")
    assert out.startswith("Deploying: "), out


def test_the_webhook_example_verifies_what_the_server_sent(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    got: queue.Queue[tuple[bytes, dict[str, str]]] = queue.Queue()

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            got.put((body, dict(self.headers.items())))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        scope: dict[str, object] = {}
        exec(compile(docs_examples()[1], "docs/CLIENTS.md", "exec"), scope)  # noqa: S102
        question = unique("Publish the post?")
        with sayso.Client(own_server.url, own_server.key) as client:
            url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
            client.ask(question, callback_url=url, notify="none")
        assert Person(own_server.feed).answer(question, value="yes").status_code == 303
        body, headers = got.get(timeout=20)
    finally:
        receiver.shutdown()
    monkeypatch.setenv("SAYSO_WEBHOOK_SECRET", own_server.webhook_secret)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        decision = scope["on_webhook"](body, headers)  # type: ignore[operator]
    assert out.getvalue() == f"{question} -> True\n"
    assert decision.outcome is True
    monkeypatch.setenv("SAYSO_WEBHOOK_SECRET", "whsec_" + "A" * 32)
    with pytest.raises(sayso.WebhookVerificationError):
        scope["on_webhook"](body, headers)  # type: ignore[operator]
