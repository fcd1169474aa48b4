"""Every call of the API written once, as a plan: a generator that yields the requests to
send (``Send``) and the pauses to make (``Sleep``), is sent each response back, and returns
the result. The blocking and the asyncio client run the same plans; all either does itself
is send a request and sleep (``_sync.py``, ``_async.py``).

A request that cannot be sent comes back into the plan as the ``Retry`` that
``_core.unreachable`` makes, raised at the ``yield`` that asked for it, with the transport's
error as its ``__cause__``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx

from . import _core
from ._body import ListFilters, create_request
from ._errors import SaysoError, Timeout
from ._models import AskHandle, AuditEvent, Decision, ResolvedEvent
from ._sse import SseParser

T = TypeVar("T")
H = TypeVar("H", httpx.Client, httpx.AsyncClient)
DecisionRef = str | AskHandle | Decision


@dataclass(frozen=True)
class Send:
    """One request: the path below the server's URL, and how long it may take."""

    method: str
    path: str
    json: Any = None
    params: Mapping[str, str] | None = None
    headers: Mapping[str, str] | None = None
    timeout: float = 30.0


@dataclass(frozen=True)
class Sleep:
    seconds: float


Step = Send | Sleep
Plan = Generator[Step, Any, T]


class ClientBase(Generic[H]):
    """What both clients hold: the checked settings, how long to retry, and the httpx
    client they send with (``Client`` says what each argument means)."""

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        retry_for: float = 30.0,
        http: H | None = None,
    ) -> None:
        self._s = _core.settings(url, key)
        self._retry_for = retry_for
        self._http: H = http or self._new_http()

    def _new_http(self) -> H:
        raise NotImplementedError

    @property
    def url(self) -> str:
        """The server's URL, as used."""
        return self._s.base


def request_args(s: _core.Settings, send: Send) -> dict[str, Any]:
    """``send`` as the keyword arguments of httpx's ``request``, for either client."""
    return {
        "method": send.method,
        "url": s.base + send.path,
        "json": send.json,
        "params": send.params,
        "headers": {**_core.headers(s), **(send.headers or {})},
        "timeout": httpx.Timeout(send.timeout, connect=10.0),
    }


#: What a request that could not be sent raises in the client's transport.
TRANSPORT_ERRORS = (httpx.TransportError, httpx.DecodingError)


def unsent(s: _core.Settings, e: Exception) -> _core.Retry:
    """The ``Retry`` a plan receives for a request that could not be sent."""
    retry = _core.unreachable(s, e)
    retry.__cause__ = e
    return retry


#: What came of a step: the response, the transport's error for a request that could not be
#: sent, or ``None`` after a sleep.
Outcome = httpx.Response | Exception | None


class Run(Generic[T]):
    """A plan as a client runs it, the generator driven here once for both clients: ``step``
    is what the plan asks for next, ``None`` once it has returned ``value``. The client does
    the step and hands back what came of it (``took``)."""

    def __init__(self, s: _core.Settings, plan: Plan[T]) -> None:
        self._s = s
        self._plan = plan
        self.step: Step | None = None
        self.value: T
        self._resume(lambda: plan.send(None))

    def took(self, outcome: Outcome) -> None:
        if isinstance(outcome, Exception):
            retry = unsent(self._s, outcome)
            self._resume(lambda: self._plan.throw(retry))
        else:
            self._resume(lambda: self._plan.send(outcome))

    def _resume(self, resume: Callable[[], Step]) -> None:
        try:
            self.step = resume()
        except StopIteration as done:
            self.step = None
            self.value = done.value


def retrying(attempt: Callable[[], Plan[T]], give_up_at: float) -> Plan[T]:
    """``attempt`` again after each ``Retry``, with growing pauses, until ``give_up_at``."""
    backoff = _core.Backoff(give_up_at)
    while True:
        try:
            return (yield from attempt())
        except _core.Retry as retry:
            yield Sleep(backoff.pause(retry))


def call(s: _core.Settings, retry_for: float, send: Send) -> Plan[Any]:
    """``send``, tried for ``retry_for`` seconds, and its JSON."""

    def attempt() -> Plan[Any]:
        return _core.read(s, (yield send))

    return (yield from retrying(attempt, time.monotonic() + retry_for))


def ask(
    s: _core.Settings, retry_for: float, question: str, kind: str, fields: dict[str, Any]
) -> Plan[AskHandle]:
    # Without an idempotency key of the caller's, one for this call, so a create retried
    # after a dropped connection is still made once.
    body, headers = create_request("ask", question, kind, fields)
    headers.setdefault("Idempotency-Key", f"sayso-python-{uuid.uuid4()}")

    def attempt() -> Plan[AskHandle]:
        resp = yield Send("POST", "/v1/decisions", json=body, headers=headers)
        return AskHandle.from_json(_core.read(s, resp), resp.status_code == 200)

    return (yield from retrying(attempt, time.monotonic() + retry_for))


def get(s: _core.Settings, retry_for: float, decision: DecisionRef) -> Plan[Decision]:
    data = yield from call(s, retry_for, Send("GET", _core.decision_path(decision)))
    return Decision.from_json(data)


def cancel(
    s: _core.Settings, retry_for: float, decision: DecisionRef, reason: str | None
) -> Plan[Decision]:
    body = {"reason": reason} if reason else {}
    path = _core.decision_path(decision, "cancel")

    def attempt() -> Plan[Decision]:
        try:
            resp = yield Send("POST", path, json=body)
        except _core.Retry as retry:
            # Only a connection never made is surely safe to repeat; one lost on the way
            # back may have cancelled it, which a read tells.
            if isinstance(retry.__cause__, httpx.ConnectError):
                raise
            return _core.after_lost_cancel((yield from get(s, retry_for, decision)), retry)
        return Decision.from_json(_core.read(s, resp))

    return (yield from retrying(attempt, time.monotonic() + retry_for))


def wait(s: _core.Settings, decision: DecisionRef, timeout: float | None) -> Plan[Decision]:
    path = _core.decision_path(decision, "await")
    plan = _core.WaitPlan(timeout)
    while True:
        timeout_s, limit = plan.next_round()
        send = Send("GET", path, params={"timeout_s": str(timeout_s)}, timeout=limit)

        def attempt(send: Send = send) -> Plan[Any]:
            return _core.read(s, (yield send))

        d = Decision.from_json((yield from retrying(attempt, plan.give_up_at())))
        if d.final:
            return d
        pause = plan.saw(d)
        if plan.out_of_time():
            raise Timeout(d.decision_id, plan.waited(), d)
        yield Sleep(pause)


def audit_trail(
    s: _core.Settings, retry_for: float, decision: DecisionRef
) -> Plan[list[AuditEvent]]:
    data = yield from call(s, retry_for, Send("GET", _core.decision_path(decision, "events")))
    return [AuditEvent.from_json(e) for e in data.get("items") or []]


class Pages:
    """``GET /v1/decisions`` a page at a time: ``next_page`` is the plan of the next one,
    ``None`` after the last."""

    def __init__(self, s: _core.Settings, retry_for: float, filters: ListFilters) -> None:
        self._s, self._retry_for, self._filters = s, retry_for, filters
        self._cursor: str | None = None
        self._done = False

    def next_page(self) -> Plan[list[Decision]] | None:
        return None if self._done else self._page()

    def _page(self) -> Plan[list[Decision]]:
        f = self._filters
        params = _core.list_params(
            f.get("status"), f.get("kind"), f.get("project"), f.get("page_size", 50), self._cursor
        )
        send = Send("GET", "/v1/decisions", params=params)
        page = yield from call(self._s, self._retry_for, send)
        self._cursor = page.get("next")
        self._done = not self._cursor
        return [Decision.from_json(item) for item in page.get("items") or []]


class EventStream:
    """The state of ``GET /v1/events`` across reconnections: the last event id seen (sent
    back as ``Last-Event-ID``, so no event is missed or repeated) and the pause before the
    next connection."""

    #: A keep-alive comment comes every 15 s: a quiet minute is a dead line.
    TIMEOUT = httpx.Timeout(10.0, read=60.0)

    def __init__(self, s: _core.Settings, last_event_id: int | None) -> None:
        self._s = s
        self._last = None if not last_event_id else str(last_event_id)
        self._backoff = _core.Backoff(float("inf"))
        self._parser = SseParser()

    def connect(self) -> dict[str, Any]:
        """The keyword arguments of httpx's ``stream`` for the next connection."""
        self._parser = SseParser()
        self._parser.last_id = self._last
        headers = {**_core.headers(self._s), "Accept": "text/event-stream"}
        if self._last:
            headers["Last-Event-ID"] = self._last
        url = self._s.base + "/v1/events"
        return {"method": "GET", "url": url, "headers": headers, "timeout": self.TIMEOUT}

    def refused(self, resp: httpx.Response) -> None:
        """A connection answered with anything but 200 (its body read): raises what it says."""
        _core.read(self._s, resp)

    def feed(self, line: str) -> ResolvedEvent | None:
        event = self._parser.feed(line)
        self._last = self._parser.last_id
        if event is not None:
            self._backoff = _core.Backoff(float("inf"))
        return event

    def pause(self, error: BaseException | None) -> float:
        """How long to wait before connecting again after the stream ended (``None``) or
        broke with ``error``; raises an error that no reconnection mends."""
        if error is None:
            return self._backoff.pause(_core.Retry(SaysoError("the stream ended")))
        if isinstance(error, TRANSPORT_ERRORS):
            return self._backoff.pause(_core.unreachable(self._s, error))
        if isinstance(error, _core.Retry):
            return self._backoff.pause(error)
        raise error
