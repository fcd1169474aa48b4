// A question nobody answers expires on the server, and the wait returns it expired with
// its default outcome: the one wait that ends without the person.

import assert from "node:assert/strict";
import { test } from "node:test";

import { sayso, useServer } from "./support/server.mjs";

useServer();

test("a question that expires comes back expired, with its default outcome", async () => {
  const handle = await sayso.ask({ question: "Expire me?", ttl_seconds: 10, default_outcome: false });
  const started = Date.now();
  const d = await sayso.wait(handle, { timeout: 30_000 });
  assert.equal(d.status, "expired");
  assert.equal(d.outcome, false);
  assert.equal(d.outcome_source, "default");
  assert.ok(Date.now() - started < 15_000);
});
