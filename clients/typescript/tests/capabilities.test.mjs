// The key asks, reads, waits and cancels; it never answers a tool approval. Nothing the
// client receives with it holds an approval link (`/a/…`), and the approval's web_url
// only shows the call; the person answers it from the feed.

import assert from "node:assert/strict";
import { test } from "node:test";

import { SaysoError } from "sayso";
import { sayso, server, useServer } from "./support/server.mjs";

useServer();

test("no response reached with the key holds an approval's answer link", async () => {
  const approval = {
    question: "Claude Code wants to run: rm -rf build/",
    kind: "choose",
    options: ["Allow", "Deny"],
    approval: { harness: "claude", tool_name: "Bash", tool_input: { command: "rm -rf build/" } },
  };
  const seen = [];
  const keep = (v) => (seen.push(JSON.stringify(v)), v);
  const handle = keep(await sayso.ask(approval));
  const ctl = new AbortController();
  const streamed = (async () => {
    for await (const ev of sayso.events({ signal: ctl.signal })) {
      keep(ev);
      if (ev.decision.decision_id === handle.decision_id) return ev;
    }
  })();
  const waiting = sayso.wait(handle, { timeout: 20_000 });
  keep(await sayso.get(handle));
  keep(await sayso.list());
  keep(await sayso.wait(handle, { timeout: 0 }).catch((e) => e.decision));

  // The web_url only shows the call: a POST to it is refused and changes nothing.
  const person = server.person();
  const refused = await person.post(handle.web_url, { action: "answer", value: "Allow" });
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).error.code, "answer_elsewhere");

  // The person's feed carries the approval link; the person allows from there.
  const link = await person.linkFor("rm -rf build/");
  const token = new URL(link).pathname;
  assert.match(token, /^\/a\//);
  await person.answer("rm -rf build/", { action: "answer", value: "Allow" });

  const d = keep(await waiting);
  assert.equal(d.status, "answered");
  assert.equal(d.outcome, "Allow");
  assert.equal(d.answered_by.channel, "feed");
  assert.equal(d.approval.tool_name, "Bash");
  keep(await streamed);
  ctl.abort();
  keep(await sayso.auditTrail(handle));
  const late = await sayso.cancel(handle).catch((e) => e);
  assert.ok(late instanceof SaysoError);
  keep({ message: late.message, details: late.details });

  const everything = seen.join("\n");
  assert.ok(!everything.includes(token), "the approval link appears in a response");
  assert.ok(!everything.includes(token.slice(3)), "the approval token appears in a response");
  assert.ok(!/\/a\/[A-Za-z0-9_-]{20,}/.test(everything), "an approval link appears in a response");
  assert.ok(!everything.includes(new URL(server.feed).pathname), "the feed link appears in a response");
});
