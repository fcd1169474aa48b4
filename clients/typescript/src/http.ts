// One sayso server and one inbox's key: builds request URLs, sends requests, turns every
// failure into a SaysoError that says what is wrong, and retries what is worth retrying.

import { SaysoError, invalidArgument, type ErrorDetail } from "./errors.js";
import { abortable, linkedSignal, sleep, withJitter } from "./timing.js";

/** The fetch the client calls; any WHATWG-compatible one will do. */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** Which failures a request may be sent again after. */
export type Retry =
  /** Reading, or a create with an Idempotency-Key: again after any failure that changed nothing for sure or may have. */
  | "safe"
  /** A change: again only when nothing can have happened (connection refused, `503 unavailable`). */
  | "unsafe";

export interface SendOptions {
  method?: "GET" | "POST";
  /** Path segments under the base URL, each escaped: `["v1", "decisions", id]`. */
  path: string[];
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** Give up on one attempt after this long without the whole answer. */
  attemptTimeoutMs?: number;
  retry: Retry;
  /** Stop retrying at this moment (ms since the epoch). */
  retryUntil: number;
  /** Told the status of the 2xx answer returned (a create's 200 is a replay, 201 a new one). */
  onStatus?: (status: number) => void;
}

/** The first pause after a failed attempt, and the longest. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5000;
/** A `Retry-After` longer than this (a daily quota) is not waited out. */
const MAX_RETRY_AFTER_S = 60;

export class Transport {
  readonly base: string;
  readonly #key: string;
  readonly #fetch: FetchLike;

  constructor(url: string, key: string, fetchImpl: FetchLike) {
    this.base = checkBaseUrl(url);
    this.#key = checkKey(key);
    this.#fetch = fetchImpl;
  }

  url(path: string[], query?: Record<string, string | number | undefined>): string {
    let url = this.base + "/" + path.map(encodeURIComponent).join("/");
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined) params.set(k, String(v));
    }
    const q = params.toString();
    if (q) url += "?" + q;
    return url;
  }

  /** Opens a request and returns the response as it starts, for a stream; failures as `send`'s. */
  async open(url: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${this.#key}`);
    try {
      return await this.#fetch(url, { ...init, headers });
    } catch (e) {
      if (init.signal?.aborted) throw init.signal.reason;
      throw this.unreachable(e);
    }
  }

  /** Sends a request, again after passing failures until `retryUntil`; the JSON of a 2xx. */
  async send<T>(opts: SendOptions): Promise<T> {
    let backoff = FIRST_BACKOFF_MS;
    for (;;) {
      let failure: SaysoError;
      try {
        return await this.#attempt<T>(opts);
      } catch (e) {
        if (!(e instanceof SaysoError) || opts.signal?.aborted) throw e;
        failure = e;
      }
      const pause = Math.max(withJitter(backoff), retryPause(failure, opts.retry) ?? Infinity);
      if (!Number.isFinite(pause) || Date.now() + pause >= opts.retryUntil) throw failure;
      await sleep(pause, opts.signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }

  async #attempt<T>(opts: SendOptions): Promise<T> {
    const url = this.url(opts.path, opts.query);
    const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] = "application/json";
    }
    const { signal, done, timedOut } = linkedSignal(opts.signal, opts.attemptTimeoutMs);
    try {
      let resp: Response;
      let text: string;
      try {
        resp = await this.open(url, { method: opts.method ?? "GET", headers, body, signal });
        text = await abortable(resp.text(), signal);
      } catch (e) {
        if (timedOut()) {
          throw new SaysoError(
            `no answer from the sayso server at ${this.base} within ${Math.round((opts.attemptTimeoutMs ?? 0) / 1000)} s`,
            { code: "unreachable", cause: e },
          );
        }
        if (opts.signal?.aborted) throw opts.signal.reason;
        throw e instanceof SaysoError ? e : this.unreachable(e);
      }
      const value = this.read<T>(resp, text, url);
      opts.onStatus?.(resp.status);
      return value;
    } finally {
      done();
    }
  }

  /** The JSON of a 2xx answer; any other answer thrown as the SaysoError it stands for. */
  read<T>(resp: Response, text: string, url: string): T {
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    const type = resp.headers.get("content-type") ?? "no content type";
    if (resp.ok) {
      if (json !== null && typeof json === "object") return json as T;
      throw new SaysoError(
        `${url} answered ${resp.status} with ${type}, not sayso's JSON: is ${this.base} the address of a sayso server?`,
        { status: resp.status, code: "not_sayso" },
      );
    }
    const retryAfter = Number.parseInt(resp.headers.get("retry-after") ?? "", 10);
    const error = (json as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
    if (!error || typeof error.code !== "string") {
      // A proxy's page, another program's 404: the status is all there is to go on.
      const gateway = resp.status === 502 || resp.status === 503 || resp.status === 504;
      const why = gateway
        ? `the sayso server at ${this.base} is not answering: ${url} answered ${resp.status} ${resp.statusText}`.trimEnd()
        : `${url} answered ${resp.status} with ${type}, not sayso's JSON: is ${this.base} the address of a sayso server?`;
      return fail(why, resp.status, gateway ? "unavailable" : "not_sayso", [], retryAfter);
    }
    const code = error.code;
    const details = Array.isArray(error.details) ? (error.details as ErrorDetail[]) : [];
    let message = typeof error.message === "string" ? error.message : `the server answered ${resp.status}`;
    if (details.length > 1) {
      message += details.map((d) => `\n  ${d.path ? `${d.path}: ` : ""}${d.message}`).join("");
    }
    if (code === "unauthorized") {
      message = `the sayso server at ${this.base} refused the API key (key / SAYSO_KEY): ${message}`;
    } else if (resp.status === 404 && message === "no such endpoint") {
      message = `${url}: no such endpoint; is ${this.base} the server's base address, as it serves the pages (no /v1, no other path)?`;
    }
    return fail(message, resp.status, code, details, retryAfter);
  }

  unreachable(e: unknown): SaysoError {
    return new SaysoError(`cannot reach the sayso server at ${this.base}: ${describe(e)}`, {
      code: "unreachable",
      cause: e,
    });
  }
}

function fail(
  message: string,
  status: number,
  code: string,
  details: ErrorDetail[],
  retryAfter: number,
): never {
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
export function retryPause(failure: SaysoError, retry: Retry): number | undefined {
  const after = failure.retryAfter;
  if (failure.status === 429) {
    return after !== undefined && after <= MAX_RETRY_AFTER_S ? after * 1000 : undefined;
  }
  if (failure.status === 503) return (after ?? 0) * 1000;
  if (retry === "unsafe") {
    // Only a connection that was never made is certain to have changed nothing.
    return failure.code === "unreachable" && isRefused(failure.cause) ? 0 : undefined;
  }
  if (failure.code === "unreachable" || failure.status === 502 || failure.status === 504) return 0;
  return undefined;
}

function isRefused(e: unknown): boolean {
  const code = (e as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === "ECONNREFUSED";
}

/** The fetch error and its causes, which say what happened ("connect ECONNREFUSED 127.0.0.1:1"). */
function describe(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let i = 0; cur !== undefined && cur !== null && i < 4; i++) {
    const text = cur instanceof Error ? cur.message : String(cur);
    if (text && !parts.some((p) => p.includes(text))) parts.push(text);
    cur = (cur as { cause?: unknown }).cause;
  }
  return parts.join(": ") || "the connection failed";
}

function checkBaseUrl(raw: string): string {
  if (typeof raw !== "string" || raw.trim() === "") {
    throw invalidArgument("no sayso server URL: pass { url } (e.g. http://127.0.0.1:8080) or set SAYSO_URL");
  }
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
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
    throw invalidArgument(
      `url / SAYSO_URL ${JSON.stringify(raw)} ends in /v1: give the server's base address (${url.origin}${path.slice(0, -3)}); the client adds /v1 itself`,
    );
  }
  if (/\/(d|a|inbox)\/[^/]+$/.test(path)) {
    throw invalidArgument(
      `url / SAYSO_URL ${JSON.stringify(raw)} is a link of the person's pages; give the server's base address (${url.origin})`,
    );
  }
  return url.origin + path;
}

function checkKey(raw: string): string {
  if (typeof raw !== "string" || raw.trim() === "") {
    throw invalidArgument("no API key: pass { key } or set SAYSO_KEY (`sayso key create` on the server makes one; the first run wrote one to first-run.txt)");
  }
  const key = raw.trim();
  if (/\s/.test(key)) throw invalidArgument("the API key (key / SAYSO_KEY) contains white space; copy it again, it looks like sk_…");
  return key;
}
