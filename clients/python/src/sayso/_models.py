"""The shapes the API returns, as typed dataclasses (docs/API.md).

Each keeps the JSON it was read from in ``raw``, so a field a newer server adds is there
before this client knows its name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Status = Literal["pending", "answered", "declined", "expired", "cancelled"]
Kind = Literal["bool", "choose", "text", "form", "todo"]

#: Every status but ``pending`` is final: the decision never changes again.
FINAL_STATUSES: frozenset[str] = frozenset({"answered", "declined", "expired", "cancelled"})

_FRACTION = re.compile(r"(\.\d{1,6})\d*")


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 time as the server writes it (``Z``, up to nanoseconds); ``None`` stays."""
    if not isinstance(value, str) or not value:
        return None
    text = value.replace("Z", "+00:00").replace("z", "+00:00")
    # Python before 3.11 reads at most six digits of a fraction, and only three or six.
    text = _FRACTION.sub(lambda m: m.group(1).ljust(7, "0"), text, count=1)
    return datetime.fromisoformat(text)


def _time(value: Any) -> datetime:
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError(f"not a time: {value!r}")
    return parsed


@dataclass(frozen=True)
class AskHandle:
    """What ``ask`` returns: enough to wait for the answer and to show the person the link."""

    decision_id: str
    #: The answer page. A plain question's may be shared with the person; a tool approval's,
    #: or one asked of people by name, only shows the question.
    web_url: str
    expires_at: datetime
    #: Harmless problems the server accepted (an unknown field, a field of another kind, …).
    warnings: list[str]
    #: True when an ``idempotency_key`` replayed an earlier create: no new decision was made.
    replayed: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], replayed: bool = False) -> AskHandle:
        return cls(
            decision_id=str(data["decision_id"]),
            web_url=str(data["web_url"]),
            expires_at=_time(data["expires_at"]),
            warnings=[str(w) for w in data.get("warnings") or []],
            replayed=replayed,
            raw=data,
        )


@dataclass(frozen=True)
class Answer:
    """One person's answer, in the order given (``Decision.answers``)."""

    #: The person's name; ``None`` for an answer through ``web_url`` from nobody known.
    person: str | None
    #: ``answer``, ``decline``, ``done`` or ``skip``.
    action: str
    #: Shaped like the decision's ``outcome``; ``None`` for a decline.
    value: Any
    remark: str | None
    at: datetime
    #: ``link``, ``feed``, ``push``, ``ntfy``, ``email`` or ``api``.
    channel: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Answer:
        return cls(
            person=data.get("person"),
            action=str(data.get("action")),
            value=data.get("value"),
            remark=data.get("remark"),
            at=_time(data.get("at")),
            channel=str(data.get("channel")),
        )


@dataclass(frozen=True)
class Notification:
    """How far the telling of the person on one channel got."""

    channel: str
    #: ``pending``, ``sent``, ``failed`` or ``skipped``.
    status: str
    detail: str | None


@dataclass(frozen=True)
class AnsweredBy:
    """Which way a decision was answered, declined or cancelled."""

    channel: str
    device_id: str | None


@dataclass(frozen=True)
class Approval:
    """What a tool approval gates, as the person was shown."""

    harness: str
    tool_name: str
    session_id: str | None
    rule: str | None


@dataclass(frozen=True)
class Decision:
    """A decision as the server shows it (``GET /v1/decisions/{id}``)."""

    decision_id: str
    kind: str
    question: str
    project: str | None
    #: ``pending``, then one of ``answered``, ``declined``, ``expired``, ``cancelled``.
    status: str
    #: By kind: ``bool`` True/False; ``choose`` the label (a list with ``multi``); ``text`` the
    #: string; ``form`` a dict; ``todo`` ``"done"``/``"skipped"``. ``None`` while pending,
    #: when declined or cancelled, and when expired without a ``default_outcome``.
    outcome: Any
    #: ``human`` or ``default`` (an expiry that applied ``default_outcome``).
    outcome_source: str | None
    #: True when the person typed their own answer instead of picking an option.
    custom: bool
    remark: str | None
    answered_at: datetime | None
    created_at: datetime
    expires_at: datetime
    web_url: str
    metadata: dict[str, Any]
    #: One plain sentence describing the outcome, to hand to a model as is.
    answer_text: str
    notifications: list[Notification]
    answered_by: AnsweredBy | None
    answers: list[Answer]
    approval: Approval | None = None
    step_up: str | None = None
    routing: dict[str, Any] | None = None
    progress: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def pending(self) -> bool:
        return self.status == "pending"

    @property
    def final(self) -> bool:
        """Resolved one way or another; it never changes again."""
        return self.status in FINAL_STATUSES

    @property
    def answered(self) -> bool:
        return self.status == "answered"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        by = data.get("answered_by")
        approval = data.get("approval")
        return cls(
            decision_id=str(data["decision_id"]),
            kind=str(data["kind"]),
            question=str(data["question"]),
            project=data.get("project"),
            status=str(data["status"]),
            outcome=data.get("outcome"),
            outcome_source=data.get("outcome_source"),
            custom=bool(data.get("custom")),
            remark=data.get("remark"),
            answered_at=parse_time(data.get("answered_at")),
            created_at=_time(data["created_at"]),
            expires_at=_time(data["expires_at"]),
            web_url=str(data["web_url"]),
            metadata=dict(data.get("metadata") or {}),
            answer_text=str(data.get("answer_text") or ""),
            notifications=[
                Notification(str(n.get("channel")), str(n.get("status")), n.get("detail"))
                for n in data.get("notifications") or []
            ],
            answered_by=AnsweredBy(str(by.get("channel")), by.get("device_id")) if by else None,
            answers=[Answer.from_json(a) for a in data.get("answers") or []],
            approval=Approval(
                harness=str(approval.get("harness")),
                tool_name=str(approval.get("tool_name")),
                session_id=approval.get("session_id"),
                rule=approval.get("rule"),
            )
            if approval
            else None,
            step_up=data.get("step_up"),
            routing=data.get("routing"),
            progress=data.get("progress"),
            raw=data,
        )


@dataclass(frozen=True)
class AuditEvent:
    """One step of a decision's life (``GET /v1/decisions/{id}/events``): ``created``,
    ``viewed``, ``notified``, ``voted``, ``escalated``, ``answered``, ``declined``,
    ``cancelled``, ``expired``."""

    kind: str
    at: datetime
    #: What the step holds: an answer's ``person``, ``channel``, ``notes``,
    #: ``edited_command``; a notification's ``channel``, ``status``; …
    detail: dict[str, Any]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuditEvent:
        detail = data.get("detail")
        return cls(
            kind=str(data.get("kind")),
            at=_time(data.get("at")),
            detail=detail if isinstance(detail, dict) else {},
            raw=data,
        )


@dataclass(frozen=True)
class ResolvedEvent:
    """One event of the inbox's stream (``GET /v1/events``): a decision that resolved."""

    #: The stream's id of the event: increasing and durable; ``events(last_event_id=…)``
    #: resumes after it.
    id: int
    #: ``decision.resolved``.
    type: str
    decision: Decision
