"""verify_webhook on a webhook the real server sent, and on forged and old ones."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import queue
import time
from collections.abc import Iterator
from typing import Any

import pytest
from helpers import Delivery, hook_receiver
from sayso_client_fixtures import Person, Server, unique

import sayso


@pytest.fixture()
def receiver() -> Iterator[tuple[str, queue.Queue[Delivery]]]:
    """A callback_url that keeps what it receives."""
    with hook_receiver() as received:
        yield received


def sign(secret: str, msg_id: str, stamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    mac = hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def delivered(
    server: Server,
    person: Person,
    got: queue.Queue[Delivery],
    question: str,
    fields: dict[str, Any],
    **answer: Any,
) -> tuple[sayso.AskHandle, bytes, dict[str, str]]:
    """``question`` asked with ``fields`` (where the webhook goes) and given ``answer`` by the
    person: the ask's handle, and the body and headers of the webhook that came."""
    with sayso.Client(server.url, server.key) as client:
        q = unique(question)
        h = client.ask(q, notify="none", **fields)
        person.answer(q, **answer)
        body, headers = got.get(timeout=20)
    return h, body, headers


def test_a_completion_callback_is_signed_like_a_webhook_and_carries_the_settled_decision(
    server: Server, person: Person, receiver: tuple[str, queue.Queue[Delivery]]
) -> None:
    url, got = receiver
    completion = {"completion": {"url": url}}
    h, body, headers = delivered(
        server, person, got, "Resume the workflow?", completion, value="no", remark="not today"
    )
    d = sayso.verify_webhook(body, headers, server.webhook_secret)
    assert (d.decision_id, d.status, d.outcome, d.remark) == (
        h.decision_id,
        "answered",
        False,
        "not today",
    )


def test_a_webhook_from_the_server_verifies_and_carries_the_decision(
    server: Server, person: Person, receiver: tuple[str, queue.Queue[Delivery]]
) -> None:
    url, got = receiver
    h, body, headers = delivered(
        server, person, got, "Publish the post?", {"callback_url": url}, value="yes"
    )
    d = sayso.verify_webhook(body, headers, server.webhook_secret)
    assert (d.decision_id, d.outcome) == (h.decision_id, True)

    # One byte changed, another inbox's secret, or the same webhook replayed later: refused.
    with pytest.raises(sayso.WebhookVerificationError, match="no webhook-signature matches"):
        sayso.verify_webhook(body.replace(b"true", b"false", 1), headers, server.webhook_secret)
    other = "whsec_" + base64.b64encode(b"k" * 32).decode()
    with pytest.raises(sayso.WebhookVerificationError):
        sayso.verify_webhook(body, headers, other)
    with pytest.raises(sayso.WebhookVerificationError, match="tolerance"):
        sayso.verify_webhook(body, headers, server.webhook_secret, now=time.time() + 3600)


def test_forged_old_and_incomplete_webhooks_are_refused() -> None:
    secret = "whsec_" + base64.b64encode(b"s" * 32).decode()
    decision = {
        "decision_id": "01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c", "kind": "bool",
        "question": "Deploy?", "project": None, "status": "answered", "outcome": True,
        "outcome_source": "human", "custom": False, "remark": None,
        "answered_at": "2026-05-04T17:02:11.123456789Z", "created_at": "2026-05-04T16:58:40Z",
        "expires_at": "2026-05-04T17:58:40Z", "web_url": "https://ask.example.com/d/x",
        "metadata": {}, "answer_text": "yes", "notifications": [], "answered_by": None,
        "answers": [],
    }  # fmt: skip
    body = json.dumps(decision).encode()
    now = int(time.time())
    headers = {
        "Webhook-Id": "msg_1",
        "Webhook-Timestamp": str(now),
        "Webhook-Signature": "v1,bm90IGl0 " + sign(secret, "msg_1", now, body),
    }
    d = sayso.verify_webhook(body, headers, secret)
    assert d.answered_at is not None and d.answered_at.microsecond == 123456
    assert sayso.verify_webhook(body.decode(), list(headers.items()), secret).outcome is True

    old = now - 301
    stale = {**headers, "Webhook-Timestamp": str(old),
             "Webhook-Signature": sign(secret, "msg_1", old, body)}  # fmt: skip
    with pytest.raises(sayso.WebhookVerificationError, match="301 s from now"):
        sayso.verify_webhook(body, stale, secret, now=now)
    assert sayso.verify_webhook(body, stale, secret, tolerance=600).outcome is True
    moved = {**headers, "Webhook-Id": "msg_2"}
    with pytest.raises(sayso.WebhookVerificationError, match="no webhook-signature"):
        sayso.verify_webhook(body, moved, secret)
    with pytest.raises(sayso.WebhookVerificationError, match="webhook-signature header"):
        sayso.verify_webhook(body, {k: v for k, v in headers.items() if "Sig" not in k}, secret)
    with pytest.raises(sayso.WebhookVerificationError, match="not unix seconds"):
        sayso.verify_webhook(body, {**headers, "Webhook-Timestamp": "soon"}, secret)
    with pytest.raises(sayso.WebhookVerificationError, match="not a webhook signing secret"):
        sayso.verify_webhook(body, headers, "whsec_!!!")
    assert isinstance(sayso.WebhookVerificationError("x"), sayso.SaysoError)
