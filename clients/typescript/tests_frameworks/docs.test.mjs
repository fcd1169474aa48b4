// The programs docs/CLIENTS.md gives for each framework run as written, each in a process of
// its own against the real server, with the scripted model the block itself defines; the
// person allows one call of the step and denies the other, from the feed.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { personAnswers, runsOf } from "./support/exactly-once.mjs";
import { Server, packageDir, scratch } from "./support/setup.mjs";

const run = promisify(execFile);
let server;
let tmp;
before(async () => {
  server = await Server.start();
  tmp = await scratch();
});
after(async () => {
  await server?.close();
  await tmp?.remove();
});

/** The js blocks of the section under `heading` in docs/CLIENTS.md. */
async function docBlocks(heading) {
  const text = await readFile(resolve(packageDir, "..", "..", "docs", "CLIENTS.md"), "utf8");
  const at = text.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `docs/CLIENTS.md has a ${heading} section`);
  const end = text.indexOf("\n## ", at + heading.length + 1);
  const section = text.slice(at, end < 0 ? undefined : end);
  return [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/**
 * Runs the section's one program (written inside the package, so `sayso/…` and the framework
 * resolve as in a user's project; its working directory a scratch one) while the person
 * answers; what it printed, and what its tool deployed.
 */
async function runDoc(heading, name) {
  const blocks = await docBlocks(heading);
  assert.equal(blocks.length, 1, `the ${heading} section has one program, and this test runs it`);
  const file = join(packageDir, "tests_frameworks", `.doc-${name}.mjs`);
  await writeFile(file, blocks[0]);
  const cwd = tmp.file(name);
  await (await import("node:fs/promises")).mkdir(cwd);
  try {
    const program = run(process.execPath, [file], {
      cwd,
      env: { ...process.env, SAYSO_URL: server.base, SAYSO_KEY: server.key },
      timeout: 30_000,
    });
    await personAnswers(server, ["v2.3", "v2.4"], ["Allow", "Deny"]);
    const { stdout } = await program;
    return { stdout, deployed: await runsOf(join(cwd, "deploys.log")) };
  } finally {
    await rm(file, { force: true });
  }
}

for (const [heading, name] of [
  ["## Vercel AI SDK", "ai"],
  ["## OpenAI Agents SDK (TypeScript)", "openai-agents"],
  ["## LangGraph (TypeScript)", "langgraph"],
]) {
  test(`the ${heading.slice(3)} program runs the allowed call once, and tells the model the reason of the denied one`, async () => {
    const { stdout, deployed } = await runDoc(heading, name);
    assert.deepEqual(deployed, { "v2.3": 1 });
    assert.match(stdout, /deployed v2\.3/);
    assert.match(stdout, /not v2\.4/);
  });
}
