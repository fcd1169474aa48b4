"""The real server for the client's tests, and a person who answers through its pages.

``SAYSO_BIN`` names the ``sayso`` binary (``cargo build`` makes ``target/debug/sayso``;
``cargo test --test client_python`` passes its own). Each server gets a fresh SQLite
database and state directory; the first run's ``first-run.txt`` gives the API key, the
feed link and the webhook secret. The person never uses the key: they open the feed link
as a phone does and post the answer page's own form.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest

import sayso

REPO = Path(__file__).resolve().parents[3]


def sayso_bin() -> str:
    path = os.environ.get("SAYSO_BIN") or str(REPO / "target" / "debug" / "sayso")
    if not Path(path).is_file():
        pytest.exit(f"no sayso binary at {path}: run `cargo build`, or set SAYSO_BIN", 2)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One ``sayso serve`` on a port and database of its own; ``kill`` and ``start`` again
    keep both."""

    def __init__(self, root: Path, **env: str) -> None:
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "SAYSO_DATABASE_URL": f"sqlite://{root / 'sayso.db'}",
            "SAYSO_LISTEN": f"127.0.0.1:{self.port}",
            "SAYSO_STATE_DIR": str(root),
            "SAYSO_RATE_LIMIT_PER_S": "0",
            "SAYSO_ALLOW_PRIVATE_WEBHOOKS": "1",
            "SAYSO_LOG": "warn",
            **env,
        }
        for name in ("SAYSO_URL", "SAYSO_KEY", "SAYSO_PUBLIC_URL"):
            self.env.pop(name, None)
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()
        secrets = (root / "first-run.txt").read_text()
        last = {
            label: next(line.split()[-1] for line in secrets.splitlines() if label in line)
            for label in ("API key", "Feed link", "Webhook signing secret")
        }
        self.key = last["API key"]
        self.feed = last["Feed link"]
        self.webhook_secret = last["Webhook signing secret"]

    def start(self) -> None:
        log = open(self.root / "server.log", "ab")  # noqa: SIM115 - kept by the process
        self.proc = subprocess.Popen(
            [sayso_bin(), "serve"], env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sayso serve exited: {(self.root / 'server.log').read_text()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("sayso serve did not answer /healthz within 30 s")

    def kill(self) -> None:
        """Ends the process at once, as a crash does: no shutdown, no answers to awaits."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def a_server() -> Iterator[Server]:
    with tempfile.TemporaryDirectory(prefix="sayso-py-") as root:
        srv = Server(Path(root))
        yield srv
        srv.stop()


server = pytest.fixture(scope="session", name="server")(a_server)
# A server of the test's own, for tests that stop it.
own_server = pytest.fixture(name="own_server")(a_server)


@pytest.fixture()
def client(server: Server) -> Iterator[sayso.Client]:
    """The client of the shared server, with its key."""
    with sayso.Client(server.url, server.key) as c:
        yield c


@pytest.fixture()
def person(server: Server) -> Person:
    return Person(server.feed)


def unique(text: str) -> str:
    """A question no other test asks, so the person finds the right one in the feed."""
    return f"{text} [{uuid.uuid4().hex[:8]}]"


class _Page(HTMLParser):
    """The links and the answer form of a page, as a browser reads them."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self.forms: list[tuple[str, str]] = []
        self.form_action: str | None = None
        self._href: str | None = None
        self._form: str | None = None
        self._text: list[str] = []
        self._form_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self._href, self._text = a["href"], []
        if tag == "form":
            self._form, self._form_text = a.get("action") or "", []
            if a.get("id") == "answer":
                self.form_action = a.get("action")

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)
        if self._form is not None:
            self._form_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((self._href, "".join(self._text)))
            self._href = None
        if tag == "form" and self._form is not None:
            self.forms.append((self._form, "".join(self._form_text)))
            self._form = None


class Person:
    """The person with their phone: a browser that opened the feed link once."""

    def __init__(self, feed_link: str) -> None:
        self.base = feed_link.split("/inbox/")[0]
        self.browser = httpx.Client(base_url=self.base, follow_redirects=False, timeout=30)
        opened = self.browser.get(feed_link)
        assert opened.status_code == 303, opened.text
        self.seen: list[str] = []

    def feed(self) -> str:
        resp = self.browser.get("/inbox")
        assert resp.status_code == 200, resp.text
        self.seen.append(resp.text)
        return resp.text

    def link_to(self, question: str) -> str:
        """The feed's link to the pending question: the person's own way in."""
        page = _Page()
        page.feed(self.feed())
        for href, text in page.links:
            if question in text:
                return href
        raise AssertionError(f"{question!r} is not in the feed")

    def answer_when_asked(self, question: str, **form: Any) -> httpx.Response:
        """Answers as soon as the question shows up in the feed (within 10 s)."""
        deadline = time.monotonic() + 10
        while question not in self.feed() and time.monotonic() < deadline:
            time.sleep(0.1)
        return self.answer(question, **form)

    def answer(self, question: str, **form: Any) -> httpx.Response:
        """Opens the question from the feed and sends its form as a browser does; a to-do
        is answered from the feed's own form, as its buttons do."""
        feed = _Page()
        feed.feed(self.feed())
        action = next((a for a, text in feed.forms if question in text), None)
        if action is not None:
            form = {"return": "feed", **form}
        else:
            page_resp = self.browser.get(self.link_to(question))
            assert page_resp.status_code == 200, page_resp.text
            page = _Page()
            page.feed(page_resp.text)
            assert page.form_action, f"no answer form on the page of {question!r}"
            action = page.form_action
        return self.browser.post(
            action,
            data={k: v for k, v in form.items() if v is not None},
            headers={"Sec-Fetch-Site": "same-origin", "Origin": "null"},
        )
