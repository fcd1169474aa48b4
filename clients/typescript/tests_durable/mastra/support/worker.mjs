// A worker process: starts the run RUN_ID of the release workflow unless its storage (MASTRA_DB)
// already holds it, then resumes it with sayso/mastra's resumeWhenAnswered until it finishes.
// It prints `suspended <decision id>` once the run waits on the person, and `result <json>`
// (the run's status and output) at the end. The tests kill it mid-wait and start another.

import { Sayso } from "sayso";
import { resumeWhenAnswered } from "sayso/mastra";

import { releaseWorkflow } from "./release.mjs";

const env = process.env;
const sayso = new Sayso(); // SAYSO_URL and SAYSO_KEY
const workflow = releaseWorkflow({
  sayso,
  db: env.MASTRA_DB,
  countFile: env.COUNT_FILE,
  ttlSeconds: env.TTL_SECONDS ? Number(env.TTL_SECONDS) : undefined,
});
const runId = env.RUN_ID;

const say = (line) => process.stdout.write(`${line}\n`);
const finish = (state) => {
  say(`result ${JSON.stringify({ status: state.status, result: state.result ?? null })}`);
  process.exit(0);
};

let saved = await workflow.getWorkflowRunById(runId);
if (!saved) {
  const run = await workflow.createRun({ runId });
  const started = await run.start({ inputData: { version: env.VERSION ?? "v2.3" } });
  if (started.status !== "suspended") finish(started);
  saved = await workflow.getWorkflowRunById(runId);
}
if (saved.status !== "suspended") finish(saved);
say(`suspended ${saved.steps.release.suspendPayload.decision_id}`);

await resumeWhenAnswered(workflow, sayso, {
  every: 200,
  onResumed: (approval, result) => {
    if (approval.runId === runId && result.status !== "suspended") finish(result);
  },
  onError: (e) => process.stderr.write(`resume: ${e?.stack ?? e}\n`),
});
