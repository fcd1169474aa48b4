// The workflow the tests run: one step, `release`, gates a Mastra tool (`deploy`, which counts
// its runs in a file) behind a sayso approval with sayso/mastra, and suspends while the person
// has not answered. Its Mastra instance keeps runs in a LibSQL file, so a new process resumes
// a run another started.

import { appendFileSync } from "node:fs";

import { Mastra } from "@mastra/core/mastra";
import { createTool } from "@mastra/core/tools";
import { createStep, createWorkflow } from "@mastra/core/workflows";
import { LibSQLStore } from "@mastra/libsql";
import { saysoApprovals } from "sayso/mastra";
import { z } from "zod";

const Release = z.object({ version: z.string() });
const Outcome = z.object({ deployed: z.boolean(), reason: z.string() });

/** The `release` workflow of a Mastra instance stored in `db`; `deploy` appends to `countFile`. */
export function releaseWorkflow({ sayso, db, countFile, ttlSeconds }) {
  const approvals = saysoApprovals(sayso, ttlSeconds ? { ttlSeconds } : {});
  const deploy = createTool({
    id: "deploy",
    description: "Deploys a version to production",
    inputSchema: Release,
    execute: async ({ version }) => {
      appendFileSync(countFile, `${version}\n`);
      return { deployed: version };
    },
  });
  const release = createStep({
    id: "release",
    inputSchema: Release,
    outputSchema: Outcome,
    execute: async (step) => {
      const verdict = await approvals.approve(step, { toolName: "deploy", input: step.inputData });
      if (verdict.pending) return step.suspend(verdict.pending);
      if (verdict.approved) await deploy.execute(step.inputData);
      return { deployed: verdict.approved, reason: verdict.reason };
    },
  });
  const workflow = createWorkflow({ id: "release", inputSchema: Release, outputSchema: Outcome }).then(release).commit();
  const mastra = new Mastra({
    workflows: { release: workflow },
    storage: new LibSQLStore({ id: "release", url: `file:${db}` }),
    logger: false,
  });
  return mastra.getWorkflow("release");
}
