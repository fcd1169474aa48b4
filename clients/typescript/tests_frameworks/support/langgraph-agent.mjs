// A LangGraph agent (a model node and a ToolNode with one gated tool, `deploy`) driven by a
// LangChain fake chat model (no network, no key), checkpointed to SQLite so a new process
// can resume the thread; `deploy` counts its runs in a file. Run as a script (the
// cold-resume test kills it mid-wait) or imported by the tests.

import { appendFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { FakeChatModel } from "@langchain/core/utils/testing";
import { Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { Sayso } from "sayso";
import { saysoApprovals } from "sayso/langgraph";

/**
 * The scripted model: with no tool message in the conversation it calls `deploy` once per
 * version, all in one step (ids `call-1`, `call-2`, …); once the results are there it
 * answers with what they said, so a test reads what the model was told (each tool's output,
 * or the denial's reason).
 */
export class ScriptedChatModel extends FakeChatModel {
  constructor(versions = ["v2.3"]) {
    super({});
    this.versions = versions;
  }

  bindTools() {
    return this;
  }

  async _generate(messages) {
    const said = messages.filter((m) => m.getType() === "tool").map((m) => m.content);
    const message = said.length
      ? new AIMessage(`the tool said: ${said.join(" | ")}`)
      : new AIMessage({ content: "", tool_calls: this.versions.map((version, i) => ({ id: `call-${i + 1}`, name: "deploy", args: { version }, type: "tool_call" })) });
    return { generations: [{ text: String(message.content), message }] };
  }
}

/** The compiled graph, checkpointed in the SQLite file `db`; `deploy` appends to `countFile`. */
export function makeGraph({ sayso, db, countFile, timeout, ttlSeconds, versions }) {
  const approvals = saysoApprovals(sayso, { interrupt, timeout, ttlSeconds });
  const deploy = tool(
    approvals.gate("deploy", async ({ version }) => {
      appendFileSync(countFile, `${version}\n`);
      return `deployed ${version}`;
    }),
    {
      name: "deploy",
      description: "Deploy a version to production",
      schema: { type: "object", properties: { version: { type: "string" } }, required: ["version"] },
    },
  );
  const model = new ScriptedChatModel(versions).bindTools([deploy]);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", new ToolNode([deploy]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: SqliteSaver.fromConnString(db) });
  return { graph, approvals };
}

/**
 * Runs the thread `runId` to its end, or resumes it where the checkpoint left it: answers
 * each of the adapter's interrupts through sayso and resumes. Returns the last message's text.
 */
export async function runAgent({ sayso, runId, db, countFile, timeout, ttlSeconds, versions }) {
  const { graph, approvals } = makeGraph({ sayso, db, countFile, timeout, ttlSeconds, versions });
  const config = { configurable: { thread_id: runId } };
  const saved = await graph.getState(config);
  let pending = saved.tasks.flatMap((t) => t.interrupts ?? []);
  if (saved.next.length === 0) {
    const result = await graph.invoke({ messages: [{ role: "user", content: "Deploy v2.3" }] }, config);
    pending = result.__interrupt__ ?? [];
  }
  for (let step = 0; pending.length > 0 && step < 5; step++) {
    const result = await graph.invoke(new Command({ resume: await approvals.answer(pending) }), config);
    pending = result.__interrupt__ ?? [];
  }
  const end = await graph.getState(config);
  return String(end.values.messages.at(-1).content);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [db, countFile, runId, versions] = process.argv.slice(2);
  process.stdout.write(`${await runAgent({ sayso: new Sayso(), runId, db, countFile, versions: versions?.split(",") })}\n`);
}
