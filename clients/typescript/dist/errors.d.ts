import type { Decision } from "./types.js";
/** One problem with a request, by JSON path, as `validation_failed` lists them. */
export interface ErrorDetail {
    path: string;
    message: string;
}
/**
 * Every failure of the client. `status` is the HTTP status (0 when no answer came), `code`
 * the server's error code (`unauthorized`, `validation_failed`, `not_found`,
 * `already_resolved`, …) or one of the client's own: `unreachable` (no answer), `not_sayso`
 * (an answer, but not sayso's), `invalid_argument` (refused before sending), `timeout`
 * (`SaysoTimeoutError`), `webhook_invalid` (`WebhookVerificationError`).
 */
export declare class SaysoError extends Error {
    name: string;
    readonly status: number;
    readonly code: string;
    /** For `validation_failed`: every problem with its JSON path, e.g. `options[2].label`. */
    readonly details: ErrorDetail[];
    /** Seconds, from `Retry-After`, when the server gave one. */
    readonly retryAfter: number | undefined;
    constructor(message: string, init: {
        status?: number;
        code: string;
        details?: ErrorDetail[];
        retryAfter?: number;
        cause?: unknown;
    });
}
/**
 * `wait`'s own time ran out. The decision is still pending on the server (nothing was
 * decided, no outcome is implied): wait again, or `cancel` it.
 */
export declare class SaysoTimeoutError extends SaysoError {
    name: string;
    readonly decisionId: string;
    /** The decision as last read, `pending`; undefined when no read got through. */
    readonly decision: Decision | undefined;
    constructor(decisionId: string, waitedMs: number, decision: Decision | undefined);
}
/** A webhook that is not sayso's, was changed on the way, or is too old or too new. */
export declare class WebhookVerificationError extends SaysoError {
    name: string;
    constructor(message: string);
}
/** An argument refused before anything is sent. */
export declare function invalidArgument(message: string): SaysoError;
