// The Mastra block docs/DURABLE.md gives to copy runs as written, as a program of its own,
// against the real server: the person allows one run and denies another, and a finished run
// started again prints its result without asking.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";

import { Sayso } from "sayso";

import { Server, packageDir, pause, runs, scratch } from "../../tests_frameworks/support/setup.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// Inside the suite's folder, so that the block's imports resolve to the pinned packages.
const program = join(here, ".doc-mastra.mjs");

let server;
let tmp;
before(async () => {
  server = await Server.start();
  tmp = await scratch();
  const text = await readFile(resolve(packageDir, "..", "..", "docs", "DURABLE.md"), "utf8");
  const at = text.indexOf("\n## Mastra\n");
  assert.ok(at >= 0, "docs/DURABLE.md has a Mastra section");
  const block = /```js\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(block, "the Mastra section has a js block");
  await writeFile(program, block[1]);
});
after(async () => {
  await server?.close();
  await tmp?.remove();
  await rm(program, { force: true });
});

/** The person answers the block's approval once it has asked (one block runs at a time). */
async function personAnswers(version, body) {
  const sayso = new Sayso({ url: server.base, key: server.key });
  for (let i = 0; i < 600 && (await sayso.list({ status: "pending" })).items.length === 0; i++) await pause(100);
  return server.person().answer(version, { action: "answer", ...body });
}

/** Runs the block with `args` in the scratch folder; resolves with what it printed. */
function runBlock(args) {
  const child = spawn(process.execPath, [program, ...args], {
    cwd: tmp.dir,
    env: { ...process.env, SAYSO_URL: server.base, SAYSO_KEY: server.key, MASTRA_TELEMETRY_DISABLED: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (err += b));
  return new Promise((resolveRun, reject) =>
    child.once("exit", (code) => (code === 0 ? resolveRun(out) : reject(new Error(`the block exited ${code}:\n${out}\n${err}`)))),
  );
}

test("the Mastra block deploys on Allow, reports the reason on Deny, and a finished run asks nothing", async () => {
  const log = join(tmp.dir, "deploys.log");
  const allowed = runBlock(["doc-allow", "v3.1"]);
  await personAnswers("v3.1", { value: "Allow" });
  assert.match(await allowed, /^success \{"deployed":true,"reason":"sayso: the person allowed deploy"\}$/m);
  assert.equal(await runs(log), 1);

  const denied = runBlock(["doc-deny", "v3.2"]);
  await personAnswers("v3.2", { value: "Deny", remark: "not on a Friday" });
  assert.match(await denied, /^success .*"deployed":false.*the person denied it: not on a Friday/m);
  assert.equal(await runs(log), 1);

  assert.match(await runBlock(["doc-allow", "v3.1"]), /^success \{"deployed":true/m);
  assert.equal(await runs(log), 1, "the finished run deployed again");
});
