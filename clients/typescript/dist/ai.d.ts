import { type ApprovalClient, type ApprovalOptions, type Verdict } from "./approval.js";
export type { ApprovalOptions, Verdict } from "./approval.js";
/** The harness name sayso shows the person for this framework. */
export declare const HARNESS = "ai-sdk";
/** A tool as the AI SDK defines it; only `execute` and `needsApproval` are touched. */
export interface AiTool {
    execute?: (input: any, options: {
        toolCallId: string;
        [k: string]: unknown;
    }) => unknown;
    needsApproval?: unknown;
    [k: string]: unknown;
}
/** A model message as the AI SDK keeps them (`result.response.messages`). */
export interface AiMessage {
    role: string;
    content: unknown;
    [k: string]: unknown;
}
/** The tool message answering the SDK's approval requests, to append to the messages. */
export interface ApprovalResponses {
    role: "tool";
    content: Array<{
        type: "tool-approval-response";
        approvalId: string;
        approved: boolean;
        reason: string;
    }>;
}
/** The error a gated tool throws instead of running; the model reads its message. */
export declare class ToolNotApprovedError extends Error {
    name: string;
    readonly verdict: Verdict;
    constructor(verdict: Verdict);
}
export interface SaysoApprovals {
    /** `tools` with every one gated: `needsApproval`, and a check with sayso before it runs. */
    gate<T extends Record<string, AiTool>>(tools: T): T;
    /**
     * Answers the approval requests in `messages` that have no response yet: asks the person
     * about all of them at once through sayso (or finds the questions already asked for those
     * calls), then waits for every answer. Returns the
     * tool message to append, or null when nothing waits for an answer.
     */
    answer(messages: readonly AiMessage[]): Promise<ApprovalResponses | null>;
}
/**
 * sayso approvals for one AI SDK run (`runId`: the conversation, the same on every resume).
 * Gate the tools with `gate`, and after each `generateText`/`streamText` append
 * `await answer(messages)` when it is not null, then call the model again.
 */
export declare function saysoApprovals(sayso: ApprovalClient, options: ApprovalOptions): SaysoApprovals;
/** The approval requests of `messages` that no later tool message answers, with their calls. */
export declare function pendingApprovals(messages: readonly AiMessage[]): Array<{
    approvalId: string;
    toolCallId: string;
    toolName: string;
    input: unknown;
}>;
