"""A wait outlives the server it waits on: killed mid-wait and started again, the answer
given after the restart still reaches the waiter."""

from __future__ import annotations

import time

from helpers import joined, later
from sayso_client_fixtures import Person, Server, unique

import sayso


def test_wait_survives_a_server_killed_and_started_again(own_server: Server) -> None:
    with sayso.Client(own_server.url, own_server.key) as client:
        q = unique("Roll back the migration?")
        handle = client.ask(q, notify="none")
        waiting = later(0.0, client.wait, handle, 60)
        time.sleep(0.7)  # parked in an await round
        own_server.kill()
        time.sleep(1.0)  # the waiter meets a refused connection, and keeps trying
        assert waiting.is_alive(), "the wait gave up on a server that was down"
        own_server.start()
        assert Person(own_server.feed).answer(q, value="yes").status_code == 303
        d = joined(waiting)
        assert (d.status, d.outcome) == ("answered", True)


def test_a_server_shutting_down_does_not_end_the_wait(own_server: Server) -> None:
    with sayso.Client(own_server.url, own_server.key) as client:
        q = unique("Rotate the key?")
        handle = client.ask(q, notify="none")
        waiting = later(0.0, client.wait, handle, 60)
        time.sleep(0.7)
        own_server.stop()  # parked awaits are answered at once, still pending
        own_server.start()
        Person(own_server.feed).answer(q, value="no")
        d = joined(waiting)
        assert (d.status, d.outcome) == ("answered", False)
