"""Reading ``text/event-stream`` line by line (the WHATWG rules sayso's stream needs)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ._models import Decision, ResolvedEvent


@dataclass
class _Frame:
    id: str | None = None
    event: str = "message"
    data: list[str] | None = None


class SseParser:
    """Fed one line at a time; returns an event when a blank line ends one."""

    def __init__(self) -> None:
        self.frame = _Frame()
        #: The id of the last event with one: where a reconnect resumes.
        self.last_id: str | None = None

    def feed(self, line: str) -> ResolvedEvent | None:
        if line == "":
            frame, self.frame = self.frame, _Frame()
            if frame.id is not None:
                self.last_id = frame.id
            if frame.data is None:
                return None
            return _event(frame, "\n".join(frame.data))
        if line.startswith(":"):
            return None  # a keep-alive comment
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self.frame.data = [*(self.frame.data or []), value]
        elif name == "event":
            self.frame.event = value
        elif name == "id" and "\0" not in value:
            self.frame.id = value
        return None


def _event(frame: _Frame, data: str) -> ResolvedEvent | None:
    try:
        payload = json.loads(data)
        event_id = int(frame.id or 0)
    except ValueError:
        return None
    if not isinstance(payload, dict) or "decision_id" not in payload:
        return None
    return ResolvedEvent(id=event_id, type=frame.event, decision=Decision.from_json(payload))
