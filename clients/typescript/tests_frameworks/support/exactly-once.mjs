// What every adapter must hold to when the model makes 1, 2 or 3 gated calls in one step: the
// person is asked about all of them at once, as one session the feed groups; each allowed
// call runs exactly once and a denied one never, whether the agent waits in one process or is
// killed between the person's answers and resumed cold from its saved state. The tool counts
// its own runs: a line per run in the count file, the version it deployed.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { test } from "node:test";

import { pause } from "./setup.mjs";

/** The person's answers to a step of `n` calls, in the order of the calls: mixed from 2 on. */
export const answersFor = (n) => ["Allow", "Deny", "Allow"].slice(0, n);

/** How many times each version was deployed. */
export async function runsOf(countFile) {
  const counts = {};
  if (!existsSync(countFile)) return counts;
  for (const v of (await readFile(countFile, "utf8")).split("\n").filter(Boolean)) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}

/**
 * Waits until the run has asked `n` approvals, then checks they are all pending at once, in
 * one session, and that the person's feed offers them together. Returns them.
 */
export async function allAskedAtOnce({ sayso, server, runId, n, sessionId = runId }) {
  let ds = [];
  for (let i = 0; i < 200 && ds.length < n; i++) {
    await pause(50);
    ds = (await sayso.list({ limit: 100 })).items.filter((d) => d.metadata?.run_id === runId);
  }
  assert.equal(ds.length, n, `the run asked about all ${n} calls before any answer`);
  for (const d of ds) {
    assert.equal(d.status, "pending", "every call of the step waits for the person at the same time");
    assert.equal(d.approval.session_id, sessionId, "the calls share the run's session");
  }
  if (n > 1) assert.match(await server.person().feedHtml(), new RegExp(`Answer all ${n} calls`), "the feed groups the step");
  return ds;
}

/**
 * The person answers each version's approval from the feed, as `answers` says. Each page is
 * read first: it offers no "Allow for a while", which no adapter would honour.
 */
export async function personAnswers(server, versions, answers) {
  for (const [i, v] of versions.entries()) {
    const person = server.person();
    const page = await fetch(await person.linkFor(v), { headers: { cookie: person.cookie } });
    const html = await page.text();
    assert.equal(page.status, 200, html);
    assert.match(html, /id="allow"/, "the approval page offers Allow");
    assert.doesNotMatch(html, /name="allow_for"/, "a framework approval offers no Allow for a while");
    await server.person().answer(v, { action: "answer", value: answers[i], ...(answers[i] === "Deny" ? { remark: `not ${v}` } : {}) });
  }
}

/** Asserts each allowed version ran once and each denied one never. */
export async function assertRanOnce(countFile, versions, answers) {
  const counts = await runsOf(countFile);
  const expected = Object.fromEntries(versions.flatMap((v, i) => (answers[i] === "Allow" ? [[v, 1]] : [])));
  assert.deepEqual(counts, expected, "every allowed call ran exactly once, every denied one never");
}

/** Runs the adapter's agent script in a new process; its exit code and what it printed. */
export function startAgent(script, args, server) {
  const env = { ...process.env, SAYSO_URL: server.base, SAYSO_KEY: server.key };
  const child = spawn(process.execPath, [script, ...args], { env, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (b) => (out += b));
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal, out })));
  return { child, exited };
}

/**
 * The suite, for one adapter. `adapter`:
 * - `fresh(name)`: a new run `{ runId, countFile, … }` with its own state;
 * - `run(r, versions)`: the agent, in this process, to its end; the model's last text;
 * - `script`, `args(r, versions)`: the same agent as a script, for a new process;
 * - `saved(r)`: resolves once the run's saved state holds the pause, so a kill keeps it.
 */
export function exactlyOnceSuite({ sayso, server, adapter }) {
  for (const n of [1, 2, 3]) {
    const answers = answersFor(n);

    test(`${n} gated call(s) in one step: all asked at once, each allowed call runs once, a denied one never`, async () => {
      const r = adapter.fresh(`once-${n}`);
      const versions = answers.map((_, i) => `w${n}.${i + 1}`);
      const agent = adapter.run(r, versions);
      await allAskedAtOnce({ sayso: sayso(), server: server(), runId: r.runId, n });
      await personAnswers(server(), versions, answers);
      const text = await agent;
      await assertRanOnce(r.countFile, versions, answers);
      for (const [i, v] of versions.entries()) {
        assert.match(text, answers[i] === "Allow" ? new RegExp(`deployed ${v.replace(".", "\\.")}`) : new RegExp(`not ${v.replace(".", "\\.")}`));
      }
      // Run again from its saved state: the finished run asks nothing and runs nothing.
      await adapter.run(r, versions);
      await assertRanOnce(r.countFile, versions, answers);
      const asked = (await sayso().list({ limit: 100 })).items.filter((d) => d.metadata?.run_id === r.runId);
      assert.equal(asked.length, n, "no call was asked about twice");
    });

    test(`${n} gated call(s) in one step, the agent killed between the person's answers and resumed cold`, async () => {
      const r = adapter.fresh(`cold-${n}`);
      const versions = answers.map((_, i) => `k${n}.${i + 1}`);
      const first = startAgent(adapter.script, adapter.args(r, versions), server());
      await allAskedAtOnce({ sayso: sayso(), server: server(), runId: r.runId, n });
      await adapter.saved(r, versions);
      // The first answer while the agent waits, the others while no agent runs at all.
      await personAnswers(server(), versions.slice(0, 1), answers);
      first.child.kill("SIGKILL");
      assert.equal((await first.exited).signal, "SIGKILL");
      await personAnswers(server(), versions.slice(1), answers.slice(1));

      const second = await startAgent(adapter.script, adapter.args(r, versions), server()).exited;
      assert.equal(second.code, 0, second.out);
      await assertRanOnce(r.countFile, versions, answers);
      const asked = (await sayso().list({ limit: 100 })).items.filter((d) => d.metadata?.run_id === r.runId);
      assert.equal(asked.length, n, "the resumed run asked again");
    });
  }
}
