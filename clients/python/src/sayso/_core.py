"""What the blocking and the asyncio client share: settings, URLs, reading answers, and
which failures are worth another try. Neither sends anything from here."""

from __future__ import annotations

import math
import os
import random
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from ._errors import SaysoError, from_response
from ._models import AskHandle, Decision

DEFAULT_URL = "http://127.0.0.1:8080"
USER_AGENT = "sayso-python/0.1.0"

#: How long one await round asks the server to hold: below common proxy timeouts. The
#: server clamps it to its own maximum (``SAYSO_MAX_AWAIT_S``) and the client calls again.
ROUND_S = 50
#: How much longer than its ``timeout_s`` an await may take before it counts as lost.
ROUND_MARGIN_S = 20.0
#: While the server cannot be reached, keep trying this long past the decision's expiry
#: (its answer or its expiry is still to be read), allowing for clock skew.
GRACE_AFTER_EXPIRY_S = 120.0
#: While the server cannot be reached and the expiry is not known yet, keep trying this long.
GRACE_UNKNOWN_EXPIRY_S = 300.0
#: A ``Retry-After`` longer than this (a daily quota) is not waited out.
MAX_RETRY_AFTER_S = 60.0
FIRST_BACKOFF_S = 0.2
MAX_BACKOFF_S = 5.0

_API_PATH = re.compile(r"/v1(/|$)")


@dataclass(frozen=True)
class Settings:
    """A checked server URL and key, and where each came from (for the messages)."""

    base: str
    key: str
    url_source: str
    key_source: str


def settings(url: str | None, key: str | None) -> Settings:
    """Reads ``url`` / ``key``, else ``SAYSO_URL`` / ``SAYSO_KEY``; refuses what cannot work
    before any request is made."""
    url_source = "the url argument"
    if url is None:
        url, url_source = os.environ.get("SAYSO_URL") or DEFAULT_URL, "SAYSO_URL"
        if not os.environ.get("SAYSO_URL"):
            url_source = "the default, SAYSO_URL being unset"
    key_source = "the key argument"
    if key is None:
        key, key_source = os.environ.get("SAYSO_KEY"), "SAYSO_KEY"
    key = (key or "").strip()
    if not key:
        raise SaysoError(
            "no API key: pass key='sk_…' or set SAYSO_KEY "
            "(the first run's first-run.txt holds one; `sayso key create` makes more)",
            code="configuration",
        )
    text = url.strip()
    try:
        parsed = httpx.URL(text)
    except Exception as e:  # httpx raises several kinds for a malformed URL
        raise SaysoError(
            f"the server URL {url!r} (from {url_source}) is not a URL: {e}", code="configuration"
        ) from e
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise SaysoError(
            f"the server URL (from {url_source}) must be an http:// or https:// URL such as "
            f"{DEFAULT_URL}, not {url!r}",
            code="configuration",
        )
    if _API_PATH.search(parsed.path):
        root = str(parsed.copy_with(path=_API_PATH.split(parsed.path, 1)[0] or "/"))
        raise SaysoError(
            f"the server URL {url!r} (from {url_source}) points into the API; give the "
            f"server's own URL ({root.rstrip('/')}): the client adds /v1/… itself",
            code="configuration",
        )
    return Settings(text.rstrip("/"), key, url_source, key_source)


def decision_path(decision: str | AskHandle | Decision, *rest: str) -> str:
    """``/v1/decisions/{id}/…`` for an id, a handle or a decision; the id escaped."""
    did = decision if isinstance(decision, str) else decision.decision_id
    if not did:
        raise ValueError("a decision id is needed, got an empty one")
    return "/".join(["/v1/decisions", quote(did, safe=""), *rest])


def headers(s: Settings) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {s.key}",
        "Accept": "application/json",
        "User-Agent": USER_AGENT,
    }


class Retry(Exception):
    """A failure worth another try after at least ``pause`` seconds; ``error`` says what it
    was, and is raised when the tries run out."""

    def __init__(self, error: SaysoError, pause: float = 0.0) -> None:
        super().__init__(str(error))
        self.error = error
        self.pause = pause


def unreachable(s: Settings, e: Exception) -> Retry:
    """A connection that could not be made, or broke: always worth another try."""
    why = str(e) or type(e).__name__
    return Retry(
        SaysoError(
            f"cannot reach the sayso server at {s.base} (from {s.url_source}): {why}",
            code="unreachable",
        )
    )


def read(s: Settings, resp: httpx.Response) -> Any:
    """The JSON of a 2xx answer; a ``SaysoError`` naming what is wrong otherwise, or a
    ``Retry`` for a passing failure (``502``/``503``/``504``, a short ``429``)."""
    status = resp.status_code
    retry_after = _retry_after(resp)
    try:
        body = resp.json()
    except ValueError:
        body = None
    if status in (502, 503, 504):
        error = from_response(status, body, str(resp.url))
        if error.code == "not_sayso":
            error = SaysoError(
                f"the server at {s.base} answered {status}", status=status, code="unavailable"
            )
        raise Retry(error, retry_after or 0.0)
    if 200 <= status < 300:
        if body is None:
            kind = resp.headers.get("content-type", "no content type")
            raise SaysoError(
                f"{resp.url} answered {status} with {kind}, not sayso's JSON; "
                f"is {s.base} (from {s.url_source}) a sayso server?",
                status=status,
                code="not_sayso",
            )
        return body
    error = from_response(status, body, str(resp.url))
    error.retry_after = retry_after
    if error.code == "not_sayso":
        error.message += f" (from {s.url_source})"
    elif status == 401:
        error.message = (
            f"the sayso server at {s.base} does not know the API key from {s.key_source} "
            f"({_shown(s.key)}): {error.message}"
        )
    elif status == 404 and error.message == "no such endpoint":
        error.message = (
            f"{resp.url.path} is not an endpoint of the server at {s.base}: is that URL "
            f"(from {s.url_source}) the sayso server's own, and the server new enough?"
        )
    if status == 429 and retry_after is not None and retry_after <= MAX_RETRY_AFTER_S:
        raise Retry(error, retry_after)
    raise error


def _shown(key: str) -> str:
    """Enough of a key to tell two apart in a log, never all of it."""
    return f"{key[:6]}…" if len(key) > 10 else "…"


def _retry_after(resp: httpx.Response) -> float | None:
    value = resp.headers.get("retry-after", "").strip()
    try:
        return float(value) if value else None
    except ValueError:
        return None


def after_lost_cancel(d: Decision, retry: Retry) -> Decision:
    """A cancel whose answer was lost: still pending, it is tried again; cancelled, it is
    done; resolved another way, it is what the server would have said, a ``409``."""
    if d.pending:
        raise retry
    if d.status == "cancelled":
        return d
    raise SaysoError(
        f"decision {d.decision_id} is already {d.status}",
        status=409,
        code="already_resolved",
    )


class Backoff:
    """Pauses between tries: doubling from 0.2 s to 5 s, give or take a fifth (so many
    clients spread apart), never past ``give_up_at`` (``time.monotonic()``)."""

    def __init__(self, give_up_at: float) -> None:
        self.give_up_at = give_up_at
        self.next = FIRST_BACKOFF_S

    def pause(self, retry: Retry) -> float:
        """How long to sleep before the next try; raises ``retry.error`` when that would go
        past the time given."""
        pause = max(self.next, retry.pause) * random.uniform(0.8, 1.2)
        self.next = min(self.next * 2, MAX_BACKOFF_S)
        if time.monotonic() + pause >= self.give_up_at:
            raise retry.error
        return pause


class WaitPlan:
    """The rounds of one ``wait``: how long each asks the server to hold, when to stop
    trying a server that cannot be reached, and the quick pause after a round that came
    back at once (a server shutting down answers parked awaits at once)."""

    def __init__(self, timeout: float | None) -> None:
        self.started = time.monotonic()
        self.deadline = None if timeout is None else self.started + max(0.0, timeout)
        self.expires_at: float | None = None  # on the monotonic clock
        self.last: Decision | None = None
        self.quick_pause = 0.25
        self.round_started = self.started

    def remaining(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def next_round(self) -> tuple[int, float]:
        """``timeout_s`` of the next await and the request's own timeout."""
        self.round_started = time.monotonic()
        left = self.remaining()
        timeout_s = ROUND_S if left is None else min(ROUND_S, math.ceil(left))
        return timeout_s, timeout_s + ROUND_MARGIN_S

    def give_up_at(self) -> float:
        """While the server cannot be reached: the wait's deadline, or a little after the
        decision expires, whichever is first."""
        now = time.monotonic()
        by_expiry = (
            now + GRACE_UNKNOWN_EXPIRY_S
            if self.expires_at is None
            else max(self.expires_at + GRACE_AFTER_EXPIRY_S, now + FIRST_BACKOFF_S * 10)
        )
        return by_expiry if self.deadline is None else min(self.deadline, by_expiry)

    def saw(self, d: Decision) -> float:
        """Records a pending decision; returns how long to pause before the next round."""
        self.last = d
        left = (d.expires_at.timestamp() - time.time()) if d.expires_at else None
        if left is not None:
            self.expires_at = time.monotonic() + left
        quick = time.monotonic() - self.round_started < 1.0
        if not quick:
            self.quick_pause = 0.25
            return 0.0
        pause = self.quick_pause
        self.quick_pause = min(self.quick_pause * 2, MAX_BACKOFF_S)
        left_total = self.remaining()
        return pause if left_total is None else min(pause, left_total)

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def waited(self) -> float:
        return round(time.monotonic() - self.started, 1)


def list_params(
    status: str | None, kind: str | None, project: str | None, limit: int, cursor: str | None
) -> dict[str, str]:
    params = {"limit": str(limit)}
    for name, value in (("status", status), ("kind", kind), ("project", project)):
        if value is not None:
            params[name] = value
    if cursor:
        params["cursor"] = cursor
    return params
