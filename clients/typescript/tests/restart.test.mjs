// A wait and an event stream outlive the server: stopped (its parked awaits answered
// pending at once) or killed outright, then started again on the same port and database.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Sayso } from "sayso";
import { Server, pause } from "./support/server.mjs";

let server;
let sayso;

before(async () => {
  server = await Server.start();
  sayso = new Sayso({ url: server.base, key: server.key });
});
after(() => server?.close());

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
