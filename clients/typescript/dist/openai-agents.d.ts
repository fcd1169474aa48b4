import { type ApprovalClient, type ApprovalOptions, type Verdict } from "./approval.js";
export type { ApprovalOptions, Verdict } from "./approval.js";
/** The harness name sayso shows the person for this framework. */
export declare const HARNESS = "openai-agents";
/** A function tool as `tool()` makes it; only `needsApproval` and `invoke` are touched. */
export interface AgentsFunctionTool {
    type: string;
    name: string;
    invoke: (runContext: any, input: string, details?: {
        toolCall?: {
            callId?: string;
        } | undefined;
        [k: string]: unknown;
    }) => Promise<unknown>;
    needsApproval: unknown;
    [k: string]: unknown;
}
/** An interruption of a run (`result.interruptions`, `state.getInterruptions()`). */
export interface AgentsApprovalItem {
    type: string;
    rawItem: {
        type: string;
        callId?: string;
        name?: string;
        arguments?: string;
        [k: string]: unknown;
    };
    name?: string | undefined;
    [k: string]: unknown;
}
/** The parts of a `RunState` the adapter uses. */
export interface AgentsRunState {
    getInterruptions(): AgentsApprovalItem[];
    approve(item: any, options?: {
        alwaysApprove?: boolean;
    }): void;
    reject(item: any, options?: {
        alwaysReject?: boolean;
        message?: string;
    }): void;
}
export interface SaysoApprovals {
    /** `tool` gated: it always needs approval, and asks sayso whether it was allowed before it runs. */
    gate<T extends AgentsFunctionTool>(tool: T): T;
    /**
     * Answers the state's interruptions: asks the person about all of them at once through
     * sayso (or finds the questions already asked for those calls), waits for every answer,
     * and approves or rejects each in `state` with the
     * reason. Run the agent again with `state` afterwards.
     */
    resolve(state: AgentsRunState): Promise<Verdict[]>;
}
/** sayso approvals for one Agents SDK run (`runId`: the conversation, the same on every resume). */
export declare function saysoApprovals(sayso: ApprovalClient, options: ApprovalOptions): SaysoApprovals;
