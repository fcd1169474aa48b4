// verifyWebhook on a webhook the real server sent to a callback_url, and on the Standard
// Webhooks reference example; a changed body, id or signature, another secret, and a
// timestamp outside the tolerance are each refused by name.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";

import { Sayso, WebhookVerificationError, SaysoError, verifyWebhook } from "sayso";
import { Server } from "./support/server.mjs";

let server;
let receiver;
let received;

before(async () => {
  server = await Server.start({ SAYSO_ALLOW_PRIVATE_WEBHOOKS: "1" });
  let deliver;
  received = new Promise((r) => (deliver = r));
  receiver = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      res.writeHead(204).end();
      deliver({ headers: req.headers, body: new Uint8Array(Buffer.concat(chunks)) });
    });
  });
  await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
});
after(async () => {
  await new Promise((r) => receiver?.close(r));
  await server?.close();
});

async function refused(promise, pattern) {
  const e = await promise.then(() => assert.fail("verified"), (e) => e);
  assert.ok(e instanceof WebhookVerificationError, String(e));
  assert.ok(e instanceof SaysoError);
  assert.equal(e.code, "webhook_invalid");
  assert.match(e.message, pattern);
}

test("a webhook from the server verifies with the inbox's secret, and any change is caught", async () => {
  const sayso = new Sayso({ url: server.base, key: server.key });
  const callback = `http://127.0.0.1:${receiver.address().port}/hook`;
  const handle = await sayso.ask({ question: "Send the webhook?", callback_url: callback, notify: "none" });
  await server.person().answer("Send the webhook?", { action: "answer", value: "yes" });
  const { headers, body } = await Promise.race([
    received,
    new Promise((_, reject) => setTimeout(() => reject(new Error("no webhook within 15 s")), 15_000).unref()),
  ]);
  const secret = server.webhookSecret;

  const d = await verifyWebhook(body, headers, secret);
  assert.equal(d.decision_id, handle.decision_id);
  assert.equal(d.status, "answered");
  assert.equal(d.outcome, true);
  // The same as a string, with a Headers object, and through the class.
  await verifyWebhook(new TextDecoder().decode(body), new Headers(headers), secret);
  await Sayso.verifyWebhook(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength), headers, secret);

  const text = new TextDecoder().decode(body);
  await refused(verifyWebhook(text.replace('"outcome":true', '"outcome":false'), headers, secret), /no webhook-signature matches/);
  await refused(verifyWebhook(text, { ...headers, "webhook-id": "msg_other" }, secret), /no webhook-signature matches/);
  await refused(verifyWebhook(text, headers, "whsec_" + btoa("another inbox's secret")), /no webhook-signature matches/);
  await refused(verifyWebhook(text, { ...headers, "webhook-signature": "v1,AAAA" }, secret), /no webhook-signature matches/);
  const { "webhook-signature": _, ...unsigned } = headers;
  await refused(verifyWebhook(text, unsigned, secret), /missing header webhook-signature/);

  // Replayed ten minutes later: too old. Its clock ten minutes behind ours: too new.
  const sent = Number(headers["webhook-timestamp"]) * 1000;
  await refused(verifyWebhook(text, headers, secret, { now: sent + 600_000 }), /s old, more than the tolerance of 300 s/);
  await refused(verifyWebhook(text, headers, secret, { now: sent - 600_000 }), /in the future/);
  await verifyWebhook(text, headers, secret, { now: sent + 600_000, toleranceSeconds: 900 });
  await refused(verifyWebhook(text, { ...headers, "webhook-timestamp": "yesterday" }, secret), /not unix seconds/);
});

test("the Standard Webhooks reference example verifies", async () => {
  const headers = {
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,bm9ldHZhbGlk v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  };
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const payload = '{"test": 2432232314}';
  const now = 1614265330 * 1000;
  assert.deepEqual(await verifyWebhook(payload, headers, secret, { now }), { test: 2432232314 });
  await refused(verifyWebhook(payload + " ", headers, secret, { now }), /no webhook-signature matches/);
  await assert.rejects(verifyWebhook(payload, headers, "whsec_not base64!", { now }), /not whsec_ followed by base64/);
});
