// An OpenAI Agents SDK agent with one gated tool, `deploy`, driven by a scripted `Model` (the
// SDK's own interface for models; no network, no key, tracing off). When a run stops for
// approval it writes the serialized RunState to a file, as a real agent keeps it, so a new
// process can resume the run; `deploy` counts its runs in another file. Run as a script (the
// cold-resume test kills it mid-wait) or imported by the tests.

import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

import { Agent, RunState, Usage, run, setTracingDisabled, tool } from "@openai/agents";
import { Sayso } from "sayso";
import { saysoApprovals } from "sayso/openai-agents";

setTracingDisabled(true);

/**
 * The scripted model: with no tool output in its input it calls `deploy` once per version,
 * all in one step (call ids `call-1`, `call-2`, …); once the outputs are there it answers
 * with what they said, so a test reads what the model was told (each tool's result, or the
 * rejection's reason).
 */
export class ScriptedModel {
  constructor(versions = ["v2.3"]) {
    this.versions = versions;
  }

  async getResponse(request) {
    const items = Array.isArray(request.input) ? request.input : [];
    const outputs = items.filter((i) => i.type === "function_call_result");
    if (outputs.length === 0) {
      return {
        usage: new Usage(),
        output: this.versions.map((version, i) => ({ type: "function_call", callId: `call-${i + 1}`, name: "deploy", arguments: JSON.stringify({ version }), status: "completed" })),
      };
    }
    const said = outputs.map(({ output }) => (typeof output === "string" ? output : (output?.text ?? JSON.stringify(output))));
    return {
      usage: new Usage(),
      output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `the tool said: ${said.join(" | ")}` }] }],
    };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error("the scripted model does not stream");
  }
}

/** The agent; its `deploy` appends a line to `countFile` each time it runs. */
export function makeAgent({ sayso, runId, countFile, timeout, ttlSeconds, versions }) {
  const approvals = saysoApprovals(sayso, { runId, timeout, ttlSeconds });
  const deploy = tool({
    name: "deploy",
    description: "Deploy a version to production",
    parameters: { type: "object", properties: { version: { type: "string" } }, required: ["version"], additionalProperties: false },
    strict: true,
    execute: async ({ version }) => {
      appendFileSync(countFile, `${version}\n`);
      return `deployed ${version}`;
    },
  });
  const agent = new Agent({ name: "deployer", instructions: "Deploy what you are asked to.", model: new ScriptedModel(versions), tools: [approvals.gate(deploy)] });
  return { agent, approvals };
}

/**
 * Runs (or resumes, from the RunState in `stateFile`) to the end: answers each interruption
 * through sayso and runs on. Returns the final output.
 */
export async function runAgent({ sayso, runId, stateFile, countFile, timeout, ttlSeconds, versions }) {
  // A finished run is not run again: its state at the last interruption would run the
  // approved calls a second time, as the SDK runs whatever a state it resumes has approved.
  if (existsSync(`${stateFile}.done`)) return readFileSync(`${stateFile}.done`, "utf8");
  const { agent, approvals } = makeAgent({ sayso, runId, countFile, timeout, ttlSeconds, versions });
  let result = existsSync(stateFile)
    ? await run(agent, await RunState.fromString(agent, readFileSync(stateFile, "utf8")))
    : await run(agent, "Deploy v2.3");
  for (let step = 0; result.interruptions.length > 0 && step < 5; step++) {
    writeFileSync(stateFile, result.state.toString());
    await approvals.resolve(result.state);
    result = await run(agent, result.state);
  }
  // The state file keeps the last interruption (the tests edit it); the end is noted apart.
  writeFileSync(`${stateFile}.done`, String(result.finalOutput));
  return result.finalOutput;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [stateFile, countFile, runId, versions] = process.argv.slice(2);
  const out = await runAgent({ sayso: new Sayso(), runId, stateFile, countFile, versions: versions?.split(",") });
  process.stdout.write(`${out}\n`);
}
