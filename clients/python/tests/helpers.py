"""Small helpers the tests share."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from typing import Any


def later(delay: float, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> threading.Thread:
    """Runs ``fn`` on a thread after ``delay`` seconds, while the test waits; ``join()``
    re-raises nothing, so the caller checks what ``fn`` returned through ``result``."""
    box: dict[str, Any] = {}

    def run() -> None:
        threading.Event().wait(delay)
        try:
            box["result"] = fn(*args, **kwargs)
        except BaseException as e:  # the test thread reports it
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.box = box  # type: ignore[attr-defined]
    t.start()
    return t


def joined(t: threading.Thread) -> Any:
    """What the thread's function returned; raises what it raised."""
    t.join(30)
    box = t.box  # type: ignore[attr-defined]
    if "error" in box:
        raise box["error"]
    return box.get("result")


def call_digest(tool_name: str, arguments: dict[str, Any]) -> str:
    """The digest a framework adapter keeps in an approval's metadata, written out here so a
    test pins what it covers: the tool's name and its arguments, as canonical JSON."""
    shown = json.dumps(
        {"tool": tool_name, "arguments": arguments},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(shown.encode()).hexdigest()
