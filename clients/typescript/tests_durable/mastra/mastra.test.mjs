// Mastra (`@mastra/core` with `@mastra/libsql`, pinned in package.json) with sayso/mastra: a
// workflow step asks the real server for an approval and suspends; a worker process resumes
// it with `resumeWhenAnswered` once the person answers through the pages. Each run keeps its
// snapshot in a LibSQL file, so a worker killed mid-wait is replaced by a new one that resumes
// the run from storage. The gated tool counts its runs in a file.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { decisionsOf as asked, freshRun as fresh, sayso, server, useServer } from "../../tests_frameworks/support/scenario.mjs";
import { packageDir, runs } from "../../tests_frameworks/support/setup.mjs";
import { releaseWorkflow } from "./support/release.mjs";

const here = dirname(fileURLToPath(import.meta.url));

useServer();

const freshRun = (name) => fresh(name, { db: "db" });

/** The approvals asked for the run `runId` of the release workflow. */
const decisionsOf = (runId) => asked(`release:${runId}`);

/** A worker process (support/worker.mjs) for run `r`: its lines, and its end. */
function startWorker(r, { ttlSeconds, version } = {}) {
  const child = spawn(process.execPath, [join(here, "support", "worker.mjs")], {
    cwd: here,
    env: {
      ...process.env,
      SAYSO_URL: server.base,
      SAYSO_KEY: server.key,
      MASTRA_DB: r.db,
      COUNT_FILE: r.countFile,
      RUN_ID: r.runId,
      MASTRA_TELEMETRY_DISABLED: "1",
      ...(ttlSeconds ? { TTL_SECONDS: String(ttlSeconds) } : {}),
      ...(version ? { VERSION: version } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (b) => (stderr += b));
  const lines = [];
  const waiters = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  /** The first line starting with `prefix` (its rest), waiting for it while the worker runs. */
  const line = async (prefix) => {
    for (;;) {
      const found = lines.find((l) => l.startsWith(`${prefix} `));
      if (found) return found.slice(prefix.length + 1);
      const ended = await Promise.race([exited.then(() => true), new Promise((r) => waiters.push(() => r(false)))]);
      if (ended && !lines.some((l) => l.startsWith(`${prefix} `))) {
        throw new Error(`the worker ended without "${prefix}": ${JSON.stringify(lines)}\n${stderr}`);
      }
    }
  };
  return {
    suspended: () => line("suspended"),
    result: async () => JSON.parse(await line("result")),
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** The person answers the run's approval (shown by the version it deploys). */
async function personAnswers(value, remark, version = "v2.3") {
  return server.person().answer(version, { action: "answer", value, ...(remark ? { remark } : {}) });
}

test("an allowed step runs the tool once, and the approval shows the person what runs", async () => {
  const r = freshRun("allow");
  const worker = startWorker(r);
  const decisionId = await worker.suspended();
  assert.equal(await runs(r.countFile), 0, "the tool ran before the person answered");
  await personAnswers("Allow");
  const { status, result } = await worker.result();
  assert.equal(status, "success");
  assert.equal(result.deployed, true);
  assert.match(result.reason, /the person allowed deploy/);
  assert.equal(await runs(r.countFile), 1);
  assert.deepEqual((await decisionsOf(r.runId)).map((d) => d.decision_id), [decisionId]);
  const d = await sayso.get(decisionId);
  assert.equal(d.approval.harness, "mastra");
  assert.equal(d.approval.tool_name, "deploy");
  const page = await (await fetch(d.web_url)).text();
  assert.match(page, /deploy/);
  assert.match(page, /v2\.3/);
  // The finished run, met by a new worker, asks nothing and runs nothing.
  const again = startWorker(r);
  assert.equal((await again.result()).status, "success");
  assert.equal(await runs(r.countFile), 1);
  assert.equal((await decisionsOf(r.runId)).length, 1);
});

test("a denial's reason reaches the step, and the tool does not run", async () => {
  const r = freshRun("deny");
  const worker = startWorker(r, { version: "v2.4" });
  await worker.suspended();
  await personAnswers("Deny", "freeze until Monday", "v2.4");
  const { status, result } = await worker.result();
  assert.equal(status, "success");
  assert.equal(result.deployed, false);
  assert.match(result.reason, /the person denied it: freeze until Monday/);
  assert.equal(await runs(r.countFile), 0);
});

test("an approval that expires unanswered reaches the step as a denial, never an allow", async () => {
  const r = freshRun("expiry");
  const worker = startWorker(r, { ttlSeconds: 10, version: "v2.5" });
  await worker.suspended();
  const { status, result } = await worker.result();
  assert.equal(status, "success");
  assert.equal(result.deployed, false);
  assert.match(result.reason, /the approval expired with no answer/);
  assert.equal(await runs(r.countFile), 0);
  const [d] = await decisionsOf(r.runId);
  assert.equal(d.status, "expired");
});

test("the worker and sayso restarted mid-wait, the answer given while both were down: the run resumes cold and the tool runs once", async () => {
  const r = freshRun("restart");
  const first = startWorker(r, { version: "v2.6" });
  const decisionId = await first.suspended();
  await first.kill();
  await server.stop();
  await server.restart();
  await personAnswers("Allow", undefined, "v2.6");
  assert.equal(await runs(r.countFile), 0, "the tool ran with no worker up");
  const second = startWorker(r, { version: "v2.6" });
  assert.equal(await second.suspended(), decisionId, "the new worker found the run suspended in storage");
  const { status, result } = await second.result();
  assert.equal(status, "success");
  assert.equal(result.deployed, true);
  assert.equal(await runs(r.countFile), 1);
  assert.deepEqual(
    (await decisionsOf(r.runId)).map((d) => d.decision_id),
    [decisionId],
    "the resumed step asked again instead of finding its question",
  );
});

test("a worker waiting through a sayso restart resumes the run with the answer given after it", async () => {
  const r = freshRun("sayso-restart");
  const worker = startWorker(r, { version: "v2.9" });
  await worker.suspended();
  await server.stop();
  await server.restart();
  await personAnswers("Allow", undefined, "v2.9");
  const { result } = await worker.result();
  assert.equal(result.deployed, true);
  assert.equal(await runs(r.countFile), 1);
});

test("a resume whose data claims an approval the person never gave runs nothing, and the run stays suspended", async (t) => {
  const r = freshRun("forged");
  const workflow = releaseWorkflow({ sayso, db: r.db, countFile: r.countFile });
  t.after(async () => {
    for (const d of await decisionsOf(r.runId)) if (d.status === "pending") await sayso.cancel(d.decision_id);
  });
  const started = await (await workflow.createRun({ runId: r.runId })).start({ inputData: { version: "v2.7" } });
  assert.equal(started.status, "suspended");
  const { decision_id } = started.steps.release.suspendPayload;
  const forged = await (await workflow.createRun({ runId: r.runId })).resume({
    step: "release",
    resumeData: { approved: true, decision_id, outcome: "Allow" },
  });
  assert.equal(forged.status, "suspended", "a forged resume ended the wait");
  assert.equal(await runs(r.countFile), 0);
  assert.equal((await sayso.get(decision_id)).status, "pending");
});

test("a cancelled approval reaches the step as a denial", async () => {
  const r = freshRun("cancel");
  const worker = startWorker(r, { version: "v2.8" });
  const decisionId = await worker.suspended();
  await sayso.cancel(decisionId, { reason: "the release was pulled" });
  const { result } = await worker.result();
  assert.equal(result.deployed, false);
  assert.match(result.reason, /the approval was cancelled/);
  assert.equal(await runs(r.countFile), 0);
});

test("sayso/mastra imports nothing but the package's own modules", async () => {
  const js = await readFile(join(packageDir, "dist", "mastra.js"), "utf8");
  const imports = [...js.matchAll(/^(?:import|export)\b[^;\n]*?from\s+"([^"]+)";$/gm)].map((m) => m[1]);
  assert.ok(imports.length > 0);
  for (const spec of imports) assert.match(spec, /^\.\//, `dist/mastra.js imports ${spec}`);
  assert.doesNotMatch(js, /\bimport\(/);
});
