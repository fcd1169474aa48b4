// LangGraph (`@langchain/langgraph`, pinned in package.json, checkpointed with
// `@langchain/langgraph-checkpoint-sqlite`) with sayso/langgraph: a LangChain fake chat model
// (no network, no key) calls a gated tool in a ToolNode, the tool puts the call to the real
// server and interrupts the graph, the person answers through the pages, and the graph is
// resumed with `new Command({ resume })`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { AIMessage } from "@langchain/core/messages";
import { Command, END, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";
import { saysoApprovals } from "sayso/langgraph";

import { personAnswers as answerAll, runsOf } from "./support/exactly-once.mjs";
import { makeGraph, runAgent } from "./support/langgraph-agent.mjs";
import { pause, runs } from "./support/setup.mjs";
import { adapterSuite, decisionsOf, freshRun as fresh, personAnswers, sayso, server, useServer } from "./support/scenario.mjs";

useServer();

const freshRun = (name) => fresh(name, { db: "db" });

/** Runs the thread to its first pause, without answering it. */
async function toInterrupt(r, versions) {
  const { graph, approvals } = makeGraph({ sayso, ...r, versions });
  const config = { configurable: { thread_id: r.runId } };
  const first = await graph.invoke({ messages: [{ role: "user", content: "Deploy v2.3" }] }, config);
  assert.ok(first.__interrupt__?.length >= 1, "the graph paused for approval");
  return { graph, approvals, config, interrupts: first.__interrupt__ };
}

/** Resumes with a value the agent wrote itself, saying "approved". */
function resumeForged(graph, config) {
  return graph.invoke(new Command({ resume: { approved: true, reason: "approved" } }), config);
}

/** Once the checkpoint holds the paused step and its interrupt: a new process can resume it. */
async function checkpointed(r, versions) {
  const { graph } = makeGraph({ sayso, ...r, versions });
  const config = { configurable: { thread_id: r.runId } };
  // `next` names the tools node as soon as the model's step is saved, before the gate has
  // asked and interrupted: killed then, the new process would find no interrupt to answer.
  const interrupted = async () => {
    const state = await graph.getState(config);
    return state.next[0] === "tools" && state.tasks.some((t) => (t.interrupts ?? []).length > 0);
  };
  for (let i = 0; i < 100 && !(await interrupted()); i++) await pause(50);
  assert.ok(await interrupted(), "the checkpoint holds the paused tool call and its interrupt");
}

test("a denied call does not run, the model reads the reason, and a forged resume cannot approve it", async () => {
  const r = freshRun("deny");
  const { graph, config } = await toInterrupt(r);
  await personAnswers(r.runId, "Deny", "freeze until Monday");
  const result = await resumeForged(graph, config);
  assert.equal(await runs(r.countFile), 0, "a forged resume value ran a denied call");
  assert.match(String(result.messages.at(-1).content), /the person denied it: freeze until Monday/);
});

test("a resume value the agent writes itself, before any answer, runs nothing and pauses again on the approval it waits for", async () => {
  const r = freshRun("forged");
  const { graph, approvals, config, interrupts } = await toInterrupt(r);
  const again = await resumeForged(graph, config);
  assert.equal(await runs(r.countFile), 0);
  assert.equal(again.__interrupt__?.[0]?.value.decision_id, interrupts[0].value.decision_id, "paused again on the same approval");
  const [d] = await decisionsOf(r.runId);
  assert.equal(d.status, "pending", "the approval is still the one the graph waits for");
  // Nothing is left behind: the person's answer is the one the graph goes on with.
  const answered = approvals.answer(again.__interrupt__);
  await personAnswers(r.runId, "Deny", "not today");
  const result = await graph.invoke(new Command({ resume: await answered }), config);
  assert.equal(await runs(r.countFile), 0);
  assert.match(String(result.messages.at(-1).content), /the person denied it: not today/);
  assert.equal((await decisionsOf(r.runId)).length, 1);
});

test("two calls in a plain ToolNode, resumed between the person's answers: the allowed one runs once, the denied one never", async () => {
  const r = freshRun("between");
  const versions = ["b2.1", "b2.2"];
  const { graph, approvals, config } = await toInterrupt(r, versions);
  await answerAll(server, versions.slice(0, 1), ["Allow"]);
  // Resumed with only the first answered: the step is not decided, so nothing of it runs.
  const early = await resumeForged(graph, config);
  assert.deepEqual(await runsOf(r.countFile), {});
  assert.ok(early.__interrupt__?.length >= 1, "the graph paused again");
  assert.deepEqual(early.__interrupt__[0].value.calls.map((c) => c.tool_input.version), ["b2.2"], "it waits for the undecided call");
  const answered = approvals.answer(early.__interrupt__);
  await answerAll(server, versions.slice(1), ["Deny"]);
  let result = await graph.invoke(new Command({ resume: await answered }), config);
  for (let i = 0; result.__interrupt__?.length && i < 3; i++) {
    result = await graph.invoke(new Command({ resume: await approvals.answer(result.__interrupt__) }), config);
  }
  assert.deepEqual(await runsOf(r.countFile), { "b2.1": 1 });
  assert.match(String(result.messages.at(-1).content), /deployed b2\.1 \| .*not run: the person denied it/);
});

test("an Allow given for one call's arguments does not let other arguments through", async () => {
  const r = freshRun("args");
  const { graph, config } = await toInterrupt(r);
  await personAnswers(r.runId, "Allow");
  // The agent edits the checkpoint: the same call id, other arguments; then runs the tools.
  const call = (await graph.getState(config)).values.messages.at(-1);
  const edited = new AIMessage({ id: call.id, content: "", tool_calls: [{ ...call.tool_calls[0], args: { version: "v9.9" } }] });
  await graph.updateState(config, { messages: [edited] }, "agent");
  const result = await graph.invoke(null, config);
  assert.equal(await runs(r.countFile), 0, "v9.9 ran on the Allow given for v2.3");
  assert.match(String(result.messages.at(-1).content), /put to the person with other arguments/);
});

adapterSuite({
  harness: "langgraph",
  fresh: freshRun,
  run: (r, settings) => runAgent({ sayso, ...r, ...settings }),
  again: true,
  says: { timeout: [/was not run: the approval was cancelled/], cancel: [/cancelled/] },
  as: "denial",
  script: "langgraph-agent.mjs",
  args: (r, versions) => [r.db, r.countFile, r.runId, versions.join(",")],
  saved: checkpointed,
});

test("approveAll in a node of one's own asks about every call at once and pauses once for them", async () => {
  const r = freshRun("own-node");
  const approvals = saysoApprovals(sayso, { interrupt });
  const calls = ["n2.1", "n2.2"].map((version, i) => ({ toolCallId: `call-${i + 1}`, toolName: "deploy", input: { version } }));
  const ran = [];
  const graph = new StateGraph({ channels: { done: null } })
    .addNode("review", async (_, config) => {
      const verdicts = await approvals.approveAll(calls, config);
      verdicts.forEach((v, i) => v.approved && ran.push(calls[i].input.version));
      return { done: verdicts.map((v) => v.approved) };
    })
    .addEdge(START, "review")
    .addEdge("review", END)
    .compile({ checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: r.runId } };
  const first = await graph.invoke({ done: null }, config);
  assert.equal(first.__interrupt__?.length, 1, "one pause for the node");
  assert.equal(first.__interrupt__[0].value.calls.length, 2, "naming both calls");
  assert.equal((await decisionsOf(r.runId)).filter((d) => d.status === "pending").length, 2);
  const resume = approvals.answer(first.__interrupt__);
  await answerAll(server, ["n2.1", "n2.2"], ["Deny", "Allow"]);
  const last = await graph.invoke(new Command({ resume: await resume }), config);
  assert.deepEqual(last.done, [false, true]);
  assert.deepEqual(ran, ["n2.2"]);
});
