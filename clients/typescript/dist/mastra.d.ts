import { type ApprovalClient, type Verdict } from "./approval.js";
export type { Verdict } from "./approval.js";
/** The harness name sayso shows the person for this framework. */
export declare const HARNESS = "mastra";
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
export declare function saysoApprovals(sayso: ApprovalClient, options?: MastraApprovalOptions): SaysoApprovals;
/** One step of a suspended run that waits on a sayso approval. */
export interface PendingApproval {
    runId: string;
    step: string;
    decisionId: string;
    toolName: string;
}
/** The part of a Mastra workflow (`mastra.getWorkflow(id)`) the resumer uses. */
export interface ResumableWorkflow {
    listWorkflowRuns(args?: {
        status?: string;
        perPage?: number | false;
    }): Promise<{
        runs: Array<{
            runId: string;
            snapshot: unknown;
        }>;
    }>;
    createRun(options: {
        runId: string;
    }): Promise<{
        resume(params: {
            step: string;
            resumeData?: unknown;
        }): Promise<unknown>;
    }>;
}
/** The approvals the workflow's suspended runs wait on, read from its storage. */
export declare function pendingApprovals(workflow: ResumableWorkflow): Promise<PendingApproval[]>;
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
export declare function resumeWhenAnswered(workflow: ResumableWorkflow, sayso: ApprovalClient, options?: ResumeOptions): Promise<void>;
