// One sayso server and one inbox's key: builds request URLs, sends requests, turns every
// failure into a SaysoError that says what is wrong, and retries what is worth retrying.
import { SaysoError, invalidArgument } from "./errors.js";
import { abortable, linkedSignal, sleep, withJitter } from "./timing.js";
/** The first pause after a failed attempt, and the longest. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5000;
/** A `Retry-After` longer than this (a daily quota) is not waited out. */
const MAX_RETRY_AFTER_S = 60;
export class Transport {
    base;
    #key;
    #fetch;
    constructor(url, key, fetchImpl) {
        this.base = checkBaseUrl(url);
        this.#key = checkKey(key);
        this.#fetch = fetchImpl;
    }
    url(path, query) {
        let url = this.base + "/" + path.map(encodeURIComponent).join("/");
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(query ?? {})) {
            if (v !== undefined)
                params.set(k, String(v));
        }
        const q = params.toString();
        if (q)
            url += "?" + q;
        return url;
    }
    /** Opens a request and returns the response as it starts, for a stream; failures as `send`'s. */
    async open(url, init) {
        const headers = new Headers(init.headers);
        headers.set("authorization", `Bearer ${this.#key}`);
        try {
            return await this.#fetch(url, { ...init, headers });
        }
        catch (e) {
            if (init.signal?.aborted)
                throw init.signal.reason;
            throw this.unreachable(e);
        }
    }
    /** Sends a request, again after passing failures until `retryUntil`; the JSON of a 2xx. */
    async send(opts) {
        let backoff = FIRST_BACKOFF_MS;
        for (;;) {
            let failure;
            try {
                return await this.#attempt(opts);
            }
            catch (e) {
                if (!(e instanceof SaysoError) || opts.signal?.aborted)
                    throw e;
                failure = e;
            }
            const pause = Math.max(withJitter(backoff), retryPause(failure, opts.retry) ?? Infinity);
            if (!Number.isFinite(pause) || Date.now() + pause >= opts.retryUntil)
                throw failure;
            await sleep(pause, opts.signal);
            backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
    }
    async #attempt(opts) {
        const url = this.url(opts.path, opts.query);
        const headers = { accept: "application/json", ...opts.headers };
        let body;
        if (opts.body !== undefined) {
            body = JSON.stringify(opts.body);
            headers["content-type"] = "application/json";
        }
        const { signal, done, timedOut } = linkedSignal(opts.signal, opts.attemptTimeoutMs);
        try {
            let resp;
            let text;
            try {
                resp = await this.open(url, { method: opts.method ?? "GET", headers, body, signal });
                text = await abortable(resp.text(), signal);
            }
            catch (e) {
                if (timedOut()) {
                    throw new SaysoError(`no answer from the sayso server at ${this.base} within ${Math.round((opts.attemptTimeoutMs ?? 0) / 1000)} s`, { code: "unreachable", cause: e });
                }
                if (opts.signal?.aborted)
                    throw opts.signal.reason;
                throw e instanceof SaysoError ? e : this.unreachable(e);
            }
            const value = this.read(resp, text, url);
            opts.onStatus?.(resp.status);
            return value;
        }
        finally {
            done();
        }
    }
    /** The JSON of a 2xx answer; any other answer thrown as the SaysoError it stands for. */
    read(resp, text, url) {
        let json;
        try {
            json = text === "" ? undefined : JSON.parse(text);
        }
        catch {
            json = undefined;
        }
        const type = resp.headers.get("content-type") ?? "no content type";
        if (resp.ok) {
            if (json !== null && typeof json === "object")
                return json;
            throw new SaysoError(`${url} answered ${resp.status} with ${type}, not sayso's JSON: is ${this.base} the address of a sayso server?`, { status: resp.status, code: "not_sayso" });
        }
        const retryAfter = Number.parseInt(resp.headers.get("retry-after") ?? "", 10);
        const error = json?.error;
        if (!error || typeof error.code !== "string") {
            // A proxy's page, another program's 404: the status is all there is to go on.
            const gateway = resp.status === 502 || resp.status === 503 || resp.status === 504;
            const why = gateway
                ? `the sayso server at ${this.base} is not answering: ${url} answered ${resp.status} ${resp.statusText}`.trimEnd()
                : `${url} answered ${resp.status} with ${type}, not sayso's JSON: is ${this.base} the address of a sayso server?`;
            return fail(why, resp.status, gateway ? "unavailable" : "not_sayso", [], retryAfter);
        }
        const code = error.code;
        const details = Array.isArray(error.details) ? error.details : [];
        let message = typeof error.message === "string" ? error.message : `the server answered ${resp.status}`;
        if (details.length > 1) {
            message += details.map((d) => `\n  ${d.path ? `${d.path}: ` : ""}${d.message}`).join("");
        }
        if (code === "unauthorized") {
            message = `the sayso server at ${this.base} refused the API key (key / SAYSO_KEY): ${message}`;
        }
        else if (resp.status === 404 && message === "no such endpoint") {
            message = `${url}: no such endpoint; is ${this.base} the server's base address, as it serves the pages (no /v1, no other path)?`;
        }
        return fail(message, resp.status, code, details, retryAfter);
    }
    unreachable(e) {
        return new SaysoError(`cannot reach the sayso server at ${this.base}: ${describe(e)}`, {
            code: "unreachable",
            cause: e,
        });
    }
}
function fail(message, status, code, details, retryAfter) {
    throw new SaysoError(message, {
        status,
        code,
        details,
        retryAfter: Number.isFinite(retryAfter) ? retryAfter : undefined,
    });
}
/**
 * How long to wait before sending again after `failure`, or undefined when it is final.
 * A `4xx` is final (the request itself is wrong, or the key), except a short `429`.
 */
export function retryPause(failure, retry) {
    const after = failure.retryAfter;
    if (failure.status === 429) {
        return after !== undefined && after <= MAX_RETRY_AFTER_S ? after * 1000 : undefined;
    }
    if (failure.status === 503)
        return (after ?? 0) * 1000;
    if (retry === "unsafe") {
        // Only a connection that was never made is certain to have changed nothing.
        return failure.code === "unreachable" && isRefused(failure.cause) ? 0 : undefined;
    }
    if (failure.code === "unreachable" || failure.status === 502 || failure.status === 504)
        return 0;
    return undefined;
}
function isRefused(e) {
    const code = e?.cause?.code;
    return code === "ECONNREFUSED";
}
/** The fetch error and its causes, which say what happened ("connect ECONNREFUSED 127.0.0.1:1"). */
function describe(e) {
    const parts = [];
    let cur = e;
    for (let i = 0; cur !== undefined && cur !== null && i < 4; i++) {
        const text = cur instanceof Error ? cur.message : String(cur);
        if (text && !parts.some((p) => p.includes(text)))
            parts.push(text);
        cur = cur.cause;
    }
    return parts.join(": ") || "the connection failed";
}
function checkBaseUrl(raw) {
    if (typeof raw !== "string" || raw.trim() === "") {
        throw invalidArgument("no sayso server URL: pass { url } (e.g. http://127.0.0.1:8080) or set SAYSO_URL");
    }
    let url;
    try {
        url = new URL(raw.trim());
    }
    catch {
        throw invalidArgument(`url / SAYSO_URL ${JSON.stringify(raw)} is not a URL; give the server's address, e.g. http://127.0.0.1:8080`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw invalidArgument(`url / SAYSO_URL must be an http:// or https:// address, not ${JSON.stringify(raw)}`);
    }
    if (url.search || url.hash) {
        throw invalidArgument(`url / SAYSO_URL ${JSON.stringify(raw)} has a query or fragment; give the server's base address only`);
    }
    const path = url.pathname.replace(/\/+$/, "");
    if (/\/v1$/i.test(path)) {
        throw invalidArgument(`url / SAYSO_URL ${JSON.stringify(raw)} ends in /v1: give the server's base address (${url.origin}${path.slice(0, -3)}); the client adds /v1 itself`);
    }
    if (/\/(d|a|inbox)\/[^/]+$/.test(path)) {
        throw invalidArgument(`url / SAYSO_URL ${JSON.stringify(raw)} is a link of the person's pages; give the server's base address (${url.origin})`);
    }
    return url.origin + path;
}
function checkKey(raw) {
    if (typeof raw !== "string" || raw.trim() === "") {
        throw invalidArgument("no API key: pass { key } or set SAYSO_KEY (`sayso key create` on the server makes one; the first run wrote one to first-run.txt)");
    }
    const key = raw.trim();
    if (/\s/.test(key))
        throw invalidArgument("the API key (key / SAYSO_KEY) contains white space; copy it again, it looks like sk_…");
    return key;
}
