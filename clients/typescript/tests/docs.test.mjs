// The lines docs/CLIENTS.md's TypeScript section gives to copy run as written against the real server,
// installed as a user installs the package, with the person answering from the feed.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { Server, packageDir } from "./support/server.mjs";

const run = promisify(execFile);
let server;
let dir;

/** The first js block of docs/CLIENTS.md's TypeScript section. */
async function docExample() {
  const docs = resolve(packageDir, "..", "..", "docs");
  let text = await readFile(join(docs, "CLIENTS.md"), "utf8");
  const section = text.indexOf("## TypeScript");
  assert.ok(section >= 0, "the docs have a ## TypeScript section");
  text = text.slice(section);
  const block = /```js\n([\s\S]*?)```/.exec(text);
  assert.ok(block, "the TypeScript section has a js block");
  return block[1];
}

before(async () => {
  server = await Server.start();
  dir = await mkdtemp(join(tmpdir(), "sayso-doc-"));
  await mkdir(join(dir, "node_modules"));
  await symlink(packageDir, join(dir, "node_modules", "sayso"), "dir");
  await writeFile(join(dir, "example.mjs"), await docExample());
});
after(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function runExample(answer) {
  const example = run(process.execPath, [join(dir, "example.mjs")], {
    cwd: dir,
    env: { ...process.env, SAYSO_URL: server.base, SAYSO_KEY: server.key },
    timeout: 20_000,
  });
  await server.person().answer("Deploy v2.3 to production?", answer);
  return (await example).stdout;
}

test("the documented example deploys on a yes", async () => {
  assert.equal(await runExample({ action: "answer", value: "yes" }), "deploying\n");
});

test("the documented example says why not on a no", async () => {
  const out = await runExample({ action: "answer", value: "no", remark: "freeze until Monday" });
  assert.match(out, /^not deploying: .*"no".*freeze until Monday/);
});
