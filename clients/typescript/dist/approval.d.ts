import type { Sayso } from "./client.js";
import type { Decision } from "./types.js";
/** The Sayso methods an approval needs; a `Sayso` has them. */
export type ApprovalClient = Pick<Sayso, "ask" | "get" | "wait" | "cancel">;
/** One tool call the framework paused, named as the framework names it. */
export interface ToolCall {
    /** The framework's own id of the call: with the run id, it makes the idempotency key. */
    toolCallId: string;
    toolName: string;
    /** The call's arguments: shown to the person, and bound to the approval. */
    input: unknown;
}
export interface ApprovalOptions {
    /** The run, thread or conversation the calls belong to; the same on every resume. */
    runId: string;
    /** How long the person has, in minutes (default 60). Keep it the same across resumes. */
    ttlMinutes?: number;
    /** Or in seconds (10 or more), instead of `ttlMinutes`. */
    ttlSeconds?: number;
    /** How long the agent waits for the answer, in ms (default: until the approval expires). */
    timeout?: number;
    /** The working directory shown to the person, if any. */
    cwd?: string;
}
/** What the adapter feeds back: only `approved: true` lets the tool run. */
export interface Verdict {
    approved: boolean;
    /** Why, in a sentence the model can read; for a denial, the person's reason when given. */
    reason: string;
    /** The sayso decision, when one was reached. */
    decisionId?: string;
}
/**
 * Asks sayso for a framework's tool calls and reads the answers back. The approval's
 * idempotency key is the framework's call id within the run, and the create body holds the
 * canonical arguments: asking again for the same call returns the same decision (a resumed
 * run never asks twice), while the same call id with other arguments is refused by the
 * server, so an Allow given for one call's arguments never lets another's through.
 */
export declare class ApprovalGate {
    #private;
    constructor(sayso: ApprovalClient, harness: string, options: ApprovalOptions);
    /** Asks (or finds the ask already made for this call) and waits for the person. */
    decide(call: ToolCall): Promise<Verdict>;
    /**
     * The calls of one model step put to the person together: every approval is made (or
     * found) before any is waited on, so the person sees the whole step at once (they share
     * the run's session, which the feed groups) and answers them in any order.
     */
    decideAll(calls: readonly ToolCall[]): Promise<Verdict[]>;
    /**
     * Waits for a decision to end, up to `timeout`; past it the decision is cancelled, so the
     * denial the framework hears is the server's too, and a resume later cannot find an Allow
     * given after the agent stopped waiting.
     */
    waitFor(decisionId: string): Promise<{
        decision: Decision;
        note?: string;
    }>;
    /**
     * The decision as it stands, without waiting: what a tool checks just before it runs, so
     * that state the agent can edit (a message saying "approved", a resume value) counts for
     * nothing; only the person's Allow of these exact arguments does. The check finds the
     * approval asked when the run paused; when it has to make it, the call never paused for
     * the person, and when it is still pending, the run went on without the answer: either
     * way the call is denied and the approval withdrawn as abandoned, so nothing stays on the
     * person's phone that no one will act on.
     */
    check(call: ToolCall): Promise<Verdict>;
    /**
     * Withdraws an approval nothing will act on, as `abandoned`: the person's page says the
     * agent stopped waiting. An answer that came first stands, and is returned.
     */
    withdraw(decisionId: string): Promise<Decision>;
    /** The idempotency key of a call: the harness, the run and the framework's call id. */
    keyOf(call: ToolCall): string;
    /**
     * Asks, or finds the ask already made for this call: the decision's id, or a denial when
     * this call id was already put to the person with other arguments.
     */
    request(call: ToolCall): Promise<{
        decision_id: string;
        replayed: boolean;
    } | Verdict>;
}
/**
 * The verdict a decision gives for `call`: Allow of this very tool, or a denial saying why
 * (`note`: why the adapter cancelled it, which the decision does not carry).
 */
export declare function verdictOf(d: Decision, call: ToolCall, note?: string): Verdict;
/** `value` with every object's keys sorted, as JSON would carry it. */
export declare function canonical(value: unknown): unknown;
