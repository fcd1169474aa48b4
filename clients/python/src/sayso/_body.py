"""The body of ``POST /v1/decisions`` made from ``ask``'s keyword arguments.

The names are the API's own (docs/API.md, "Creating"), plus three conveniences: ``context``
for ``context_md``, ``image`` (bytes) for ``context_image_b64``, and ``ttl`` (seconds or a
``timedelta``) for ``ttl_minutes`` / ``ttl_seconds``. A keyword the API does not have is a
``TypeError`` naming it, before anything is sent.
"""

from __future__ import annotations

import base64
import difflib
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, Literal, TypedDict


class ListFilters(TypedDict, total=False):
    """What ``list`` takes: the decisions' status, kind and project (all of them when not
    given), and how many a page of the listing holds (50 when not given)."""

    status: str | None
    kind: str | None
    project: str | None
    page_size: int


class AskFields(TypedDict, total=False):
    """Every optional field of a create, by the name ``ask`` takes it."""

    project: str
    options: Sequence[str | Mapping[str, Any]]
    multi: bool
    recommended: int
    allow_other: bool
    yes_label: str
    no_label: str
    placeholder: str
    schema: Mapping[str, Any]
    questions: Sequence[Mapping[str, Any]]
    context: str
    context_md: str
    image: bytes
    context_image_b64: str
    attachments: Sequence[Mapping[str, Any]]
    ttl: float | timedelta
    ttl_minutes: int
    ttl_seconds: int
    default_outcome: Any
    allow_remark: bool
    notify: Literal["push", "email", "none"]
    callback_url: str
    completion: Mapping[str, Any]
    metadata: Mapping[str, Any]
    approval: Mapping[str, Any]
    approvers: Sequence[str]
    required: int
    escalate_after_s: int | timedelta
    escalate_to: Sequence[str]
    urgent: bool
    idempotency_key: str


FIELDS: frozenset[str] = frozenset(AskFields.__annotations__)

# Two names for one field: passing both is a mistake worth naming.
_ALIASES = {"context": "context_md", "image": "context_image_b64"}


def create_request(
    method: str, question: str, kind: str, fields: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON body and the extra headers of a create; ``TypeError`` for a keyword the API
    does not take, or two keywords that set one field."""
    unknown = sorted(set(fields) - FIELDS)
    if unknown:
        name = unknown[0]
        close = difflib.get_close_matches(name, sorted(FIELDS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TypeError(f"{method}() got an unexpected keyword argument {name!r}{hint}")
    given = {k: v for k, v in fields.items() if v is not None}
    for alias, name in _ALIASES.items():
        if alias in given and name in given:
            raise TypeError(f"{method}() takes {alias!r} or {name!r}, not both")
    ttls = [k for k in ("ttl", "ttl_minutes", "ttl_seconds") if k in given]
    if len(ttls) > 1:
        raise TypeError(f"{method}() takes one of {', '.join(map(repr, ttls))}, not several")

    headers: dict[str, str] = {}
    body: dict[str, Any] = {"question": question, "kind": kind}
    for name, value in given.items():
        if name == "idempotency_key":
            headers["Idempotency-Key"] = str(value)
        elif name == "context":
            body["context_md"] = value
        elif name == "image":
            body["context_image_b64"] = base64.b64encode(bytes(value)).decode("ascii")
        elif name == "ttl":
            body.update(_ttl(value))
        elif name == "escalate_after_s" and isinstance(value, timedelta):
            body[name] = round(value.total_seconds())
        elif isinstance(value, Mapping):
            body[name] = dict(value)
        elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            body[name] = [dict(v) if isinstance(v, Mapping) else v for v in value]
        else:
            body[name] = value
    return body, headers


def _ttl(value: float | timedelta) -> dict[str, int]:
    """Whole minutes read as the API's usual unit; anything finer goes as seconds."""
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    whole = round(seconds)
    if whole % 60 == 0 and whole > 0:
        return {"ttl_minutes": whole // 60}
    return {"ttl_seconds": whole}
