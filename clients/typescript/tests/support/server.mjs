// The real `sayso serve` for the tests: a fresh SQLite database and state directory in a
// temporary folder, on a port of its own; and the person, who answers through the feed
// link and the pages' own POST endpoints, never with the agent's key.

import { spawn } from "node:child_process";
import { mkdtemp, mkdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";

import { Sayso } from "sayso";

const here = dirname(fileURLToPath(import.meta.url));
/** The package's folder. */
export const packageDir = resolve(here, "..", "..");

/** `SAYSO_BIN` (set by tests/client_typescript.rs), else the debug build of this checkout. */
export function saysoBin() {
  return process.env.SAYSO_BIN ?? resolve(packageDir, "..", "..", "target", "debug", "sayso");
}

/** The server of a test file and its client (the default inbox's key), once `useServer` started them. */
export let server;
export let sayso;

/** Starts the server and its client before the file's tests; stops the server after. */
export function useServer() {
  before(async () => {
    server = await Server.start();
    sayso = new Sayso({ url: server.base, key: server.key });
  });
  after(() => server?.close());
}

export class Server {
  /** Starts sayso on a fresh database; `env` is added to the process's environment. */
  static async start(env = {}) {
    const dir = await mkdtemp(join(tmpdir(), "sayso-ts-"));
    await mkdir(join(dir, "state"));
    const server = new Server(dir, env);
    await server.#spawn(0);
    const text = await readFile(join(dir, "state", "first-run.txt"), "utf8");
    const word = (label) => text.split("\n").find((l) => l.includes(label))?.trim().split(/\s+/).pop();
    server.key = word("API key");
    server.feed = word("Feed link");
    server.webhookSecret = word("Webhook signing secret");
    return server;
  }

  constructor(dir, env) {
    this.dir = dir;
    this.env = env;
    this.child = undefined;
    this.base = undefined;
    this.port = undefined;
  }

  async #spawn(port) {
    const inherited = { ...process.env };
    // The settings a developer's shell may hold would point the server elsewhere.
    for (const name of Object.keys(inherited)) if (name.startsWith("SAYSO_")) delete inherited[name];
    const child = spawn(saysoBin(), ["serve"], {
      env: {
        ...inherited,
        SAYSO_DATABASE_URL: `sqlite://${join(this.dir, "sayso.db")}?mode=rwc`,
        SAYSO_STATE_DIR: join(this.dir, "state"),
        SAYSO_LISTEN: `127.0.0.1:${port}`,
        SAYSO_LOG_FORMAT: "json",
        SAYSO_LOG: "info,sayso::notify=warn",
        SAYSO_RATE_LIMIT_PER_S: "0",
        ...this.env,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.child = child;
    const lines = createInterface({ input: child.stderr });
    this.base = await new Promise((resolveBase, reject) => {
      const timer = setTimeout(() => reject(new Error("sayso did not listen within 30 s")), 30_000);
      child.once("exit", (code) => reject(new Error(`sayso exited (${code}) before listening`)));
      child.once("error", reject);
      lines.on("line", (line) => {
        let v;
        try {
          v = JSON.parse(line);
        } catch {
          return;
        }
        if (v.fields?.message === "sayso is listening") {
          clearTimeout(timer);
          resolveBase(`http://${v.fields.address}`);
        } else if (v.level === "ERROR") {
          process.stderr.write(`sayso: ${line}\n`);
        }
      });
    });
    this.port = Number(new URL(this.base).port);
  }

  /** Ends the process: SIGTERM lets it answer parked awaits first, SIGKILL does not. */
  async stop(signal = "SIGTERM") {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill(signal);
    await exited;
  }

  /** Starts it again on the same port and database. */
  async restart() {
    await this.#spawn(this.port);
  }

  async close() {
    await this.stop("SIGKILL");
    await rm(this.dir, { recursive: true, force: true });
  }

  /** The person whose feed link the first run made. */
  person() {
    return new Person(this);
  }
}

/** The person, with a browser's cookie jar of one device. */
export class Person {
  constructor(server) {
    this.server = server;
    this.cookie = undefined;
  }

  /** The feed page, as a browser opens the feed link: its 303 binds the device, then /inbox. */
  async feedHtml() {
    const opened = await fetch(this.server.feed, { redirect: "manual" });
    if (opened.status !== 303) throw new Error(`the feed link answered ${opened.status}`);
    this.cookie = opened.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const page = await fetch(new URL(opened.headers.get("location"), this.server.base), {
      headers: { cookie: this.cookie },
    });
    if (page.status !== 200) throw new Error(`/inbox answered ${page.status}`);
    return page.text();
  }

  /** The answer link the feed shows beside `text` (a question, or what an approval runs). */
  async linkFor(text, { within = 5000 } = {}) {
    const until = Date.now() + within;
    for (;;) {
      const html = await this.feedHtml();
      // Open work only: questions (`<li class="item">`) and to-dos (`<li class="todo">`).
      for (const item of html.split(/<li class="(?:item|todo)">/).slice(1)) {
        const href = /(?:href|action)="(\/[ad]\/[^"]+)"/.exec(item.split("</li>")[0])?.[1];
        if (href && item.split("</li>")[0].includes(escapeHtml(text))) return new URL(href, this.server.base).href;
      }
      if (Date.now() > until) throw new Error(`the feed shows nothing for ${JSON.stringify(text)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Answers from the feed as the page's own script does: a JSON POST to the item's link. */
  async answer(text, body) {
    const link = await this.linkFor(text);
    const resp = await this.post(link, body);
    if (resp.status !== 200) throw new Error(`answering ${JSON.stringify(text)}: ${resp.status} ${await resp.text()}`);
    return resp.json();
  }

  /** Submits an item's form as the browser does (a to-do's Done); the 303 the page answers. */
  async submitForm(text, fields) {
    const link = await this.linkFor(text);
    const resp = await fetch(link, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "sec-fetch-site": "same-origin",
        cookie: this.cookie,
      },
      body: new URLSearchParams(fields).toString(),
    });
    if (resp.status !== 303) throw new Error(`submitting ${JSON.stringify(text)}: ${resp.status}`);
    return resp.headers.get("location");
  }

  post(link, body) {
    return fetch(link, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "sec-fetch-site": "same-origin",
        ...(this.cookie ? { cookie: this.cookie } : {}),
      },
      body: JSON.stringify(body),
    });
  }
}

function escapeHtml(s) {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}

/** Resolves after `ms`. */
export const pause = (ms) => new Promise((r) => setTimeout(r, ms));
