import { type ApprovalClient, type ToolCall, type Verdict } from "./approval.js";
export type { Verdict } from "./approval.js";
/** The harness name sayso shows the person for this framework. */
export declare const HARNESS = "langgraph";
/** What the adapter's interrupts carry (`result.__interrupt__[i].value`). */
export interface SaysoInterrupt {
    type: "sayso_approval";
    decision_id: string;
    tool_name: string;
    tool_input: unknown;
}
/** The part of a LangGraph config the adapter reads: the thread, and the tool call. */
export interface GraphConfig {
    configurable?: {
        thread_id?: string | number;
        [k: string]: unknown;
    };
    toolCall?: {
        id?: string;
        name?: string;
        [k: string]: unknown;
    };
    [k: string]: unknown;
}
export interface LangGraphApprovalOptions {
    /** `interrupt` from `@langchain/langgraph`. */
    interrupt: (value: SaysoInterrupt) => unknown;
    /** How long the person has, in minutes (default 60). Keep it the same across resumes. */
    ttlMinutes?: number;
    /** Or in seconds (10 or more), instead of `ttlMinutes`. */
    ttlSeconds?: number;
    /** How long `answer` waits for the person, in ms (default: until the approval expires). */
    timeout?: number;
    cwd?: string;
}
export interface SaysoApprovals {
    /**
     * `fn`, a tool's function, gated: before it runs, the call is put to the person and the
     * graph pauses (an interrupt) until `answer` resumes it; then it runs only if sayso says the
     * person allowed these arguments, and otherwise returns the reason to the model.
     */
    gate<I, R>(toolName: string, fn: (input: I, config: GraphConfig) => R | Promise<R>): (input: I, config: GraphConfig) => Promise<R | string>;
    /**
     * Inside a node or tool: asks for `call` (once per thread and call id), pauses the graph,
     * and on resume returns the verdict read from sayso, never from the resume value.
     */
    approve(call: ToolCall, config: GraphConfig): Promise<Verdict>;
    /**
     * Outside the graph: waits for the person on each of the adapter's pending interrupts and
     * returns the value for `new Command({ resume })` (keyed by interrupt id), or null when
     * none of them is the adapter's.
     */
    answer(interrupts: ReadonlyArray<{
        id?: string;
        value?: unknown;
    }> | undefined): Promise<Record<string, Verdict> | Verdict | null>;
}
/** sayso approvals for LangGraph graphs; the thread id names the run. */
export declare function saysoApprovals(sayso: ApprovalClient, options: LangGraphApprovalOptions): SaysoApprovals;
