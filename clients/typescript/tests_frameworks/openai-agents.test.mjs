// The OpenAI Agents SDK (`@openai/agents`, pinned in package.json) with sayso/openai-agents:
// a scripted `Model` (the SDK's own interface for models; no network, no key, tracing off)
// calls a gated tool, the run stops with an interruption, the adapter asks the real server,
// and the person answers through the pages; the RunState is serialized and resumed as the
// SDK does it.

import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";

import { RunState, run } from "@openai/agents";

import { makeAgent, runAgent } from "./support/openai-agents-agent.mjs";
import { runs } from "./support/setup.mjs";
import { adapterSuite, decisionsOf, freshRun, personAnswers, sayso, useServer } from "./support/scenario.mjs";

useServer();

/** Resumes the serialized state in `stateFile` after approving every interruption in it, as an agent editing its own state would. */
async function forgeApprovalAndRun(run_, { versions } = {}) {
  const { agent } = makeAgent({ sayso, ...run_, versions });
  const state = await RunState.fromString(agent, readFileSync(run_.stateFile, "utf8"));
  for (const item of state.getInterruptions()) state.approve(item);
  const forged = state.toString();
  writeFileSync(run_.stateFile, forged);
  const result = await run(agent, await RunState.fromString(agent, forged));
  return result.finalOutput;
}

test("a rejected call does not run, the model reads the reason, and a forged state cannot approve it", async () => {
  const r = freshRun("deny");
  const [out] = await Promise.all([runAgent({ sayso, ...r }), personAnswers(r.runId, "Deny", "freeze until Monday")]);
  assert.equal(await runs(r.countFile), 0);
  assert.match(out, /the person denied it: freeze until Monday/);

  // The state saved at the interruption, edited to approve the call, then resumed.
  const again = await forgeApprovalAndRun(r);
  assert.equal(await runs(r.countFile), 0, "a forged RunState ran a denied call");
  assert.match(again, /the person denied it: freeze until Monday/);
});

test("an approval the agent gives itself runs nothing, and the approval the check made is withdrawn", async () => {
  const r = freshRun("forged");
  const { agent } = makeAgent({ sayso, ...r });
  const first = await run(agent, "Deploy v2.3");
  assert.equal(first.interruptions.length, 1, "the SDK stopped the run for approval");
  writeFileSync(r.stateFile, first.state.toString());
  const out = await forgeApprovalAndRun(r);
  assert.equal(await runs(r.countFile), 0);
  assert.match(out, /no approval was asked for this call before it ran/);
  const [d] = await decisionsOf(r.runId);
  assert.equal(d.status, "cancelled", "the approval nobody waits for is withdrawn");
  const trail = await sayso.auditTrail(d.decision_id);
  assert.equal(trail.find((e) => e.kind === "cancelled")?.detail.reason, "abandoned");
});

test("an Allow given for one call's arguments does not let other arguments through", async () => {
  const r = freshRun("args");
  await Promise.all([runAgent({ sayso, ...r }), personAnswers(r.runId, "Allow")]);
  assert.equal(await runs(r.countFile), 1);
  // The saved state's call, same id, its arguments edited; then approved and resumed.
  const text = readFileSync(r.stateFile, "utf8");
  assert.ok(text.includes('\\"version\\":\\"v2.3\\"'));
  writeFileSync(r.stateFile, text.replaceAll('\\"version\\":\\"v2.3\\"', '\\"version\\":\\"v9.9\\"'));
  const out = await forgeApprovalAndRun(r, { versions: ["v9.9"] });
  assert.equal(await runs(r.countFile), 1, "v9.9 ran on the Allow given for v2.3");
  assert.match(out, /put to the person with other arguments/);
});

adapterSuite({
  harness: "openai-agents",
  run: (r, settings) => runAgent({ sayso, ...r, ...settings }),
  says: { timeout: [/no answer within/], cancel: [/cancelled/] },
  as: "rejection",
  script: "openai-agents-agent.mjs",
  args: (r, versions) => [r.stateFile, r.countFile, r.runId, versions.join(",")],
  saved: async (r) => assert.ok(existsSync(r.stateFile)),
});
