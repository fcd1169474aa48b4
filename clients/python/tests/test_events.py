"""The inbox's event stream and a decision's audit trail."""

from __future__ import annotations

import time

from sayso_client_fixtures import Person, Server, unique

import sayso


def test_events_stream_resolutions_and_resume_after_the_last_id(
    server: Server, person: Person
) -> None:
    with sayso.Client(server.url, server.key) as client:
        q1, q2 = unique("First?"), unique("Second?")
        h1 = client.ask(q1, notify="none")
        person.answer(q1, value="yes")
        stream = client.events()
        first = next(e for e in stream if e.decision.decision_id == h1.decision_id)
        assert isinstance(first, sayso.ResolvedEvent)
        assert first.type == "decision.resolved" and first.id > 0
        assert first.decision.outcome is True
        h2 = client.ask(q2, notify="none")
        person.answer(q2, value="no")
        # Live: the stream goes on after the history.
        second = next(e for e in stream if e.decision.decision_id == h2.decision_id)
        assert second.id > first.id
        stream.close()

        # A new stream from the first id gets what came after it, and nothing before.
        resumed = client.events(last_event_id=first.id)
        for event in resumed:
            assert event.id > first.id
            if event.id == second.id:
                break
        resumed.close()


def test_the_event_stream_reconnects_through_a_restart(own_server: Server) -> None:
    with sayso.Client(own_server.url, own_server.key) as client:
        person = Person(own_server.feed)
        q1, q2 = unique("Before?"), unique("After?")
        h1, h2 = client.ask(q1, notify="none"), client.ask(q2, notify="none")
        person.answer(q1, value="yes")
        stream = client.events()
        assert next(stream).decision.decision_id == h1.decision_id
        own_server.kill()
        time.sleep(0.3)
        own_server.start()
        Person(own_server.feed).answer(q2, value="yes")
        event = next(stream)
        assert event.decision.decision_id == h2.decision_id, "nothing repeated, nothing missed"
        stream.close()


def test_the_audit_trail_names_each_step(server: Server, person: Person) -> None:
    with sayso.Client(server.url, server.key) as client:
        q = unique("Merge it?")
        h = client.ask(q, notify="none")
        person.answer(q, value="yes")
        trail = client.audit_trail(h)
        kinds = [e.kind for e in trail]
        assert kinds[0] == "created" and "viewed" in kinds and "answered" in kinds
        assert all(isinstance(e, sayso.AuditEvent) for e in trail)
        answered = next(e for e in trail if e.kind == "answered")
        assert answered.detail.get("channel") == "link"
