// `Sayso`: one server and one inbox's API key. What it sends and reads is the agent API of
// docs/API.md; request and response bodies keep the API's snake_case field names, and the
// client's own options (second arguments, the constructor) are camelCase.
import { invalidArgument } from "./errors.js";
import { resolvedEvents } from "./events.js";
import { Transport } from "./http.js";
import { waitForDecision } from "./wait.js";
import { verifyWebhook } from "./webhook.js";
/** Seconds `get`-like calls wait for one answer before counting the attempt as lost. */
const REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_RETRY_FOR_MS = 3000;
export class Sayso {
    #http;
    #retryFor;
    constructor(options = {}) {
        const env = environment();
        const fetchImpl = options.fetch ?? globalThis.fetch?.bind(globalThis);
        if (typeof fetchImpl !== "function") {
            throw invalidArgument("no fetch in this runtime: pass { fetch } (Node 20 and later have one)");
        }
        this.#http = new Transport(options.url ?? env.SAYSO_URL ?? "", options.key ?? env.SAYSO_KEY ?? "", fetchImpl);
        const retryFor = options.retryFor ?? DEFAULT_RETRY_FOR_MS;
        if (!Number.isFinite(retryFor) || retryFor < 0) {
            throw invalidArgument(`retryFor must be a number of milliseconds, 0 or more, not ${String(retryFor)}`);
        }
        this.#retryFor = retryFor;
    }
    /** The server's base address, as the requests use it. */
    get url() {
        return this.#http.base;
    }
    /**
     * Asks a person: creates a decision (kind `bool` unless `fields.kind` says otherwise) and
     * returns its handle at once. `wait(handle)` gets the answer. With an `idempotencyKey` used
     * before (and the same fields), it returns the first handle, `replayed: true`.
     */
    async ask(fields, options = {}) {
        if (fields === null || typeof fields !== "object" || Array.isArray(fields)) {
            throw invalidArgument("ask takes an object of fields: { question, kind, … }");
        }
        if (typeof fields.question !== "string") {
            throw invalidArgument("ask: question is required, a string");
        }
        const key = options.idempotencyKey ?? globalThis.crypto?.randomUUID?.();
        let status = 0;
        const handle = await this.#http.send({
            method: "POST",
            path: ["v1", "decisions"],
            body: { kind: "bool", ...fields },
            headers: key === undefined ? {} : { "idempotency-key": key },
            signal: options.signal,
            attemptTimeoutMs: REQUEST_TIMEOUT_MS,
            // With a key a second attempt returns the first handle; without one it could ask twice.
            retry: key === undefined ? "unsafe" : "safe",
            retryUntil: Date.now() + this.#retryFor,
            onStatus: (s) => (status = s),
        });
        return { ...handle, replayed: status === 200 };
    }
    /** Gives the person a task (kind `todo`); the outcome is `"done"` or `"skipped"`. */
    async todo(text, fields = {}, options = {}) {
        return this.ask({ ...fields, question: text, kind: "todo" }, options);
    }
    /**
     * Waits for the person: resolves with the Decision once it is `answered`, `declined`,
     * `expired` or `cancelled` (read `status` first, then `outcome`). Rejects with
     * `SaysoTimeoutError` when `timeout` (ms) passes with the decision still pending, and with
     * the signal's reason when `signal` aborts. A dropped connection or a restarting server
     * is retried, so the answer is never lost.
     */
    async wait(decision, options = {}) {
        const id = idOf(decision);
        const timeout = options.timeout;
        if (timeout !== undefined && (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout < 0)) {
            throw invalidArgument(`wait: timeout must be milliseconds, 0 or more, not ${String(timeout)}`);
        }
        const expiresAt = typeof decision === "object" ? decision.expires_at : undefined;
        return waitForDecision(this.#http, id, expiresAt, options);
    }
    /** The decision as it stands. */
    async get(decision, options = {}) {
        return this.#read(["v1", "decisions", idOf(decision)], undefined, options);
    }
    /** Withdraws a pending decision; it becomes `cancelled`. A decided one is `409 already_resolved`. */
    async cancel(decision, options = {}) {
        return this.#http.send({
            method: "POST",
            path: ["v1", "decisions", idOf(decision), "cancel"],
            body: options.reason === undefined ? {} : { reason: options.reason },
            signal: options.signal,
            attemptTimeoutMs: REQUEST_TIMEOUT_MS,
            retry: "unsafe",
            retryUntil: Date.now() + this.#retryFor,
        });
    }
    /** One page of the inbox's decisions, newest first. */
    async list(options = {}) {
        const { signal, ...query } = options;
        return this.#read(["v1", "decisions"], query, { signal });
    }
    /** A decision's audit trail, oldest first: `created`, `viewed`, `notified`, `answered`, … */
    async auditTrail(decision, options = {}) {
        const page = await this.#read(["v1", "decisions", idOf(decision), "events"], undefined, options);
        return page.items;
    }
    /**
     * The inbox's resolutions as they happen (`GET /v1/events`), one `ResolvedEvent` per
     * decision answered, declined, cancelled or expired; without `lastEventId`, the history
     * comes first. The stream is resumed after its last event whenever the connection ends,
     * so none is missed or repeated. It goes on until the loop breaks or `signal` aborts.
     */
    events(options = {}) {
        return resolvedEvents(this.#http, options);
    }
    /** `verifyWebhook`, for code that has a client at hand. */
    static verifyWebhook = verifyWebhook;
    #read(path, query, options) {
        return this.#http.send({
            path,
            query,
            signal: options.signal,
            attemptTimeoutMs: REQUEST_TIMEOUT_MS,
            retry: "safe",
            retryUntil: Date.now() + this.#retryFor,
        });
    }
}
function idOf(decision) {
    const id = typeof decision === "string" ? decision : decision?.decision_id;
    if (typeof id !== "string" || id.trim() === "") {
        throw invalidArgument("a decision id is required: the handle ask returned, or its decision_id");
    }
    return id.trim();
}
/** `process.env` where there is one (Node, Deno, Bun); nothing in a browser. */
function environment() {
    const proc = globalThis.process;
    return proc?.env ?? {};
}
