// sayso/mastra: a Mastra workflow step that waits on a person through sayso. The step asks
// (once per workflow, run and call), pauses with Mastra's own `suspend`, whose snapshot the
// workflow's storage keeps for as long as the person takes, and is resumed once the decision
// settles by `resumeWhenAnswered`, which finds suspended runs in that storage, so a process
// started after the first was killed picks them up. On resume the step reads the person's
// answer from sayso, never from the resume data. Mastra is not imported: the workflow and the
// step's context are passed in, so the package keeps no dependency on it.

import { ApprovalGate, type ApprovalClient, type ToolCall, type Verdict, verdictOf } from "./approval.js";
import { sleep } from "./timing.js";

export type { Verdict } from "./approval.js";

/** The harness name sayso shows the person for this framework. */
export const HARNESS = "mastra";

/** What a waiting step suspends with (the step's `suspendPayload` in the run's snapshot). */
export interface SaysoSuspend {
  type: "sayso_approval";
  decision_id: string;
  tool_name: string;
  tool_input: unknown;
  /** The approval's page, for a person who reads the run in Mastra's own tools. */
  web_url: string;
  expires_at: string;
}

/** The part of a step's `execute` argument the adapter reads. */
export interface StepContext {
  workflowId: string;
  runId: string;
}

/** A call the step gates: the tool's name and its arguments, as the person will see them. */
export interface StepCall {
  toolName: string;
  input: unknown;
  /**
   * What tells this call from the run's other calls of the same tool (a loop's index, an
   * item's id); with the workflow and run ids it makes the approval's idempotency key.
   * Default: the tool's name, one approval per tool and run.
   */
  callId?: string;
}

/** A verdict, with `pending` set while the person has not answered: `return suspend(pending)`. */
export interface StepVerdict extends Verdict {
  pending?: SaysoSuspend;
}

export interface MastraApprovalOptions {
  /** How long the person has, in minutes (default 60). Keep it the same across resumes. */
  ttlMinutes?: number;
  /** Or in seconds (10 or more), instead of `ttlMinutes`. */
  ttlSeconds?: number;
  /** The working directory shown to the person, if any. */
  cwd?: string;
}

export interface SaysoApprovals {
  /**
   * Inside a step's `execute`: asks for `call` (or finds the ask already made for it) and
   * reads the decision as it stands. While it is pending the verdict is a denial carrying
   * `pending`, for the step to `return suspend(verdict.pending)`; once it has settled,
   * `approved` is true only for the person's Allow of these exact arguments.
   */
  approve(step: StepContext, call: StepCall): Promise<StepVerdict>;
}

/** sayso approvals for Mastra workflow steps. */
export function saysoApprovals(sayso: ApprovalClient, options: MastraApprovalOptions = {}): SaysoApprovals {
  return {
    async approve(step, call) {
      if (typeof step?.workflowId !== "string" || typeof step?.runId !== "string") {
        throw new TypeError("approve takes the step's execute argument first: approvals.approve(context, { toolName, input })");
      }
      if (typeof call?.toolName !== "string" || call.toolName === "") {
        throw new TypeError("approve: toolName is required, the name the person sees");
      }
      const gate = new ApprovalGate(sayso, HARNESS, {
        runId: `${step.workflowId}:${step.runId}`,
        ttlMinutes: options.ttlMinutes,
        ttlSeconds: options.ttlSeconds,
        cwd: options.cwd,
      });
      const toolCall: ToolCall = { toolCallId: call.callId ?? call.toolName, toolName: call.toolName, input: call.input };
      // A resumed step runs from its start: the ask is idempotent, so it finds the decision
      // made the first time, and the resume data (anyone's to write) is never read.
      const asked = await gate.request(toolCall);
      if ("approved" in asked) return asked;
      const decision = await sayso.get(asked.decision_id);
      const verdict = verdictOf(decision, toolCall);
      if (decision.status !== "pending") return verdict;
      return {
        ...verdict,
        pending: {
          type: "sayso_approval",
          decision_id: decision.decision_id,
          tool_name: call.toolName,
          tool_input: call.input,
          web_url: decision.web_url,
          expires_at: decision.expires_at,
        },
      };
    },
  };
}

/** One step of a suspended run that waits on a sayso approval. */
export interface PendingApproval {
  runId: string;
  step: string;
  decisionId: string;
  toolName: string;
}

/** The part of a Mastra workflow (`mastra.getWorkflow(id)`) the resumer uses. */
export interface ResumableWorkflow {
  listWorkflowRuns(args?: { status?: string; perPage?: number | false }): Promise<{ runs: Array<{ runId: string; snapshot: unknown }> }>;
  createRun(options: { runId: string }): Promise<{ resume(params: { step: string; resumeData?: unknown }): Promise<unknown> }>;
}

/** The approvals the workflow's suspended runs wait on, read from its storage. */
export async function pendingApprovals(workflow: ResumableWorkflow): Promise<PendingApproval[]> {
  const { runs } = await workflow.listWorkflowRuns({ status: "suspended", perPage: false });
  const pending: PendingApproval[] = [];
  for (const run of runs) {
    const snapshot = typeof run.snapshot === "string" ? (JSON.parse(run.snapshot) as unknown) : run.snapshot;
    const context = (snapshot as { status?: string; context?: Record<string, unknown> } | null)?.context ?? {};
    if ((snapshot as { status?: string }).status !== "suspended") continue;
    for (const [step, result] of Object.entries(context)) {
      const r = result as { status?: string; suspendPayload?: Partial<SaysoSuspend> } | null;
      const p = r?.suspendPayload;
      if (r?.status !== "suspended" || p?.type !== "sayso_approval" || typeof p.decision_id !== "string") continue;
      pending.push({ runId: run.runId, step, decisionId: p.decision_id, toolName: String(p.tool_name) });
    }
  }
  return pending;
}

export interface ResumeOptions {
  /** Stops the resumer; the runs it was waiting on stay suspended in storage. */
  signal?: AbortSignal;
  /** How often storage is read for runs newly suspended, in ms (default 2000). */
  every?: number;
  /** Called with each run's result after its resume. */
  onResumed?: (approval: PendingApproval, result: unknown) => void | Promise<void>;
  /**
   * Called when reading storage, a wait or a resume fails (with the approval it was for); it
   * is tried again on a later reading. Default: ignored.
   */
  onError?: (error: unknown, approval?: PendingApproval) => void;
}

/**
 * Resumes the workflow's runs as their approvals settle, until `signal` aborts: reads its
 * suspended runs from storage (at start, then every `every` ms), waits on each approval with
 * sayso's long-poll, and resumes the run at that step once the decision is no longer
 * pending. Run one resumer per workflow and storage: two could resume a run at once.
 */
export async function resumeWhenAnswered(workflow: ResumableWorkflow, sayso: ApprovalClient, options: ResumeOptions = {}): Promise<void> {
  const { signal } = options;
  const every = options.every ?? 2000;
  if (!Number.isFinite(every) || every < 10) throw new TypeError(`every must be milliseconds, 10 or more, not ${String(every)}`);
  const waiting = new Map<string, Promise<void>>();
  // When each decision's resume ended: a reading made before then may still list its run as
  // suspended, and must not resume it again. A resume that succeeded is never made again; one
  // that failed is tried again by a reading made after it.
  const ended = new Map<string, number>();
  const follow = async (p: PendingApproval): Promise<void> => {
    const decision = await sayso.wait(p.decisionId, { signal });
    if (decision.status === "pending") return;
    const run = await workflow.createRun({ runId: p.runId });
    const result = await run.resume({ step: p.step, resumeData: { decision_id: p.decisionId } });
    ended.set(p.decisionId, Number.POSITIVE_INFINITY);
    await options.onResumed?.(p, result);
  };
  while (!signal?.aborted) {
    const readAt = Date.now();
    let pending: PendingApproval[] = [];
    try {
      pending = await pendingApprovals(workflow);
    } catch (e) {
      options.onError?.(e);
    }
    for (const p of pending) {
      if (waiting.has(p.decisionId) || (ended.get(p.decisionId) ?? Number.NEGATIVE_INFINITY) >= readAt) continue;
      const task = follow(p)
        .catch((e: unknown) => {
          if (ended.get(p.decisionId) !== Number.POSITIVE_INFINITY) ended.set(p.decisionId, Date.now());
          if (!signal?.aborted) options.onError?.(e, p);
        })
        .finally(() => waiting.delete(p.decisionId));
      waiting.set(p.decisionId, task);
    }
    await sleep(every, signal).catch(() => undefined);
  }
  await Promise.all(waiting.values());
}
