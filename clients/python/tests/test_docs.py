"""The Python examples of docs/CLIENTS.md's client section run as written."""

from __future__ import annotations

import contextlib
import io

import pytest
from docs_blocks import run_answered, section_checks
from helpers import hook_receiver
from sayso_client_fixtures import Person, Server, unique

import sayso

docs_examples, test_the_section_has_the_blocks_this_file_runs = section_checks(
    "CLIENTS.md", "Python", 2
)


def test_the_docs_example_asks_waits_and_reads_the_answer(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = docs_examples()[0]
    out = run_answered(own_server, monkeypatch, block, "Deploy v2.3 to production?", "yes")
    assert out.startswith("Deploying: "), out


def test_the_webhook_example_verifies_what_the_server_sent(
    own_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    with hook_receiver() as (url, got):
        scope: dict[str, object] = {}
        exec(compile(docs_examples()[1], "docs/CLIENTS.md", "exec"), scope)  # noqa: S102
        question = unique("Publish the post?")
        with sayso.Client(own_server.url, own_server.key) as client:
            client.ask(question, callback_url=url, notify="none")
        assert Person(own_server.feed).answer(question, value="yes").status_code == 303
        body, headers = got.get(timeout=20)
    monkeypatch.setenv("SAYSO_WEBHOOK_SECRET", own_server.webhook_secret)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        decision = scope["on_webhook"](body, headers)  # type: ignore[operator]
    assert out.getvalue() == f"{question} -> True\n"
    assert decision.outcome is True
    monkeypatch.setenv("SAYSO_WEBHOOK_SECRET", "whsec_" + "A" * 32)
    with pytest.raises(sayso.WebhookVerificationError):
        scope["on_webhook"](body, headers)  # type: ignore[operator]
