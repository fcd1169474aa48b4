// What the Restate tests share: a real restate-server (from npm's @restatedev/restate-server)
// on loopback ports of its own, the workflow of docs/DURABLE.md run as written in a process
// of its own (the worker), and free ports for both.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { packageDir, pause } from "../../tests/support/server.mjs";

export { Server, pause } from "../../tests/support/server.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/** A port nothing listens on now. */
export async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** Polls `check` every 100 ms until it returns something truthy, or throws after `within` ms. */
export async function until(what, check, within = 30_000) {
  const end = Date.now() + within;
  for (;;) {
    const got = await check().catch(() => undefined);
    if (got) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await pause(100);
  }
}

/** The first js block of docs/DURABLE.md's `## Restate` section. */
export async function docBlock() {
  const text = await readFile(resolve(packageDir, "..", "..", "docs", "DURABLE.md"), "utf8");
  const at = text.indexOf("\n## Restate\n");
  if (at < 0) throw new Error("docs/DURABLE.md has no ## Restate section");
  const block = /```js\n([\s\S]*?)```/.exec(text.slice(at));
  if (!block) throw new Error("the ## Restate section has no js block");
  return block[1];
}

/** A restate-server with its data in a folder of its own, kept across restarts. */
export class Restate {
  static async start() {
    const dir = await mkdtemp(join(tmpdir(), "sayso-restate-"));
    const r = new Restate(dir, await freePort(), await freePort(), await freePort());
    await writeFile(join(dir, "restate.toml"), r.#config());
    await r.#spawn();
    return r;
  }

  constructor(dir, ingressPort, adminPort, nodePort) {
    this.dir = dir;
    this.ingress = `http://127.0.0.1:${ingressPort}`;
    this.admin = `http://127.0.0.1:${adminPort}`;
    this.nodePort = nodePort;
    this.child = undefined;
    this.log = "";
  }

  // Retries come quickly, so a workflow resumes within a second of its worker coming back;
  // no telemetry, no web UI, no address but loopback.
  #config() {
    return [
      `node-name = "sayso-test"`,
      `base-dir = "${join(this.dir, "data")}"`,
      `bind-address = "127.0.0.1:${this.nodePort}"`,
      `advertised-address = "http://127.0.0.1:${this.nodePort}/"`,
      `disable-telemetry = true`,
      `log-filter = "warn"`,
      ``,
      `[default-retry-policy]`,
      `initial-interval = "100ms"`,
      `exponentiation-factor = 2.0`,
      `max-attempts = 1000`,
      `on-max-attempts = "pause"`,
      `max-interval = "1s"`,
      ``,
      `[ingress]`,
      `bind-address = "127.0.0.1:${new URL(this.ingress).port}"`,
      ``,
      `[admin]`,
      `bind-address = "127.0.0.1:${new URL(this.admin).port}"`,
      `disable-web-ui = true`,
      ``,
    ].join("\n");
  }

  async #spawn() {
    // The binary the npm package ships for this platform, run directly (not through the
    // package's node wrapper), so that stopping it stops the server itself.
    const bin = resolve(here, "node_modules", "@restatedev", `restate-server-${platform()}-${arch()}`, "bin", "restate-server");
    if (!existsSync(bin)) throw new Error(`${bin} is missing: install this folder's package-lock.json`);
    const child = spawn(bin, ["--config-file", join(this.dir, "restate.toml"), "--no-logo", "--listen-mode", "tcp"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    const keep = (chunk) => {
      this.log = (this.log + chunk).slice(-20_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    await until("restate-server to answer", async () => {
      if (child.exitCode !== null) throw new Error(`restate-server exited (${child.exitCode}): ${this.log}`);
      const [admin, ingress] = await Promise.all([fetch(`${this.admin}/health`), fetch(`${this.ingress}/restate/health`)]);
      return admin.ok && ingress.ok;
    }, 60_000).catch((e) => {
      throw new Error(`${e.message}\n${this.log}`);
    });
  }

  /** Registers (or registers again) the worker at `uri`. */
  async register(uri) {
    const resp = await fetch(`${this.admin}/deployments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uri, force: true }),
    });
    if (!resp.ok) throw new Error(`registering ${uri}: ${resp.status} ${await resp.text()}`);
  }

  /** Starts the workflow `key` without waiting for it. */
  async submit(key, input) {
    const resp = await fetch(`${this.ingress}/migration/${key}/run/send`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(input),
    });
    if (!resp.ok) throw new Error(`starting ${key}: ${resp.status} ${await resp.text()}`);
  }

  /** The workflow's result, waiting for it. */
  async result(key) {
    const resp = await fetch(`${this.ingress}/restate/workflow/migration/${key}/attach`);
    if (!resp.ok) throw new Error(`the result of ${key}: ${resp.status} ${await resp.text()}`);
    return resp.json();
  }

  async stop() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }

  async restart() {
    await this.#spawn();
  }

  async close() {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The docs' workflow, run as written in a `node` process of its own. */
export class Worker {
  /** Writes the docs' block beside this file, where its packages resolve. */
  static async prepare() {
    const file = join(here, ".doc-migration.mjs");
    await writeFile(file, await docBlock());
    return file;
  }

  constructor(file, env) {
    this.file = file;
    this.env = env;
    this.child = undefined;
    this.log = "";
  }

  async start() {
    const child = spawn(process.execPath, [this.file], {
      env: { ...process.env, ...this.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    const keep = (chunk) => {
      this.log = (this.log + chunk).slice(-20_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const port = Number(this.env.PORT);
    await until("the worker to listen", async () => {
      if (child.exitCode !== null) throw new Error(`the worker exited (${child.exitCode}): ${this.log}`);
      return await new Promise((r) => {
        const socket = connect(port, "127.0.0.1", () => {
          socket.destroy();
          r(true);
        }).once("error", () => r(false));
      });
    }, 15_000).catch((e) => {
      throw new Error(`${e.message}\n${this.log}`);
    });
  }

  /** Kills it as a crash would: nothing is finished. */
  async kill() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }
}

/** The lines the gated step wrote to `file`, one per run. */
export async function runs(file) {
  if (!existsSync(file)) return [];
  return (await readFile(file, "utf8")).split("\n").filter(Boolean);
}
