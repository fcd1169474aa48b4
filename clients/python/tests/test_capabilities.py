"""The agent's key never reaches an answer: nothing the client hands back holds the person's
links, and a tool approval's web_url only shows it."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import httpx
from sayso_client_fixtures import Person, Server, unique

import sayso


def exposed(obj: Any) -> str:
    """Everything a caller can read from what the client returned: fields, repr and the
    JSON each object was read from."""
    if isinstance(obj, BaseException):
        return f"{obj!s} {obj!r} {getattr(obj, 'details', '')}"
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        parts = [repr(obj), json.dumps(getattr(obj, "raw", {}), default=str)]
        parts += [exposed(getattr(obj, f.name)) for f in dataclasses.fields(obj)]
        return " ".join(parts)
    if isinstance(obj, (list, tuple)):
        return " ".join(exposed(o) for o in obj)
    return repr(obj)


def test_no_response_holds_an_answer_capability(server: Server, person: Person) -> None:
    q = unique("Claude Code wants to run: make deploy")
    approval = {"harness": "claude", "tool_name": "Bash", "tool_input": {"command": "make deploy"}}
    seen: list[Any] = []
    with sayso.Client(server.url, server.key) as client:
        h = client.ask(q, "choose", options=["Allow", "Deny"], approval=approval, notify="none")
        seen += [h, client.get(h), client.audit_trail(h), list(client.list(page_size=200))]
        try:
            client.wait(h, timeout=0)
        except sayso.Timeout as e:
            seen.append(e)

        # The person's way in: their own approval link, which only their feed carries.
        link = person.link_to("make deploy")
        assert link.startswith("/a/"), link
        token = link.removeprefix("/a/")

        # The web_url the agent holds shows the call but does not answer it.
        refused = httpx.post(h.web_url, data={"value": "Allow"},
                             headers={"Sec-Fetch-Site": "same-origin"})  # fmt: skip
        assert refused.status_code == 403, refused.text
        assert client.get(h).pending

        assert person.answer("make deploy", value="Allow").status_code == 303
        d = client.wait(h, timeout=10)
        assert (d.outcome, d.answered_by and d.answered_by.channel) == ("Allow", "feed")
        assert d.approval is not None and d.approval.tool_name == "Bash"
        seen += [d, client.audit_trail(h)]
        stream = client.events()
        seen += [next(e for e in stream if e.decision.decision_id == h.decision_id)]
        stream.close()
        try:
            client.cancel(h)
        except sayso.SaysoError as e:
            seen.append(e)

    text = exposed(seen)
    assert h.decision_id in text, "the check reads what the client returned"
    assert token not in text and token[-20:] not in text
    feed_token = server.feed.rsplit("/", 1)[1]
    assert feed_token not in text
    assert not re.search(r"/a/[A-Za-z0-9_-]{20,}", text), "a person link was exposed"
