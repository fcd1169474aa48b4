"""AsyncClient: the same calls, awaited, against the real server."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from sayso_client_fixtures import Person, Server, unique

import sayso


def test_ask_and_wait_answered_by_the_person(server: Server, person: Person) -> None:
    async def main() -> None:
        async with sayso.AsyncClient(server.url, server.key) as client:
            q = unique("Merge the pull request?")
            h = await client.ask(q, notify="none", metadata={"pr": 12})
            answering = asyncio.get_running_loop().run_in_executor(
                None, lambda: (time.sleep(0.5), person.answer(q, value="yes"))[1]
            )
            d = await client.wait(h)
            assert (await answering).status_code == 303
            assert (d.status, d.outcome, d.metadata) == ("answered", True, {"pr": 12})
            assert (await client.get(h)).outcome is True
            trail = await client.audit_trail(h)
            assert "answered" in [e.kind for e in trail]

            choice = unique("Which region?")
            h2 = await client.ask(choice, "choose", options=["eu", "us"], notify="none")
            person.answer(choice, value="eu")
            assert (await client.wait(h2, timeout=10)).outcome == "eu"

    asyncio.run(main())


def test_timeout_cancel_and_errors(server: Server) -> None:
    async def main() -> None:
        async with sayso.AsyncClient(server.url, server.key) as client:
            h = await client.ask(unique("Drop the table?"), notify="none")
            with pytest.raises(sayso.Timeout) as e:
                await client.wait(h, timeout=1)
            assert e.value.decision is not None and e.value.decision.pending
            assert (await client.get(h)).status == "pending"
            waiting = asyncio.create_task(client.wait(h, timeout=20))
            await asyncio.sleep(0.3)
            cancelled = await client.cancel(h, reason="not needed")
            assert cancelled.status == "cancelled"
            assert (await waiting).status == "cancelled"
            with pytest.raises(sayso.SaysoError) as refused:
                await client.ask("Which?", "choose", options=["one"])
            assert refused.value.code == "validation_failed" and "options" in str(refused.value)
            with pytest.raises(TypeError, match="'colour'"):
                await client.ask("Deploy?", colour="red")  # type: ignore[call-arg]
            listed = [d async for d in client.list(status="cancelled", page_size=5)]
            assert h.decision_id in [d.decision_id for d in listed]
        async with sayso.AsyncClient(server.url, "sk_wrong") as wrong:
            with pytest.raises(sayso.SaysoError) as e:
                await wrong.get(h)
            assert e.value.status == 401

    asyncio.run(main())


def test_async_events_and_a_restart_mid_wait(own_server: Server) -> None:
    async def main() -> None:
        async with sayso.AsyncClient(own_server.url, own_server.key) as client:
            q = unique("Scale down?")
            h = await client.ask(q, notify="none")
            waiting = asyncio.create_task(client.wait(h, timeout=60))
            await asyncio.sleep(0.7)
            own_server.kill()
            await asyncio.sleep(0.8)
            assert not waiting.done()
            own_server.start()
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: Person(own_server.feed).answer(q, value="no")
            )
            d = await waiting
            assert (d.status, d.outcome) == ("answered", False)
            async with contextlib.aclosing(client.events()) as stream:
                async for event in stream:
                    assert isinstance(event, sayso.ResolvedEvent)
                    if event.decision.decision_id == h.decision_id:
                        assert event.decision.outcome is False
                        break

    asyncio.run(main())
