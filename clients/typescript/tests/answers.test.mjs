// ask + wait against the real server, the person answering from their feed: every kind,
// declined, cancelled, a wait that times out or is aborted, list, the audit trail, events.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Sayso, SaysoError, SaysoTimeoutError } from "sayso";
import { Server, pause } from "./support/server.mjs";

let server;
let sayso;
let person;

before(async () => {
  server = await Server.start();
  sayso = new Sayso({ url: server.base, key: server.key });
  person = server.person();
});
after(() => server?.close());

/** Asks, lets the person answer from the feed while `wait` is parked, and returns the decision. */
async function askAndAnswer(fields, answer) {
  const handle = await sayso.ask(fields);
  const waiting = sayso.wait(handle, { timeout: 20_000 });
  await pause(100);
  await person.answer(fields.question, answer);
  return [handle, await waiting];
}

test("a yes/no question is asked, answered from the feed and waited for", async () => {
  const [handle, d] = await askAndAnswer(
    { question: "Deploy v2.3 to production?", context_md: "All checks green." },
    { action: "answer", value: "yes", remark: "after lunch" },
  );
  assert.match(handle.decision_id, /^[0-9a-f-]{36}$/);
  assert.deepEqual(handle.warnings, []);
  assert.equal(d.decision_id, handle.decision_id);
  assert.equal(d.kind, "bool", "kind defaults to bool");
  assert.equal(d.status, "answered");
  assert.equal(d.outcome, true);
  assert.equal(d.outcome_source, "human");
  assert.equal(d.remark, "after lunch");
  assert.equal(d.answered_by.channel, "link");
  assert.match(d.answer_text, /yes/);
});

test("choose, text and form answers come back as the label, the string and the object", async () => {
  const [, chosen] = await askAndAnswer(
    { question: "Which database?", kind: "choose", options: ["PostgreSQL", "SQLite"] },
    { action: "answer", value: "SQLite" },
  );
  assert.equal(chosen.status, "answered");
  assert.equal(chosen.outcome, "SQLite");
  assert.equal(chosen.custom, false);

  const [, text] = await askAndAnswer(
    { question: "Name the release", kind: "text" },
    { action: "answer", value: "Otter" },
  );
  assert.equal(text.outcome, "Otter");

  const schema = {
    type: "object",
    properties: { email: { type: "string", title: "Email" }, admin: { type: "boolean", title: "Admin?" } },
    required: ["email"],
  };
  const [, form] = await askAndAnswer(
    { question: "Details for the new user", kind: "form", schema },
    { action: "answer", value: { email: "ada@example.com", admin: true } },
  );
  assert.deepEqual(form.outcome, { email: "ada@example.com", admin: true });
});

test("a to-do is done from the feed", async () => {
  const handle = await sayso.todo("Water the plants", { project: "home" });
  assert.equal(await person.submitForm("Water the plants", { return: "feed", action: "done" }), "/inbox");
  const d = await sayso.wait(handle, { timeout: 10_000 });
  assert.equal(d.kind, "todo");
  assert.equal(d.project, "home");
  assert.equal(d.outcome, "done");
});

test("a declined question ends declined, with no outcome", async () => {
  const [, d] = await askAndAnswer({ question: "Rotate the keys now?" }, { action: "decline", remark: "not today" });
  assert.equal(d.status, "declined");
  assert.equal(d.outcome, null);
  assert.equal(d.remark, "not today");
});

test("a question cancelled while waited for ends the wait cancelled", async () => {
  const handle = await sayso.ask({ question: "Restart the queue?" });
  const waiting = sayso.wait(handle, { timeout: 10_000 });
  await pause(100);
  const cancelled = await sayso.cancel(handle, { reason: "fixed it myself" });
  assert.equal(cancelled.status, "cancelled");
  const d = await waiting;
  assert.equal(d.status, "cancelled");
  assert.equal(d.outcome, null);
  assert.equal(d.answered_by.channel, "api");
  // A second cancel says it is over, by code.
  const again = await sayso.cancel(handle).catch((e) => e);
  assert.ok(again instanceof SaysoError);
  assert.equal(again.status, 409);
  assert.equal(again.code, "already_resolved");
});

test("a wait that runs out of time rejects with SaysoTimeoutError and leaves the decision pending", async () => {
  const handle = await sayso.ask({ question: "Wait for me?", kind: "text" });
  const started = Date.now();
  const err = await sayso.wait(handle, { timeout: 1500 }).catch((e) => e);
  const took = Date.now() - started;
  assert.ok(err instanceof SaysoTimeoutError, String(err));
  assert.ok(err instanceof SaysoError);
  assert.equal(err.code, "timeout");
  assert.equal(err.decisionId, handle.decision_id);
  assert.equal(err.decision?.status, "pending");
  assert.ok(took >= 1400 && took < 4000, `took ${took} ms`);
  assert.equal((await sayso.get(handle)).status, "pending");
  // timeout 0 looks once.
  const once = await sayso.wait(handle.decision_id, { timeout: 0 }).catch((e) => e);
  assert.ok(once instanceof SaysoTimeoutError);
  assert.equal(once.decision?.status, "pending");
  // Still answerable, and then a wait returns at once.
  await person.answer("Wait for me?", { action: "answer", value: "yes, later" });
  const d = await sayso.wait(handle, { timeout: 5000 });
  assert.equal(d.outcome, "yes, later");
});

test("an aborted wait rejects with the signal's reason at once and changes nothing", async () => {
  const handle = await sayso.ask({ question: "Abort me?" });
  const ctl = new AbortController();
  const started = Date.now();
  setTimeout(() => ctl.abort(), 200);
  const err = await sayso.wait(handle, { signal: ctl.signal }).catch((e) => e);
  assert.equal(err.name, "AbortError");
  assert.ok(Date.now() - started < 1500, "returned promptly");
  assert.equal((await sayso.get(handle)).status, "pending");
  const reason = new Error("shutting down");
  const pre = await sayso.wait(handle, { signal: AbortSignal.abort(reason) }).catch((e) => e);
  assert.equal(pre, reason, "an aborted signal rejects with its own reason");
  await sayso.cancel(handle);
});

test("list and the audit trail show what happened", async () => {
  const handle = await sayso.ask({ question: "Listed?", project: "audit" });
  const page = await sayso.list({ project: "audit", status: "pending" });
  assert.deepEqual(page.items.map((d) => d.decision_id), [handle.decision_id]);
  assert.equal(page.next, null);
  await sayso.cancel(handle, { reason: "only a test" });
  const trail = await sayso.auditTrail(handle);
  const kinds = trail.map((e) => e.kind);
  assert.equal(kinds[0], "created");
  assert.ok(kinds.includes("cancelled"), kinds.join(","));
  const bad = await sayso.list({ limit: 0 }).catch((e) => e);
  assert.equal(bad.code, "validation_failed");
  assert.equal(bad.details[0].path, "limit");
});

test("events yields each resolution once, and resumes after lastEventId", async () => {
  const first = await sayso.ask({ question: "Event one?" });
  const second = await sayso.ask({ question: "Event two?" });
  const ours = new Set([first.decision_id, second.decision_id]);
  const ctl = new AbortController();
  const seen = [];
  const reading = (async () => {
    for await (const ev of sayso.events({ signal: ctl.signal })) {
      if (!ours.has(ev.decision.decision_id)) continue;
      seen.push(ev);
      if (seen.length === 2) break;
    }
  })();
  await pause(100);
  await person.answer("Event one?", { action: "answer", value: "yes" });
  await person.answer("Event two?", { action: "answer", value: "no" });
  await reading;
  assert.deepEqual(seen.map((e) => e.decision.decision_id), [first.decision_id, second.decision_id]);
  assert.ok(seen.every((e) => e.type === "decision.resolved"));
  assert.deepEqual(seen.map((e) => e.decision.outcome), [true, false]);
  assert.ok(Number(seen[1].id) > Number(seen[0].id));

  // From the first event's id on, the second comes first; then abort ends the loop.
  const resumed = sayso.events({ lastEventId: seen[0].id, signal: ctl.signal });
  const next = await resumed.next();
  assert.equal(next.value.decision.decision_id, second.decision_id);
  assert.equal(next.value.id, seen[1].id);
  setTimeout(() => ctl.abort(), 100);
  const ended = await resumed.next().catch((e) => e);
  assert.equal(ended.name, "AbortError");
});
