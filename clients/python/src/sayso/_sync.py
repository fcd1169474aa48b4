"""``sayso.Client``: the blocking client. It runs the plans of ``_ops`` with httpx's
blocking client and ``time.sleep``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, TypeVar

import httpx

from . import _core, _ops
from ._models import AskHandle, AuditEvent, Decision, ResolvedEvent

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._body import AskFields, ListFilters

T = TypeVar("T")


class Client(_ops.ClientBase[httpx.Client]):
    """A sayso server and one inbox's API key.

    ``url`` and ``key`` default to ``SAYSO_URL`` (else ``http://127.0.0.1:8080``) and
    ``SAYSO_KEY``. ``retry_for`` is how long a call other than ``wait`` keeps trying a
    server that cannot be reached or answers ``503``; ``wait`` has rules of its own.
    ``http`` is the httpx client to send with, made here when not given. Use it as a
    context manager, or call ``close()``.
    """

    def _new_http(self) -> httpx.Client:
        return httpx.Client(timeout=httpx.Timeout(30.0, connect=10.0))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _run(self, plan: _ops.Plan[T]) -> T:
        """Sends what ``plan`` asks for and sleeps as it says, until it returns."""
        run = _ops.Run(self._s, plan)
        while run.step is not None:
            run.took(self._take(run.step))
        return run.value

    def _take(self, step: _ops.Step) -> _ops.Outcome:
        if isinstance(step, _ops.Sleep):
            time.sleep(step.seconds)
            return None
        try:
            return self._http.request(**_ops.request_args(self._s, step))
        except _ops.TRANSPORT_ERRORS as e:
            return e

    # ---- the API (docs/CLIENTS.md) ----

    def ask(self, question: str, kind: str = "bool", **fields: Unpack[AskFields]) -> AskHandle:
        """Asks the person; returns at once with the handle. Every field of
        ``POST /v1/decisions`` is a keyword (docs/API.md); ``idempotency_key`` goes in the
        ``Idempotency-Key`` header. Without one, the client makes one for this call, so a
        create retried after a dropped connection is still made once."""
        return self._run(_ops.ask(self._s, self._retry_for, question, kind, dict(fields)))

    def todo(self, task: str, **fields: Unpack[AskFields]) -> AskHandle:
        """Gives the person a to-do (``kind="todo"``): answered ``"done"`` or ``"skipped"``."""
        return self.ask(task, "todo", **fields)

    def get(self, decision: _ops.DecisionRef) -> Decision:
        """The decision as it stands."""
        return self._run(_ops.get(self._s, self._retry_for, decision))

    def cancel(self, decision: _ops.DecisionRef, reason: str | None = None) -> Decision:
        """Withdraws a pending decision; it becomes ``cancelled``. A decision already resolved
        is a ``SaysoError`` with ``code == "already_resolved"`` (409)."""
        return self._run(_ops.cancel(self._s, self._retry_for, decision, reason))

    def wait(self, decision: _ops.DecisionRef, timeout: float | None = None) -> Decision:
        """Waits until the decision is answered, declined, expired or cancelled, in as many
        await rounds as it takes, through dropped connections and server restarts.

        With ``timeout`` (seconds), raises ``sayso.Timeout`` when it passes with the
        decision still pending (it stays pending on the server). A server that cannot be
        reached is tried until then, or until a little after the decision's expiry.
        """
        return self._run(_ops.wait(self._s, decision, timeout))

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

    def audit_trail(self, decision: _ops.DecisionRef) -> list[AuditEvent]:
        """Every step of the decision's life, oldest first (``GET …/events``)."""
        return self._run(_ops.audit_trail(self._s, self._retry_for, decision))

    def list(self, **filters: Unpack[ListFilters]) -> Iterator[Decision]:
        """The inbox's decisions, newest first, fetched a page at a time as iterated."""
        pages = _ops.Pages(self._s, self._retry_for, filters)
        while (page := pages.next_page()) is not None:
            yield from self._run(page)

    def events(self, last_event_id: int | None = None) -> Iterator[ResolvedEvent]:
        """The inbox's resolutions as they happen (``GET /v1/events``), without end.

        Starts after ``last_event_id`` (``None`` or 0: the inbox's whole history first),
        and reconnects with ``Last-Event-ID`` whenever the stream ends or breaks, so no
        event is missed or repeated. Stop by breaking out of the loop.
        """
        stream = _ops.EventStream(self._s, last_event_id)
        while True:
            error: BaseException | None = None
            try:
                with self._http.stream(**stream.connect()) as resp:
                    if resp.status_code != 200:
                        resp.read()
                        stream.refused(resp)
                    for line in resp.iter_lines():
                        if (event := stream.feed(line)) is not None:
                            yield event
            except (*_ops.TRANSPORT_ERRORS, _core.Retry) as e:
                error = e
            time.sleep(stream.pause(error))
