// An AI SDK agent with one gated tool, `deploy`, driven by the SDK's own mock model
// (`ai/test`: no network, no key). It keeps its messages in a file after every step, as a
// real agent keeps its conversation, so a new process can pick the run up; `deploy` counts
// its runs in another file. Run as a script (the cold-resume test kills it mid-wait) or
// imported by the tests.

import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

import { generateText, jsonSchema, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Sayso } from "sayso";
import { saysoApprovals } from "sayso/ai";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/**
 * The scripted model: with no tool result in the prompt it calls `deploy` once per version,
 * all in one step (ids `call-1`, `call-2`, …); once the results are there it answers with
 * what they said, so a test reads what the model was told (each tool's output, or the
 * denial's reason).
 */
export function scriptedModel(versions = ["v2.3"]) {
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const results = prompt.filter((m) => m.role === "tool").flatMap((m) => m.content).filter((p) => p.type === "tool-result");
      if (results.length === 0) {
        return {
          content: versions.map((version, i) => ({ type: "tool-call", toolCallId: `call-${i + 1}`, toolName: "deploy", input: JSON.stringify({ version }) })),
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
        };
      }
      return {
        content: [{ type: "text", text: `the tool said: ${results.map((r) => JSON.stringify(r.output)).join(" | ")}` }],
        finishReason: { unified: "stop", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

/** The gated tool: each run appends a line to `countFile`. */
export function deployTool(countFile) {
  return tool({
    description: "Deploy a version to production",
    inputSchema: jsonSchema({ type: "object", properties: { version: { type: "string" } }, required: ["version"] }),
    execute: async ({ version }) => {
      appendFileSync(countFile, `${version}\n`);
      return `deployed ${version}`;
    },
  });
}

export const load = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : [{ role: "user", content: "Deploy v2.3" }]);
export const save = (file, messages) => writeFileSync(file, JSON.stringify(messages));

/**
 * Runs (or resumes) the conversation in `stateFile` to its end: answers what waits for an
 * approval, calls the model, and stops when it asks for nothing more. Returns the model's text.
 */
export async function runAgent({ sayso, runId, stateFile, countFile, timeout, ttlSeconds, versions }) {
  const approvals = saysoApprovals(sayso, { runId, timeout, ttlSeconds });
  const tools = approvals.gate({ deploy: deployTool(countFile) });
  const messages = load(stateFile);
  for (let step = 0; step < 5; step++) {
    const answers = await approvals.answer(messages);
    if (answers) {
      messages.push(answers);
      save(stateFile, messages);
    }
    const result = await generateText({ model: scriptedModel(versions), tools, messages });
    messages.push(...result.response.messages);
    save(stateFile, messages);
    if (!result.content.some((p) => p.type === "tool-approval-request")) return result.text;
  }
  throw new Error("the agent did not finish in 5 steps");
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [stateFile, countFile, runId, versions] = process.argv.slice(2);
  const text = await runAgent({ sayso: new Sayso(), runId, stateFile, countFile, versions: versions?.split(",") });
  process.stdout.write(`${text}\n`);
}
