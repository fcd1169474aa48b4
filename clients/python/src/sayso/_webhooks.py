"""Checking a webhook sayso sent to a decision's ``callback_url`` (docs/NOTIFICATIONS.md).

sayso signs in the Standard Webhooks form: ``webhook-id``, ``webhook-timestamp`` (unix
seconds) and ``webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``,
keyed with the base64-decoded part of the inbox's ``whsec_…`` secret. The body is the
Decision JSON.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from ._errors import WebhookVerificationError
from ._models import Decision

#: How far a webhook's timestamp may be from the receiver's clock, either way.
DEFAULT_TOLERANCE_S = 300


def verify_webhook(
    payload: bytes | str,
    headers: Mapping[str, str] | Any,
    secret: str,
    *,
    tolerance: float = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> Decision:
    """Checks a webhook's signature and age; returns the Decision it carries.

    ``payload`` is the request body exactly as received (bytes: do not parse and re-encode
    it first); ``headers`` any mapping of its headers, names in any case; ``secret`` the
    inbox's ``whsec_…``. Raises ``WebhookVerificationError`` saying what does not hold: a
    missing header, a timestamp more than ``tolerance`` seconds from now (a replay), or no
    signature that matches.
    """
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    key = _secret_key(secret)
    wanted = {"webhook-id": "", "webhook-timestamp": "", "webhook-signature": ""}
    for name, value in _items(headers):
        if name.lower() in wanted:
            wanted[name.lower()] = value
    missing = [name for name, value in wanted.items() if not value]
    if missing:
        raise WebhookVerificationError(f"the webhook has no {', '.join(missing)} header")
    msg_id = wanted["webhook-id"]
    stamp = wanted["webhook-timestamp"].strip()
    try:
        sent = int(stamp)
    except ValueError:
        raise WebhookVerificationError(f"webhook-timestamp {stamp!r} is not unix seconds") from None
    clock = time.time() if now is None else now
    if abs(clock - sent) > tolerance:
        raise WebhookVerificationError(
            f"webhook-timestamp {sent} is {abs(clock - sent):.0f} s from now, more than the "
            f"tolerance of {tolerance:g} s: an old webhook replayed, or a clock that is off"
        )
    signed = f"{msg_id}.{sent}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    matched = False
    # The header may carry several signatures (a rotated secret): any v1 one may match.
    for part in wanted["webhook-signature"].split():
        version, _, sig = part.partition(",")
        if version == "v1" and hmac.compare_digest(sig.encode(), expected):
            matched = True
    if not matched:
        raise WebhookVerificationError(
            "no webhook-signature matches the body under this secret: the body was changed, "
            "or the secret is not this inbox's"
        )
    try:
        data = json.loads(body)
        return Decision.from_json(data)
    except (ValueError, KeyError, TypeError) as e:
        raise WebhookVerificationError(f"the signed body is not a sayso Decision: {e}") from None


def _secret_key(secret: str) -> bytes:
    encoded = secret.strip()
    encoded = encoded[len("whsec_") :] if encoded.startswith("whsec_") else encoded
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError(
            "the secret is not a webhook signing secret (whsec_ and base64)"
        ) from None
    if not key:
        raise WebhookVerificationError("the webhook signing secret is empty")
    return key


def _items(headers: Any) -> list[tuple[str, str]]:
    # httpx, requests, Starlette and Flask headers are mappings; WSGI gives a list of pairs.
    if hasattr(headers, "items"):
        return [(str(k), str(v)) for k, v in headers.items()]
    return [(str(k), str(v)) for k, v in headers]
