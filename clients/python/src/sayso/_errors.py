"""The exceptions the client raises, each saying what is wrong in its message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._models import Decision


class SaysoError(Exception):
    """A request the server refused, or a server the client could not use.

    ``status`` is the HTTP status (``None`` when no usable answer came back), ``code`` the
    server's error code (``validation_failed``, ``unauthorized``, ``not_found``,
    ``already_resolved``, ``rate_limited``, …) or one of the client's own: ``unreachable``,
    ``not_sayso`` (the URL answers, but not as a sayso server), ``configuration`` (no key, or
    a URL the client cannot use), ``timeout``, ``webhook_invalid``. ``details`` lists each
    problem of a ``validation_failed`` as ``(path, message)``.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "error",
        details: list[tuple[str, str]] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details = details or []
        self.retry_after = retry_after

    def __str__(self) -> str:
        head = self.message
        if self.status is not None:
            head = f"{head} ({self.status} {self.code})"
        lines = [f"{p}: {m}" if p else m for p, m in self.details]
        # A single problem is usually the message itself.
        if len(lines) == 1 and lines[0] == self.message:
            lines = []
        return "\n  ".join([head, *lines])


class Timeout(SaysoError):
    """``wait`` ran out of its own time. The decision is still pending on the server: nobody
    answered it yet, and nothing was decided. ``decision`` is the last state read, when one
    was."""

    def __init__(self, decision_id: str, waited: float, decision: Decision | None) -> None:
        super().__init__(
            f"decision {decision_id} is still pending after waiting {waited:g} s; "
            "it stays open: wait again, or cancel it",
            code="timeout",
        )
        self.decision_id = decision_id
        self.decision = decision


class WebhookVerificationError(SaysoError):
    """A webhook whose signature, timestamp or headers do not hold: do not act on it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="webhook_invalid")


def from_response(status: int, body: Any, url: str) -> SaysoError:
    """Reads the server's error shape, ``{"error": {"code", "message", "details"}}``."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return SaysoError(
            f"{url} answered {status} without sayso's error shape; is the URL a sayso server?",
            status=status,
            code="not_sayso",
        )
    details = []
    for d in error.get("details") or []:
        if isinstance(d, dict):
            details.append((str(d.get("path") or ""), str(d.get("message") or "")))
    return SaysoError(
        str(error.get("message") or f"the server answered {status}"),
        status=status,
        code=str(error.get("code") or "error"),
        details=details,
    )
