// Timers and abort signals, written out rather than taken from AbortSignal.any and
// AbortSignal.timeout so that every runtime with fetch has them (Node 20.0 lacks `any`).
/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted)
            return reject(signal.reason);
        const onAbort = () => {
            clearTimeout(timer);
            reject(signal.reason);
        };
        const timer = setTimeout(() => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
        }, Math.max(0, ms));
        signal?.addEventListener("abort", onAbort, { once: true });
    });
}
/** `promise`, or the signal's reason as soon as it aborts (a body read a runtime does not cut). */
export function abortable(promise, signal) {
    if (!signal)
        return promise;
    if (signal.aborted)
        return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        promise.then((v) => {
            signal.removeEventListener("abort", onAbort);
            resolve(v);
        }, (e) => {
            signal.removeEventListener("abort", onAbort);
            reject(e);
        });
    });
}
/**
 * A signal that aborts when `parent` does (with its reason) or after `timeoutMs`. Call
 * `done` when finished with it, so the timer and the listener go.
 */
export function linkedSignal(parent, timeoutMs) {
    const ctl = new AbortController();
    let expired = false;
    const onAbort = () => ctl.abort(parent.reason);
    if (parent?.aborted)
        ctl.abort(parent.reason);
    else
        parent?.addEventListener("abort", onAbort, { once: true });
    const timer = timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            expired = true;
            ctl.abort(new DOMException("the attempt took too long", "TimeoutError"));
        }, timeoutMs);
    return {
        signal: ctl.signal,
        done: () => {
            if (timer !== undefined)
                clearTimeout(timer);
            parent?.removeEventListener("abort", onAbort);
        },
        timedOut: () => expired,
    };
}
/** Spreads the retries of many clients apart: `ms`, give or take a fifth. */
export function withJitter(ms) {
    return ms * (0.8 + Math.random() * 0.4);
}
