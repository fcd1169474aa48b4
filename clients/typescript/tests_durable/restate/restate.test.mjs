// Restate workflows that wait on sayso (docs/DURABLE.md, "Restate"): the docs' workflow, run
// as written against a real restate-server and a real `sayso serve`, with the person answering
// through the feed. Each case counts the gated step's runs from the file it writes.

import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Sayso } from "sayso";

import { Restate, Server, Worker, freePort, runs, until } from "./support.mjs";

let sayso;
let restate;
let worker;
let file;
let client;

before(async () => {
  // The ingress is on loopback: sayso may call it only when private addresses are allowed.
  sayso = await Server.start({ SAYSO_ALLOW_PRIVATE_WEBHOOKS: "1", SAYSO_OUTBOX_RETRY_BASE_MS: "200" });
  restate = await Restate.start();
  file = await Worker.prepare();
  const port = await freePort();
  worker = new Worker(file, {
    PORT: String(port),
    SAYSO_URL: sayso.base,
    SAYSO_KEY: sayso.key,
    RESTATE_INGRESS: restate.ingress,
    MIGRATIONS_LOG: join(sayso.dir, "migrations.log"),
  });
  await worker.start();
  await restate.register(`http://127.0.0.1:${port}`);
  client = new Sayso({ url: sayso.base, key: sayso.key });
});

after(async () => {
  await worker?.kill();
  await restate?.close();
  await sayso?.close();
  if (file) await rm(file, { force: true });
});

/** Starts workflow `key` (its version too), and waits until the person can see it. */
async function start(key, input = {}) {
  await restate.submit(key, { version: key, ...input });
  await sayso.person().linkFor(`Run the ${key} migration on production?`, { within: 20_000 });
}

/** How many times the workflow `key` ran its step: its lines in the step's log. */
async function ran(key) {
  return (await runs(worker.env.MIGRATIONS_LOG)).filter((line) => line === `migrated to ${key}`).length;
}

/** The one decision the workflow `key` asked. */
async function decisionOf(key) {
  const page = await client.list({ limit: 200 });
  const mine = page.items.filter((d) => d.question === `Run the ${key} migration on production?`);
  assert.equal(mine.length, 1, `one question for ${key}: ${JSON.stringify(mine)}`);
  return mine[0];
}

test("an allow resumes the workflow and its step runs once", async () => {
  await start("v1");
  await sayso.person().answer("Run the v1 migration on production?", { action: "answer", value: "yes" });
  const result = await restate.result("v1");
  assert.equal(result.migrated, true, JSON.stringify(result));
  assert.match(result.reason, /with "yes"/);
  assert.equal(await ran("v1"), 1);
  const d = await until("the completion to be sent", async () => {
    const d = await client.get((await decisionOf("v1")).decision_id);
    return d.notifications.find((n) => n.channel === "completion")?.status === "sent" && d;
  });
  assert.equal(d.status, "answered");
});

test("a denial with a reason reaches the workflow and the step never runs", async () => {
  await start("v2");
  await sayso.person().answer("Run the v2 migration on production?", {
    action: "answer",
    value: "no",
    remark: "not during the sale",
  });
  const result = await restate.result("v2");
  assert.equal(result.migrated, false);
  assert.match(result.reason, /with "no"\. Remark: "not during the sale"/);
  assert.equal(await ran("v2"), 0);
});

test("an expiry reaches the workflow as a denial that says so, never an allow", async () => {
  await start("v3", { ttlSeconds: 10 });
  const result = await restate.result("v3");
  assert.equal(result.migrated, false);
  assert.match(result.reason, /^Nobody answered .* before it expired/);
  assert.equal(await ran("v3"), 0);
  assert.equal((await decisionOf("v3")).status, "expired");
});

test("the worker, sayso and Restate all down mid-wait: the answer given meanwhile finishes the workflow once", async () => {
  await start("v4");
  // The worker crashes, and sayso stops.
  await worker.kill();
  await sayso.stop();
  await sayso.restart();
  // Restate's ingress is down when the person answers: the completion waits in sayso's
  // outbox, retried until Restate is back.
  await restate.stop();
  await sayso.person().answer("Run the v4 migration on production?", { action: "answer", value: "yes" });
  const retried = await until("the completion to be retried", async () => {
    const d = await client.get((await decisionOf("v4")).decision_id);
    const completion = d.notifications.find((n) => n.channel === "completion");
    return completion?.status === "pending" && completion.detail && completion;
  });
  assert.match(retried.detail, /completion\.url/);
  await restate.restart();
  await until("the completion to be sent", async () => {
    const d = await client.get((await decisionOf("v4")).decision_id);
    return d.notifications.find((n) => n.channel === "completion")?.status === "sent";
  });
  // Only now does the worker come back; Restate replays the workflow up to the awakeable.
  await worker.start();
  const result = await restate.result("v4");
  assert.equal(result.migrated, true, JSON.stringify(result));
  assert.equal(await ran("v4"), 1);
  // The replayed ask found the same question: one decision for the workflow.
  await decisionOf("v4");
});
