"""``sayso.Client``: the blocking client."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from . import _core
from ._body import create_request
from ._errors import SaysoError, Timeout
from ._models import AskHandle, AuditEvent, Decision, ResolvedEvent
from ._sse import SseParser

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._body import AskFields

T = TypeVar("T")


class Client:
    """A sayso server and one inbox's API key.

    ``url`` and ``key`` default to ``SAYSO_URL`` (else ``http://127.0.0.1:8080``) and
    ``SAYSO_KEY``. ``retry_for`` is how long a call other than ``wait`` keeps trying a
    server that cannot be reached or answers ``503``; ``wait`` has rules of its own.
    Use it as a context manager, or call ``close()``.
    """

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        retry_for: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        self._s = _core.settings(url, key)
        self._retry_for = retry_for
        self._http = http or httpx.Client(timeout=httpx.Timeout(30.0, connect=10.0))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @property
    def url(self) -> str:
        """The server's URL, as used."""
        return self._s.base

    # ---- sending ----

    def _send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        request_timeout = httpx.Timeout(timeout or 30.0, connect=10.0)
        try:
            return self._http.request(
                method,
                self._s.base + path,
                json=json,
                params=params,
                headers={**_core.headers(self._s), **(headers or {})},
                timeout=request_timeout,
            )
        except (httpx.TransportError, httpx.DecodingError) as e:
            raise _core.unreachable(self._s, e) from e

    def _retrying(self, attempt: Callable[[], T], give_up_at: float) -> T:
        backoff = _core.Backoff(give_up_at)
        while True:
            try:
                return attempt()
            except _core.Retry as retry:
                time.sleep(backoff.pause(retry))

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        give_up = time.monotonic() + self._retry_for
        return self._retrying(lambda: _core.read(self._s, self._send(method, path, **kw)), give_up)

    # ---- the API ----

    def ask(self, question: str, kind: str = "bool", **fields: Unpack[AskFields]) -> AskHandle:
        """Asks the person; returns at once with the handle. Every field of
        ``POST /v1/decisions`` is a keyword (docs/API.md); ``idempotency_key`` goes in the
        ``Idempotency-Key`` header. Without one, the client makes one for this call, so a
        create retried after a dropped connection is still made once."""
        body, headers = create_request("ask", question, kind, fields)
        headers.setdefault("Idempotency-Key", f"sayso-python-{uuid.uuid4()}")

        def attempt() -> AskHandle:
            resp = self._send("POST", "/v1/decisions", json=body, headers=headers)
            return AskHandle.from_json(_core.read(self._s, resp), resp.status_code == 200)

        return self._retrying(attempt, time.monotonic() + self._retry_for)

    def todo(self, task: str, **fields: Unpack[AskFields]) -> AskHandle:
        """Gives the person a to-do (``kind="todo"``): answered ``"done"`` or ``"skipped"``."""
        return self.ask(task, "todo", **fields)

    def get(self, decision: str | AskHandle | Decision) -> Decision:
        """The decision as it stands."""
        return Decision.from_json(self._call("GET", _core.decision_path(decision)))

    def cancel(self, decision: str | AskHandle | Decision, reason: str | None = None) -> Decision:
        """Withdraws a pending decision; it becomes ``cancelled``. A decision already resolved
        is a ``SaysoError`` with ``code == "already_resolved"`` (409)."""
        body = {"reason": reason} if reason else {}
        path = _core.decision_path(decision, "cancel")

        def attempt() -> Decision:
            try:
                resp = self._send("POST", path, json=body)
            except _core.Retry as retry:
                # Only a connection never made is surely safe to repeat; one lost on the
                # way back may have cancelled it, which a read tells.
                if isinstance(retry.__cause__, httpx.ConnectError):
                    raise
                return _core.after_lost_cancel(self.get(decision), retry)
            return Decision.from_json(_core.read(self._s, resp))

        return self._retrying(attempt, time.monotonic() + self._retry_for)

    def wait(self, decision: str | AskHandle | Decision, timeout: float | None = None) -> Decision:
        """Waits until the decision is answered, declined, expired or cancelled, in as many
        await rounds as it takes, through dropped connections and server restarts.

        With ``timeout`` (seconds), raises ``sayso.Timeout`` when it passes with the
        decision still pending (it stays pending on the server). A server that cannot be
        reached is tried until then, or until a little after the decision's expiry.
        """
        path = _core.decision_path(decision, "await")
        plan = _core.WaitPlan(timeout)
        while True:
            timeout_s, request_timeout = plan.next_round()

            def attempt(timeout_s: int = timeout_s, limit: float = request_timeout) -> Any:
                params = {"timeout_s": str(timeout_s)}
                resp = self._send("GET", path, params=params, timeout=limit)
                return _core.read(self._s, resp)

            d = Decision.from_json(self._retrying(attempt, plan.give_up_at()))
            if d.final:
                return d
            pause = plan.saw(d)
            if plan.out_of_time():
                raise Timeout(d.decision_id, plan.waited(), d)
            time.sleep(pause)

    def ask_and_wait(
        self,
        question: str,
        kind: str = "bool",
        *,
        timeout: float | None = None,
        **fields: Unpack[AskFields],
    ) -> Decision:
        """``ask`` then ``wait``: the decision once it is final."""
        return self.wait(self.ask(question, kind, **fields), timeout)

    def audit_trail(self, decision: str | AskHandle | Decision) -> list[AuditEvent]:
        """Every step of the decision's life, oldest first (``GET …/events``)."""
        data = self._call("GET", _core.decision_path(decision, "events"))
        return [AuditEvent.from_json(e) for e in data.get("items") or []]

    def list(
        self,
        *,
        status: str | None = None,
        kind: str | None = None,
        project: str | None = None,
        page_size: int = 50,
    ) -> Iterator[Decision]:
        """The inbox's decisions, newest first, fetched a page at a time as iterated."""
        cursor: str | None = None
        while True:
            params = _core.list_params(status, kind, project, page_size, cursor)
            page = self._call("GET", "/v1/decisions", params=params)
            for item in page.get("items") or []:
                yield Decision.from_json(item)
            cursor = page.get("next")
            if not cursor:
                return

    def events(self, last_event_id: int | None = None) -> Iterator[ResolvedEvent]:
        """The inbox's resolutions as they happen (``GET /v1/events``), without end.

        Starts after ``last_event_id`` (``None`` or 0: the inbox's whole history first),
        and reconnects with ``Last-Event-ID`` whenever the stream ends or breaks, so no
        event is missed or repeated. Stop by breaking out of the loop.
        """
        last = None if not last_event_id else str(last_event_id)
        backoff = _core.Backoff(float("inf"))
        while True:
            parser = SseParser()
            parser.last_id = last
            headers = {**_core.headers(self._s), "Accept": "text/event-stream"}
            if last:
                headers["Last-Event-ID"] = last
            try:
                with self._http.stream(
                    "GET",
                    self._s.base + "/v1/events",
                    headers=headers,
                    # A keep-alive comment comes every 15 s: a quiet minute is a dead line.
                    timeout=httpx.Timeout(10.0, read=60.0),
                ) as resp:
                    if resp.status_code != 200:
                        resp.read()
                        _core.read(self._s, resp)
                    for line in resp.iter_lines():
                        event = parser.feed(line)
                        last = parser.last_id
                        if event is not None:
                            backoff = _core.Backoff(float("inf"))
                            yield event
            except (httpx.TransportError, httpx.DecodingError) as e:
                time.sleep(backoff.pause(_core.unreachable(self._s, e)))
            except _core.Retry as retry:
                time.sleep(backoff.pause(retry))
            else:
                time.sleep(backoff.pause(_core.Retry(SaysoError("the stream ended"))))
