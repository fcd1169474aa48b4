// The blocks docs/CLIENTS.md gives to copy for each framework run as written, against the
// real server, with the framework's own scripted model standing in for a real one.

import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";

import { tool } from "@openai/agents";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";

import { deployTool, scriptedModel } from "./support/ai-agent.mjs";
import { ScriptedModel } from "./support/openai-agents-agent.mjs";
import { ScriptedChatModel } from "./support/langgraph-agent.mjs";
import { Server, packageDir, pause, runs, scratch } from "./support/setup.mjs";

let server;
let tmp;
before(async () => {
  server = await Server.start();
  tmp = await scratch();
});
after(async () => {
  await server?.close();
  await tmp?.remove();
});

/** The first js block under `heading` in docs/CLIENTS.md. */
async function docBlock(heading) {
  const text = await readFile(resolve(packageDir, "..", "..", "docs", "CLIENTS.md"), "utf8");
  const at = text.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `docs/CLIENTS.md has a ${heading} section`);
  const block = /```js\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(block, `the ${heading} section has a js block`);
  return block[1];
}

/** Imports a doc block as a module inside the package, so `sayso/…` resolves to this build. */
async function importBlock(heading, name) {
  const file = join(packageDir, "tests_frameworks", `.doc-${name}.mjs`);
  await writeFile(file, await docBlock(heading));
  try {
    return await import(`${file}?${Date.now()}`);
  } finally {
    await (await import("node:fs/promises")).rm(file, { force: true });
  }
}

test("the AI SDK block runs the tool on Allow and tells the model the reason on Deny", async () => {
  process.env.SAYSO_URL = server.base;
  process.env.SAYSO_KEY = server.key;
  const { converse } = await importBlock("## Vercel AI SDK", "ai");
  for (const [value, remark, expected, count] of [
    ["Allow", undefined, /deployed v2\.3/, 1],
    ["Deny", "not on a Friday", /not on a Friday/, 0],
  ]) {
    const countFile = tmp.file(`doc-${value}.count`);
    const messages = [{ role: "user", content: "Deploy v2.3" }];
    const reply = converse({ model: scriptedModel(), tools: { deploy: deployTool(countFile) }, messages, runId: `doc-${value}` });
    await pause(200);
    await server.person().answer("v2.3", { action: "answer", value, ...(remark ? { remark } : {}) });
    assert.match(await reply, expected);
    assert.equal(await runs(countFile), count);
  }
});

test("the OpenAI Agents SDK block runs the tool on Allow and tells the model the reason on Deny", async () => {
  process.env.SAYSO_URL = server.base;
  process.env.SAYSO_KEY = server.key;
  const { deployer } = await importBlock("## OpenAI Agents SDK (TypeScript)", "openai-agents");
  for (const [value, remark, expected, count] of [
    ["Allow", undefined, /deployed v2\.3/, 1],
    ["Deny", "not on a Friday", /not on a Friday/, 0],
  ]) {
    const countFile = tmp.file(`doc-oa-${value}.count`);
    const deploy = tool({
      name: "deploy",
      description: "Deploy a version",
      parameters: { type: "object", properties: { version: { type: "string" } }, required: ["version"], additionalProperties: false },
      execute: async ({ version }) => {
        (await import("node:fs")).appendFileSync(countFile, `${version}\n`);
        return `deployed ${version}`;
      },
    });
    const reply = deployer({ model: new ScriptedModel(), deploy, input: "Deploy v2.3", runId: `doc-oa-${value}` });
    await pause(200);
    await server.person().answer("v2.3", { action: "answer", value, ...(remark ? { remark } : {}) });
    assert.match(await reply, expected);
    assert.equal(await runs(countFile), count);
  }
});

test("the LangGraph block runs the tool on Allow and tells the model the reason on Deny", async () => {
  process.env.SAYSO_URL = server.base;
  process.env.SAYSO_KEY = server.key;
  const { gated, runThread } = await importBlock("## LangGraph (TypeScript)", "langgraph");
  for (const [value, remark, expected, count] of [
    ["Allow", undefined, /deployed v2\.3/, 1],
    ["Deny", "not on a Friday", /not on a Friday/, 0],
  ]) {
    const countFile = tmp.file(`doc-lg-${value}.count`);
    const deploy = gated(
      "deploy",
      async ({ version }) => {
        (await import("node:fs")).appendFileSync(countFile, `${version}\n`);
        return `deployed ${version}`;
      },
      { description: "Deploy a version", schema: { type: "object", properties: { version: { type: "string" } }, required: ["version"] } },
    );
    const model = new ScriptedChatModel();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode("tools", new ToolNode([deploy]))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", toolsCondition, ["tools", END])
      .addEdge("tools", "agent")
      .compile({ checkpointer: new MemorySaver() });
    const reply = runThread(graph, { messages: [{ role: "user", content: "Deploy v2.3" }] }, `doc-lg-${value}`);
    await pause(200);
    await server.person().answer("v2.3", { action: "answer", value, ...(remark ? { remark } : {}) });
    const result = await reply;
    assert.match(String(result.messages.at(-1).content), expected);
    assert.equal(await runs(countFile), count);
  }
});
