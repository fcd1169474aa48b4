// The steps every framework adapter's suite shares: the real server, a client of it and a
// scratch folder for the test file's runs; a fresh run's files; the decisions a run asked;
// the person answering from the feed; and the tests every adapter passes (an allowed call,
// the three ways an approval ends unanswered, the exactly-once suite). Each suite supplies
// its framework's run.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { sayso, server, useServer as useTheServer } from "../../tests/support/server.mjs";
import { exactlyOnceSuite } from "./exactly-once.mjs";
import { packageDir, pause, runs, scratch } from "./setup.mjs";

export { sayso, server } from "../../tests/support/server.mjs";

/** The scratch folder of the file's runs, once `useServer` made it. */
export let tmp;

/** Starts the server, its client and the scratch folder before the file's tests; removes them after. */
export function useServer() {
  useTheServer();
  before(async () => {
    tmp = await scratch();
  });
  after(() => tmp?.remove());
}

/** A fresh run: its id, its count file, and its state files (`files`: name → extension). */
export function freshRun(name, files = { stateFile: "json" }) {
  const state = Object.fromEntries(Object.entries(files).map(([key, ext]) => [key, tmp.file(`${name}.${ext}`)]));
  return { runId: `${name}-${Date.now()}`, ...state, countFile: tmp.file(`${name}.count`) };
}

/** The decisions the run `runId` asked, newest first. */
export async function decisionsOf(runId) {
  const page = await sayso.list({ limit: 100 });
  return page.items.filter((d) => d.metadata?.run_id === runId);
}

/** The person answers the approval of `runId` (of v2.3) from the feed, once it is there. */
export async function personAnswers(runId, value, remark) {
  for (let i = 0; i < 100 && (await decisionsOf(runId)).length === 0; i++) await pause(50);
  return server.person().answer("v2.3", { action: "answer", value, ...(remark ? { remark } : {}) });
}

/**
 * The tests every adapter's suite runs, for the adapter `harness` whose agent `run(r,
 * settings)` runs run `r` (made by `fresh`) to its end and returns what the model said last:
 * an allowed call runs once, and (when `again`) the finished run, run again, asks and runs
 * nothing; the approval unanswered (`unansweredSuite`: `says`, `as`); the exactly-once suite
 * through the agent script `script` of support/ with `args` (exactly-once.mjs: `saved`).
 */
export function adapterSuite({ harness, fresh = freshRun, run, again, says, as, script, args, saved }) {
  test("an allowed call runs once, and the approval shows the person what runs", async () => {
    const r = fresh("allow");
    const [out] = await Promise.all([run(r, {}), personAnswers(r.runId, "Allow")]);
    assert.equal(await runs(r.countFile), 1);
    assert.match(out, /deployed v2\.3/);
    const [d] = await decisionsOf(r.runId);
    assert.equal(d.approval.harness, harness);
    assert.equal(d.approval.tool_name, "deploy");
    const page = await (await fetch(d.web_url)).text();
    assert.match(page, /deploy/);
    assert.match(page, /v2\.3/);
    if (!again) return;
    // The finished run, run again, asks nothing and runs nothing.
    await run(r, {});
    assert.equal(await runs(r.countFile), 1);
    assert.equal((await decisionsOf(r.runId)).length, 1);
  });
  unansweredSuite({ fresh, run, says, as });
  exactlyOnceSuite({
    sayso: () => sayso,
    server: () => server,
    adapter: {
      fresh,
      run: (r, versions) => run(r, { versions }),
      script: join(packageDir, "tests_frameworks", "support", script),
      args,
      saved,
    },
  });
}

/**
 * The tests of an approval that ends with no answer: the agent's wait times out, the approval
 * expires, the inbox cancels it. `run(r, settings)` runs the agent of run `r` to its end and
 * returns what the model said last; `says` holds, for each ending, what that must match; `as`
 * is the adapter's word for what the model reads (a denial, a rejection).
 */
export function unansweredSuite({ fresh = freshRun, run, says, as }) {
  test(`a wait that times out reaches the model as a ${as}, and the approval is withdrawn`, async () => {
    const r = fresh("timeout");
    await ranNothingAndSaid(r, await run(r, { timeout: 500 }), says.timeout);
    const [d] = await decisionsOf(r.runId);
    assert.equal(d.status, "cancelled");
  });

  test(`an approval that expires unanswered reaches the model as a ${as}`, async () => {
    const r = fresh("expiry");
    await ranNothingAndSaid(r, await run(r, { ttlSeconds: 10 }), [/the approval expired with no answer/]);
    const [d] = await decisionsOf(r.runId);
    assert.equal(d.status, "expired");
  });

  test(`a cancelled approval reaches the model as a ${as}, never as an answer`, async () => {
    const r = fresh("cancel");
    const agent = run(r, {});
    let ds = [];
    while (ds.length === 0) {
      await pause(50);
      ds = await decisionsOf(r.runId);
    }
    await sayso.cancel(ds[0].decision_id, { reason: "the release was pulled" });
    await ranNothingAndSaid(r, await agent, says.cancel);
  });
}

async function ranNothingAndSaid(r, out, patterns) {
  assert.equal(await runs(r.countFile), 0);
  for (const p of patterns) assert.match(out, p);
}
