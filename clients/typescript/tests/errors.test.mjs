// Each way of getting it wrong is a SaysoError naming what is wrong: the key, the URL (no
// server there, another program, a trailing /v1, a path the server does not serve), a field.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { Sayso, SaysoError } from "sayso";
import { sayso, server, useServer } from "./support/server.mjs";

useServer();

/** The SaysoError `promise` rejects with (fails the test when it resolves or throws another). */
async function refusal(promise) {
  const e = await promise.then(
    (v) => assert.fail(`expected a SaysoError, got ${JSON.stringify(v)}`),
    (e) => e,
  );
  assert.ok(e instanceof SaysoError, `not a SaysoError: ${e?.stack ?? e}`);
  return e;
}

/** A port nothing listens on. */
async function closedPort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

test("a wrong key is 401 unauthorized, naming the key and the server", async () => {
  const wrong = new Sayso({ url: server.base, key: "sk_not-a-key-of-this-server" });
  const e = await refusal(wrong.ask({ question: "Let me in?" }));
  assert.equal(e.status, 401);
  assert.equal(e.code, "unauthorized");
  assert.match(e.message, /API key/);
  assert.ok(e.message.includes(server.base), e.message);
});

test("no key and no URL are refused before anything is sent, naming the settings", () => {
  const saved = { url: process.env.SAYSO_URL, key: process.env.SAYSO_KEY };
  delete process.env.SAYSO_URL;
  delete process.env.SAYSO_KEY;
  try {
    assert.throws(() => new Sayso({ url: server.base }), (e) => e instanceof SaysoError && e.code === "invalid_argument" && /SAYSO_KEY/.test(e.message));
    assert.throws(() => new Sayso({ key: server.key }), (e) => e.code === "invalid_argument" && /SAYSO_URL/.test(e.message));
    assert.throws(() => new Sayso({ url: "ftp://example.com", key: server.key }), /http:\/\/ or https:\/\//);
    assert.throws(() => new Sayso({ url: "not a url", key: server.key }), /is not a URL/);
    // The environment is read when nothing is passed.
    process.env.SAYSO_URL = server.base + "/";
    process.env.SAYSO_KEY = server.key;
    assert.equal(new Sayso().url, server.base);
  } finally {
    for (const [name, value] of [["SAYSO_URL", saved.url], ["SAYSO_KEY", saved.key]]) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

test("a URL ending in /v1 is refused, saying which address to give", () => {
  assert.throws(
    () => new Sayso({ url: `${server.base}/v1/`, key: server.key }),
    (e) => e instanceof SaysoError && e.code === "invalid_argument" && e.message.includes(`(${server.base})`) && /ends in \/v1/.test(e.message),
  );
  assert.throws(() => new Sayso({ url: server.feed, key: server.key }), /link of the person's pages/);
});

test("an address nobody listens on is unreachable, naming it and why", async () => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  const client = new Sayso({ url, key: server.key, retryFor: 500 });
  const started = Date.now();
  const e = await refusal(client.get("01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c"));
  assert.equal(e.status, 0);
  assert.equal(e.code, "unreachable");
  assert.ok(e.message.includes(url), e.message);
  assert.match(e.message, /ECONNREFUSED/);
  assert.ok(Date.now() - started < 3000, "gave up within its retry window");
  const w = await refusal(client.ask({ question: "Anyone?" }));
  assert.equal(w.code, "unreachable");
});

test("a server that is not sayso is named as such", async () => {
  const other = createServer((req, res) => {
    res.writeHead(req.url.startsWith("/v1/decisions") && req.method === "GET" ? 200 : 404, { "content-type": "text/html" });
    res.end("<html><body>a web site</body></html>");
  });
  await new Promise((r) => other.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${other.address().port}`;
    const client = new Sayso({ url, key: server.key });
    for (const call of [() => client.ask({ question: "Hello?" }), () => client.get("01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c")]) {
      const e = await refusal(call());
      assert.equal(e.code, "not_sayso");
      assert.match(e.message, /text\/html, not sayso's JSON: is http:\/\/127\.0\.0\.1:\d+ the address of a sayso server\?/);
    }
  } finally {
    await new Promise((r) => other.close(r));
  }
});

test("a path in front of the API that the server does not serve is named", async () => {
  const client = new Sayso({ url: `${server.base}/sayso`, key: server.key });
  const e = await refusal(client.ask({ question: "Prefix?" }));
  assert.equal(e.status, 404);
  assert.equal(e.code, "not_found");
  assert.match(e.message, /no such endpoint; is http:\/\/127\.0\.0\.1:\d+\/sayso the server's base address/);
});

test("a refused field is 422 validation_failed, naming the field", async () => {
  const e = await refusal(sayso.ask({ question: "Which one?", kind: "choose" }));
  assert.equal(e.status, 422);
  assert.equal(e.code, "validation_failed");
  assert.match(e.message, /^options: /);
  assert.deepEqual(e.details.map((d) => d.path), ["options"]);

  const many = await refusal(sayso.ask({ question: "", kind: "poll", ttl_minutes: -1 }));
  assert.equal(many.code, "validation_failed");
  assert.ok(many.details.length >= 2);
  for (const d of many.details) assert.ok(many.message.includes(d.path), `${d.path} named in: ${many.message}`);

  // Ignored fields are accepted, with a warning in the handle.
  const h = await sayso.ask({ question: "Extra?", colour: "blue" });
  assert.ok(h.warnings.some((w) => w.includes("colour")), h.warnings.join("; "));
  await sayso.cancel(h);
});

test("arguments are checked before anything is sent", async () => {
  await assert.rejects(sayso.ask({ kind: "bool" }), /question is required/);
  await assert.rejects(sayso.get(""), /decision id is required/);
  await assert.rejects(sayso.wait("x", { timeout: -1 }), /timeout must be milliseconds/);
  const e = await refusal(sayso.get("not-a-decision"));
  assert.equal(e.status, 404);
  assert.equal(e.code, "not_found");
});

test("an event stream that cannot open says so instead of retrying forever", async () => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  const stream = new Sayso({ url, key: server.key }).events();
  const e = await refusal(stream.next());
  assert.equal(e.code, "unreachable");
  const wrongKey = new Sayso({ url: server.base, key: "sk_wrong" }).events();
  assert.equal((await refusal(wrongKey.next())).code, "unauthorized");
});
