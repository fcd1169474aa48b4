/**
 * Every failure of the client. `status` is the HTTP status (0 when no answer came), `code`
 * the server's error code (`unauthorized`, `validation_failed`, `not_found`,
 * `already_resolved`, …) or one of the client's own: `unreachable` (no answer), `not_sayso`
 * (an answer, but not sayso's), `invalid_argument` (refused before sending), `timeout`
 * (`SaysoTimeoutError`), `webhook_invalid` (`WebhookVerificationError`).
 */
export class SaysoError extends Error {
    name = "SaysoError";
    status;
    code;
    /** For `validation_failed`: every problem with its JSON path, e.g. `options[2].label`. */
    details;
    /** Seconds, from `Retry-After`, when the server gave one. */
    retryAfter;
    constructor(message, init) {
        super(message, init.cause === undefined ? undefined : { cause: init.cause });
        this.status = init.status ?? 0;
        this.code = init.code;
        this.details = init.details ?? [];
        this.retryAfter = init.retryAfter;
    }
}
/**
 * `wait`'s own time ran out. The decision is still pending on the server (nothing was
 * decided, no outcome is implied): wait again, or `cancel` it.
 */
export class SaysoTimeoutError extends SaysoError {
    name = "SaysoTimeoutError";
    decisionId;
    /** The decision as last read, `pending`; undefined when no read got through. */
    decision;
    constructor(decisionId, waitedMs, decision) {
        super(`decision ${decisionId} is still pending after waiting ${Math.round(waitedMs)} ms`, {
            code: "timeout",
        });
        this.decisionId = decisionId;
        this.decision = decision;
    }
}
/** A webhook that is not sayso's, was changed on the way, or is too old or too new. */
export class WebhookVerificationError extends SaysoError {
    name = "WebhookVerificationError";
    constructor(message) {
        super(message, { code: "webhook_invalid" });
    }
}
/** An argument refused before anything is sent. */
export function invalidArgument(message) {
    return new SaysoError(message, { code: "invalid_argument" });
}
