// The lines docs/CLIENTS.md's TypeScript section gives to copy run as written against the real server,
// installed as a user installs the package, with the person answering from the feed.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

import { Sayso } from "sayso";

import { Server, packageDir, pause } from "./support/server.mjs";

const run = promisify(execFile);
let server;
let dir;

/** The js blocks of docs/CLIENTS.md's TypeScript section: the example, events, webhooks. */
async function docBlocks() {
  const docs = resolve(packageDir, "..", "..", "docs");
  let text = await readFile(join(docs, "CLIENTS.md"), "utf8");
  const section = text.indexOf("## TypeScript");
  assert.ok(section >= 0, "the docs have a ## TypeScript section");
  text = text.slice(section, text.indexOf("\n## ", section + 1));
  const blocks = [...text.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.equal(blocks.length, 3, "the TypeScript section has three js blocks, and these tests run each");
  return blocks;
}

before(async () => {
  server = await Server.start({ SAYSO_ALLOW_PRIVATE_WEBHOOKS: "1" });
  dir = await mkdtemp(join(tmpdir(), "sayso-doc-"));
  await mkdir(join(dir, "node_modules"));
  await symlink(packageDir, join(dir, "node_modules", "sayso"), "dir");
  const [example, events, webhook] = await docBlocks();
  await writeFile(join(dir, "example.mjs"), example);
  await writeFile(join(dir, "events.mjs"), events);
  await writeFile(join(dir, "webhook.mjs"), webhook);
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

test("the documented event loop prints each resolution as it happens, and ends on Ctrl-C", async () => {
  const loop = spawn(process.execPath, [join(dir, "events.mjs")], {
    cwd: dir,
    env: { ...process.env, SAYSO_URL: server.base, SAYSO_KEY: server.key },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  loop.stdout.on("data", (b) => (out += b));
  const exited = new Promise((r) => loop.once("exit", (code) => r(code)));
  const sayso = new Sayso({ url: server.base, key: server.key });
  await sayso.ask({ question: "Rotate the staging keys?" });
  await server.person().answer("Rotate the staging keys?", { action: "answer", value: "yes" });
  for (let i = 0; i < 100 && !out.includes("Rotate the staging keys?"); i++) await pause(50);
  assert.match(out, /Rotate the staging keys\? → answered true/);
  loop.kill("SIGINT");
  assert.equal(await exited, 0);
});

test("the documented webhook handler verifies what the server sends and refuses a changed body", async () => {
  const { default: handler } = await import(pathToFileURL(join(dir, "webhook.mjs")).href);
  const env = { SAYSO_WEBHOOK_SECRET: server.webhookSecret };
  let delivered;
  const arrived = new Promise((r) => (delivered = r));
  const receiver = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      res.writeHead(204).end();
      delivered({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
    });
  });
  await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
  try {
    const sayso = new Sayso({ url: server.base, key: server.key });
    const { port } = receiver.address();
    const handle = await sayso.ask({ question: "Ship the hotfix?", callback_url: `http://127.0.0.1:${port}/hook` });
    await server.person().answer("Ship the hotfix?", { action: "answer", value: "yes" });
    const { headers, body } = await arrived;
    const request = (text) => new Request("http://worker.example/hook", { method: "POST", headers: new Headers(Object.entries(headers).filter(([, v]) => typeof v === "string")), body: text });
    const logged = [];
    const log = console.log;
    console.log = (...args) => logged.push(args.join(" "));
    try {
      const resp = await handler.fetch(request(body), env);
      assert.equal(resp.status, 204);
      await assert.rejects(handler.fetch(request(body.replace("true", "false")), env), /signature/);
    } finally {
      console.log = log;
    }
    assert.deepEqual(logged, [`${handle.decision_id} answered true`]);
  } finally {
    await new Promise((r) => receiver.close(r));
  }
});
