"""ask + wait against the real server, answered by the person through their pages."""

from __future__ import annotations

import time
import uuid

import pytest
from helpers import joined, later
from sayso_client_fixtures import Person, unique

import sayso


def test_a_yes_reaches_the_waiting_agent(client: sayso.Client, person: Person) -> None:
    q = unique("Deploy v2.3 to production?")
    handle = client.ask(q, context="All checks green.", metadata={"run": 7}, notify="none")
    assert handle.web_url.startswith(client.url + "/d/")
    assert handle.warnings == [] and not handle.replayed
    answering = later(0.5, person.answer, q, value="yes", remark="after lunch")
    started = time.monotonic()
    d = client.wait(handle)
    assert joined(answering).status_code == 303
    assert time.monotonic() - started >= 0.4, "wait returned before the answer"
    assert (d.status, d.outcome, d.remark) == ("answered", True, "after lunch")
    assert d.metadata == {"run": 7} and d.answered_at is not None
    assert d.answered_by is not None and d.answered_by.channel == "link"
    assert [a.value for a in d.answers] == [True]
    assert isinstance(d.answers[0], sayso.Answer)
    assert "yes" in d.answer_text


def test_choose_text_and_form_come_back_shaped_by_kind(
    client: sayso.Client, person: Person
) -> None:
    pick = unique("Which database?")
    h1 = client.ask(pick, "choose", options=["PostgreSQL", {"label": "SQLite"}], notify="none")
    name = unique("Name the release")
    h2 = client.ask(name, "text", placeholder="e.g. Otter", ttl=600, notify="none")
    fill = unique("Details for the new user")
    schema = {
        "type": "object",
        "properties": {
            "email": {"type": "string", "title": "Email"},
            "seats": {"type": "integer"},
            "admin": {"type": "boolean"},
        },
        "required": ["email"],
    }
    h3 = client.ask(fill, "form", schema=schema, notify="none")
    assert person.answer(pick, value="SQLite").status_code == 303
    assert person.answer(name, value="Otter").status_code == 303
    assert person.answer(fill, email="ana@example.com", seats="3", admin="true").status_code == 303
    assert client.wait(h1).outcome == "SQLite"
    assert client.wait(h2).outcome == "Otter"
    form = client.wait(h3)
    assert form.outcome == {"email": "ana@example.com", "seats": 3, "admin": True}
    assert form.kind == "form"


def test_a_typed_other_is_custom(client: sayso.Client, person: Person) -> None:
    q = unique("Which colour?")
    h = client.ask(q, "choose", options=["Red", "Blue"], notify="none")
    person.answer(q, value="__other__", other="Teal")
    d = client.wait(h, timeout=10)
    assert (d.outcome, d.custom) == ("Teal", True)


def test_a_no_and_a_decline_are_outcomes_too(client: sayso.Client, person: Person) -> None:
    no = unique("Delete the branch?")
    h_no = client.ask(no, notify="none")
    declined = unique("Rename the project?")
    h_declined = client.ask(declined, notify="none")
    person.answer(no, value="no")
    person.answer(declined, action="decline")
    d = client.wait(h_no, timeout=10)
    assert (d.status, d.outcome) == ("answered", False)
    d = client.wait(h_declined, timeout=10)
    assert (d.status, d.outcome) == ("declined", None)


def test_a_todo_is_done(client: sayso.Client, person: Person) -> None:
    task = unique("Water the plants")
    h = client.todo(task, notify="none")
    person.answer(task, action="done")
    assert client.wait(h, timeout=10).outcome == "done"


def test_a_cancel_ends_the_wait_as_cancelled(client: sayso.Client) -> None:
    h = client.ask(unique("Restart the cache?"), notify="none")
    cancelling = later(0.5, client.cancel, h, "fixed it myself")
    d = client.wait(h, timeout=20)
    assert d.status == "cancelled" and d.outcome is None
    assert joined(cancelling).status == "cancelled"
    with pytest.raises(sayso.SaysoError) as again:
        client.cancel(h)
    assert (again.value.status, again.value.code) == (409, "already_resolved")
    kinds = [e.kind for e in client.audit_trail(h)]
    assert kinds[0] == "created" and "cancelled" in kinds


def test_timeout_leaves_the_decision_pending(client: sayso.Client) -> None:
    h = client.ask(unique("Ship on Friday?"), notify="none")
    started = time.monotonic()
    with pytest.raises(sayso.Timeout) as waited:
        client.wait(h, timeout=1.5)
    assert 1.4 <= time.monotonic() - started < 5
    assert waited.value.decision is not None and waited.value.decision.status == "pending"
    assert waited.value.decision.outcome is None
    assert isinstance(waited.value, sayso.SaysoError) and waited.value.code == "timeout"
    assert client.get(h).status == "pending"
    with pytest.raises(sayso.Timeout):
        client.wait(h, timeout=0)
    client.cancel(h)


def test_an_unanswered_question_expires_with_its_default(client: sayso.Client) -> None:
    h = client.ask(unique("Proceed?"), ttl_seconds=10, default_outcome=False, notify="none")
    d = client.wait(h, timeout=30)
    assert (d.status, d.outcome, d.outcome_source) == ("expired", False, "default")
    assert d.answered_at == d.expires_at


def test_the_same_idempotency_key_returns_the_first_handle(client: sayso.Client) -> None:
    q, key = unique("Tag the release?"), unique("run-4711")
    first = client.ask(q, idempotency_key=key, notify="none")
    again = client.ask(q, idempotency_key=key, notify="none")
    assert again.decision_id == first.decision_id and again.replayed and not first.replayed
    with pytest.raises(sayso.SaysoError) as other:
        client.ask(q + "!", idempotency_key=key, notify="none")
    assert other.value.code == "idempotency_mismatch"


def test_list_pages_through_the_inbox(client: sayso.Client) -> None:
    project = f"listing-{uuid.uuid4().hex[:8]}"
    made = [client.ask(unique(f"Listed {i}"), project=project, notify="none") for i in range(3)]
    listed = list(client.list(project=project, page_size=2))
    assert [d.decision_id for d in listed] == [h.decision_id for h in reversed(made)]
    for h in made:
        client.cancel(h)
