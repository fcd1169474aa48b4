import { type EventsOptions } from "./events.js";
import { type FetchLike } from "./http.js";
import { type WaitOptions } from "./wait.js";
import { verifyWebhook } from "./webhook.js";
import type { AskFields, AskHandle, AuditEvent, Decision, DecisionPage, Kind, ResolvedEvent, Status } from "./types.js";
export interface SaysoOptions {
    /** The server's base address, e.g. `http://127.0.0.1:8080` (no `/v1`). Default: `SAYSO_URL`. */
    url?: string;
    /** An inbox's API key, `sk_…`. Default: `SAYSO_KEY`. */
    key?: string;
    /** A fetch of your own (a proxy's, a test's). Default: the global `fetch`. */
    fetch?: FetchLike;
    /**
     * How long `ask`, `get`, `list`, `auditTrail` and `cancel` keep trying, in ms, while the
     * server cannot be reached or answers 502/503/504 (default 3000; 0 tries once). `wait`
     * has rules of its own.
     */
    retryFor?: number;
}
export interface RequestOptions {
    signal?: AbortSignal;
}
export interface AskOptions extends RequestOptions {
    /**
     * Sent as `Idempotency-Key`: the same key and body return the first handle instead of
     * asking again. Default: a fresh key per call, so a retried create never asks twice.
     */
    idempotencyKey?: string;
}
export interface ListOptions extends RequestOptions {
    status?: Status;
    kind?: Kind;
    project?: string;
    /** 1–200, default 50. */
    limit?: number;
    /** The `next` of the previous page. */
    cursor?: string;
}
/** A decision's id, or anything carrying one (an `AskHandle`, a `Decision`). */
export type DecisionRef = string | {
    decision_id: string;
    expires_at?: string;
};
export declare class Sayso {
    #private;
    constructor(options?: SaysoOptions);
    /** The server's base address, as the requests use it. */
    get url(): string;
    /**
     * Asks a person: creates a decision (kind `bool` unless `fields.kind` says otherwise) and
     * returns its handle at once. `wait(handle)` gets the answer. With an `idempotencyKey` used
     * before (and the same fields), it returns the first handle, `replayed: true`.
     */
    ask(fields: AskFields, options?: AskOptions): Promise<AskHandle>;
    /** Gives the person a task (kind `todo`); the outcome is `"done"` or `"skipped"`. */
    todo(text: string, fields?: Omit<AskFields, "question" | "kind">, options?: AskOptions): Promise<AskHandle>;
    /**
     * Waits for the person: resolves with the Decision once it is `answered`, `declined`,
     * `expired` or `cancelled` (read `status` first, then `outcome`). Rejects with
     * `SaysoTimeoutError` when `timeout` (ms) passes with the decision still pending, and with
     * the signal's reason when `signal` aborts. A dropped connection or a restarting server
     * is retried, so the answer is never lost.
     */
    wait(decision: DecisionRef, options?: WaitOptions): Promise<Decision>;
    /** The decision as it stands. */
    get(decision: DecisionRef, options?: RequestOptions): Promise<Decision>;
    /** Withdraws a pending decision; it becomes `cancelled`. A decided one is `409 already_resolved`. */
    cancel(decision: DecisionRef, options?: RequestOptions & {
        reason?: string;
    }): Promise<Decision>;
    /** One page of the inbox's decisions, newest first. */
    list(options?: ListOptions): Promise<DecisionPage>;
    /** A decision's audit trail, oldest first: `created`, `viewed`, `notified`, `answered`, … */
    auditTrail(decision: DecisionRef, options?: RequestOptions): Promise<AuditEvent[]>;
    /**
     * The inbox's resolutions as they happen (`GET /v1/events`), one `ResolvedEvent` per
     * decision answered, declined, cancelled or expired; without `lastEventId`, the history
     * comes first. The stream is resumed after its last event whenever the connection ends,
     * so none is missed or repeated. It goes on until the loop breaks or `signal` aborts.
     */
    events(options?: EventsOptions): AsyncGenerator<ResolvedEvent>;
    /** `verifyWebhook`, for code that has a client at hand. */
    static verifyWebhook: typeof verifyWebhook;
}
