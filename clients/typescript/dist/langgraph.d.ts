import { type ApprovalClient, type ToolCall, type Verdict } from "./approval.js";
export type { Verdict } from "./approval.js";
/** The harness name sayso shows the person for this framework. */
export declare const HARNESS = "langgraph";
/** One call an interrupt waits on. */
export interface SaysoPendingCall {
    decision_id: string;
    tool_name: string;
    tool_input: unknown;
}
/** What the adapter's interrupts carry (`result.__interrupt__[i].value`). */
export interface SaysoInterrupt extends SaysoPendingCall {
    type: "sayso_approval";
    /** Every call of the step still waiting for the person, this one included. */
    calls: SaysoPendingCall[];
}
/** The part of a LangGraph config the adapter reads: the thread, the tool call, the state. */
export interface GraphConfig {
    configurable?: {
        thread_id?: string | number;
        [k: string]: unknown;
    };
    toolCall?: {
        id?: string;
        name?: string;
        args?: unknown;
        [k: string]: unknown;
    };
    /** What a `ToolNode` hands its tools: the state it runs on, whose last AI message holds the step. */
    state?: unknown;
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
     * `fn`, a tool's function, gated: the calls of its step are put to the person together and
     * the graph pauses (an interrupt) until they are all decided; then it runs only if sayso
     * says the person allowed these arguments, and otherwise returns the reason to the model.
     */
    gate<I, R>(toolName: string, fn: (input: I, config: GraphConfig) => R | Promise<R>): (input: I, config: GraphConfig) => Promise<R | string>;
    /**
     * Inside a node or tool: asks for `call` (once per thread and call id), pauses the graph
     * until the person decides, and returns the verdict read from sayso, never from the
     * resume value.
     */
    approve(call: ToolCall, config: GraphConfig): Promise<Verdict>;
    /** `approve` for several calls of one node: asked together, one pause until all are decided. */
    approveAll(calls: readonly ToolCall[], config: GraphConfig): Promise<Verdict[]>;
    /**
     * Outside the graph: waits for the person on every call the adapter's pending interrupts
     * name and returns the value for `new Command({ resume })` (keyed by interrupt id), or null
     * when none of them is the adapter's.
     */
    answer(interrupts: ReadonlyArray<{
        id?: string;
        value?: unknown;
    }> | undefined): Promise<Record<string, Verdict> | Verdict | null>;
}
/** sayso approvals for LangGraph graphs; the thread id names the run. */
export declare function saysoApprovals(sayso: ApprovalClient, options: LangGraphApprovalOptions): SaysoApprovals;
/**
 * The gated calls of the step `own` belongs to: those of the last AI message in `state` with
 * no tool result yet, as a `ToolNode` runs them; `own` alone when the state does not hold it.
 */
export declare function stepOf(own: ToolCall, state: unknown, gated: ReadonlySet<string>): ToolCall[];
