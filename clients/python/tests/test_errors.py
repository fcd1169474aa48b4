"""Each wrong setting and refused request names what is wrong."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator

import pytest
from sayso_client_fixtures import Server, free_port

import sayso


@pytest.fixture()
def web_page() -> Iterator[str]:
    """A web server that is not sayso: an HTML page for every path."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self._page()

        def do_POST(self) -> None:  # noqa: N802
            self._page()

        def _page(self) -> None:
            body = b"<html><body>Welcome to nginx!</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_a_wrong_key_says_the_key_is_unknown(server: Server) -> None:
    with sayso.Client(server.url, "sk_" + "x" * 43) as client:
        with pytest.raises(sayso.SaysoError) as e:
            client.ask("Deploy?")
    assert (e.value.status, e.value.code) == (401, "unauthorized")
    assert "API key" in str(e.value) and "the key argument" in str(e.value)
    assert "x" * 20 not in str(e.value), "the message shows the whole key"


def test_the_environment_supplies_url_and_key(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAYSO_URL", server.url)
    monkeypatch.setenv("SAYSO_KEY", server.key)
    with sayso.Client() as client:
        assert client.url == server.url
        assert list(client.list(status="pending", page_size=1)) is not None
    monkeypatch.setenv("SAYSO_KEY", "sk_wrong_key_from_the_environment")
    with sayso.Client() as client, pytest.raises(sayso.SaysoError) as e:
        client.get("01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c")
    assert e.value.status == 401 and "SAYSO_KEY" in str(e.value)
    monkeypatch.delenv("SAYSO_KEY")
    with pytest.raises(sayso.SaysoError) as e:
        sayso.Client()
    assert e.value.code == "configuration" and "SAYSO_KEY" in str(e.value)


def test_an_unreachable_server_is_named_after_retrying(server: Server) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with (
        sayso.Client(url, server.key, retry_for=1.0) as client,
        pytest.raises(sayso.SaysoError) as e,
    ):
        client.get("01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c")
    assert 0.5 < time.monotonic() - started < 5, "retried for about retry_for"
    assert e.value.code == "unreachable" and e.value.status is None
    assert url in str(e.value) and "cannot reach" in str(e.value)


def test_a_server_that_is_not_sayso_is_named(server: Server, web_page: str) -> None:
    with sayso.Client(web_page, server.key) as client, pytest.raises(sayso.SaysoError) as e:
        client.ask("Deploy?")
    assert e.value.code == "not_sayso" and web_page in str(e.value)
    assert "sayso server?" in str(e.value)


def test_a_url_into_the_api_is_refused_before_any_request(server: Server) -> None:
    for wrong in (server.url + "/v1", server.url + "/v1/", server.url + "/v1/decisions"):
        with pytest.raises(sayso.SaysoError) as e:
            sayso.Client(wrong, server.key)
        assert e.value.code == "configuration"
        assert f"({server.url})" in str(e.value), str(e.value)
    with pytest.raises(sayso.SaysoError, match="http:// or https://"):
        sayso.Client("ftp://example.com", server.key)


def test_a_path_that_is_not_the_servers_root_is_named(server: Server) -> None:
    with (
        sayso.Client(server.url + "/sayso", server.key) as client,
        pytest.raises(sayso.SaysoError) as e,
    ):
        client.ask("Deploy?")
    assert e.value.status == 404 and "not an endpoint" in str(e.value)


def test_a_refused_field_is_named_with_its_path(server: Server) -> None:
    with sayso.Client(server.url, server.key) as client:
        with pytest.raises(sayso.SaysoError) as e:
            client.ask("Which one?", "choose", options=["only one"], ttl_minutes=0)
        assert (e.value.status, e.value.code) == (422, "validation_failed")
        paths = [p for p, _ in e.value.details]
        assert "options" in paths and "ttl_minutes" in paths, e.value.details
        assert "options" in str(e.value) and "ttl_minutes" in str(e.value)
        with pytest.raises(TypeError, match="'colour'"):
            client.ask("Deploy?", colour="red")  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="did you mean 'ttl_seconds'"):
            client.ask("Deploy?", ttl_second=30)  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="not both"):
            client.ask("Deploy?", context="a", context_md="b")
        with pytest.raises(sayso.SaysoError) as e:
            client.get("01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c")
        assert (e.value.status, e.value.code) == (404, "not_found")


def test_harmless_problems_come_back_as_warnings(server: Server) -> None:
    with sayso.Client(server.url, server.key) as client:
        h = client.ask("Deploy?", yes_label="Ship it", options=["a", "b"], notify="none")
        assert h.warnings and "options" in h.warnings[0]
        client.cancel(h)
