/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
/** `promise`, or the signal's reason as soon as it aborts (a body read a runtime does not cut). */
export declare function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T>;
/**
 * A signal that aborts when `parent` does (with its reason) or after `timeoutMs`. Call
 * `done` when finished with it, so the timer and the listener go.
 */
export declare function linkedSignal(parent: AbortSignal | undefined, timeoutMs?: number): {
    signal: AbortSignal;
    done: () => void;
    timedOut: () => boolean;
};
/** Spreads the retries of many clients apart: `ms`, give or take a fifth. */
export declare function withJitter(ms: number): number;
