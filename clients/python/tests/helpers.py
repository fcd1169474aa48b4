"""Small helpers the tests share."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import queue
import threading
from collections.abc import Callable, Iterator
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


Delivery = tuple[bytes, dict[str, str]]


@contextlib.contextmanager
def hook_receiver() -> Iterator[tuple[str, queue.Queue[Delivery]]]:
    """A callback_url on loopback that keeps the body and headers of each POST it receives."""
    got: queue.Queue[Delivery] = queue.Queue()

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            got.put((body, dict(self.headers.items())))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/hook", got
    finally:
        srv.shutdown()


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
