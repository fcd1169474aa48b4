// A wait and an event stream outlive the server: stopped (its parked awaits answered
// pending at once) or killed outright, then started again on the same port and database;
// and a proxy in front of it that fails for a while.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { Sayso, SaysoError } from "sayso";
import { pause, sayso, server, useServer } from "./support/server.mjs";

useServer();

for (const signal of ["SIGTERM", "SIGKILL"]) {
  test(`a wait survives a restart of the server (${signal}) and gets the answer`, async () => {
    const question = `Still there after ${signal}?`;
    const handle = await sayso.ask({ question });
    let settled = false;
    const waiting = sayso.wait(handle, { timeout: 30_000 }).finally(() => (settled = true));
    await pause(300);
    await server.stop(signal);
    // Down for a while: the wait keeps trying rather than giving up or inventing an outcome.
    await pause(1500);
    assert.equal(settled, false, "the wait is still waiting while the server is down");
    await server.restart();
    await server.person().answer(question, { action: "answer", value: "no" });
    const d = await waiting;
    assert.equal(d.status, "answered");
    assert.equal(d.outcome, false);
  });
}

test("the event stream resumes after a restart with Last-Event-ID, missing and repeating nothing", async () => {
  const before = await sayso.ask({ question: "Before the restart?" });
  const during = await sayso.ask({ question: "While it was down?" });
  const ours = new Set([before.decision_id, during.decision_id]);
  const ctl = new AbortController();
  const seen = [];
  const reading = (async () => {
    for await (const ev of sayso.events({ signal: ctl.signal })) {
      if (ours.has(ev.decision.decision_id)) seen.push(ev.decision.decision_id);
      if (seen.length === 2) break;
    }
  })();
  const person = server.person();
  await person.answer("Before the restart?", { action: "answer", value: "yes" });
  while (seen.length < 1) await pause(50);
  await server.stop("SIGKILL");
  await server.restart();
  // Answered before the stream reconnects: it must come from the replay after the last id.
  await person.answer("While it was down?", { action: "answer", value: "yes" });
  await reading;
  assert.deepEqual(seen, [before.decision_id, during.decision_id]);
});

/** A proxy to the server that answers the first `failures` requests itself with `reply`. */
async function failingProxy(failures, reply) {
  let seen = 0;
  const proxy = createServer(async (req, res) => {
    if (seen++ < failures) return reply(res);
    const upstream = await fetch(server.base + req.url, { method: req.method, headers: { authorization: req.headers.authorization } });
    res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") });
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${proxy.address().port}`, count: () => seen, close: () => new Promise((r) => proxy.close(r)) };
}

test("a wait retries 503 and a gateway's 502 page, and never a 4xx", async () => {
  const replies = {
    503: (res) =>
      res.writeHead(503, { "content-type": "application/json", "retry-after": "0" }).end(
        JSON.stringify({ error: { code: "unavailable", message: "the database is unavailable; retry shortly", details: [] } }),
      ),
    502: (res) => res.writeHead(502, { "content-type": "text/html" }).end("<h1>502 Bad Gateway</h1>"),
  };
  for (const [status, reply] of Object.entries(replies)) {
    const question = `Through a proxy answering ${status}?`;
    const handle = await sayso.ask({ question });
    const proxy = await failingProxy(3, reply);
    try {
      const waiting = new Sayso({ url: proxy.url, key: server.key }).wait(handle, { timeout: 20_000 });
      // Three refusals, then a round that reaches the server and parks there.
      while (proxy.count() < 4) await pause(50);
      await server.person().answer(question, { action: "answer", value: "yes" });
      assert.equal((await waiting).outcome, true);
    } finally {
      await proxy.close();
    }
  }

  // A 4xx is the request's own fault: sent once, refused at once.
  const handle = await sayso.ask({ question: "Not found through the proxy?" });
  const proxy = await failingProxy(1, (res) =>
    res.writeHead(404, { "content-type": "application/json" }).end(
      JSON.stringify({ error: { code: "not_found", message: "no such decision", details: [] } }),
    ),
  );
  try {
    const e = await new Sayso({ url: proxy.url, key: server.key }).wait(handle).catch((e) => e);
    assert.ok(e instanceof SaysoError);
    assert.equal(e.code, "not_found");
    assert.equal(proxy.count(), 1, "sent once");
  } finally {
    await proxy.close();
  }
});
