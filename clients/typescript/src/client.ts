// `Sayso`: one server and one inbox's API key. What it sends and reads is the agent API of
// docs/API.md; request and response bodies keep the API's snake_case field names, and the
// client's own options (second arguments, the constructor) are camelCase.

import { invalidArgument } from "./errors.js";
import { resolvedEvents, type EventsOptions } from "./events.js";
import { Transport, type FetchLike } from "./http.js";
import { waitForDecision, type WaitOptions } from "./wait.js";
import { verifyWebhook } from "./webhook.js";
import type {
  AskFields,
  AskHandle,
  AuditEvent,
  Decision,
  DecisionPage,
  Kind,
  ResolvedEvent,
  Status,
} from "./types.js";

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
export type DecisionRef = string | { decision_id: string; expires_at?: string };

/** Seconds `get`-like calls wait for one answer before counting the attempt as lost. */
const REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_RETRY_FOR_MS = 3000;

export class Sayso {
  readonly #http: Transport;
  readonly #retryFor: number;

  constructor(options: SaysoOptions = {}) {
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
  get url(): string {
    return this.#http.base;
  }

  /**
   * Asks a person: creates a decision (kind `bool` unless `fields.kind` says otherwise) and
   * returns its handle at once. `wait(handle)` gets the answer. With an `idempotencyKey` used
   * before (and the same fields), it returns the first handle, `replayed: true`.
   */
  async ask(fields: AskFields, options: AskOptions = {}): Promise<AskHandle> {
    if (fields === null || typeof fields !== "object" || Array.isArray(fields)) {
      throw invalidArgument("ask takes an object of fields: { question, kind, … }");
    }
    if (typeof fields.question !== "string") {
      throw invalidArgument("ask: question is required, a string");
    }
    const key = options.idempotencyKey ?? globalThis.crypto?.randomUUID?.();
    let status = 0;
    const handle = await this.#http.send<AskHandle>({
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
  async todo(text: string, fields: Omit<AskFields, "question" | "kind"> = {}, options: AskOptions = {}): Promise<AskHandle> {
    return this.ask({ ...fields, question: text, kind: "todo" }, options);
  }

  /**
   * Waits for the person: resolves with the Decision once it is `answered`, `declined`,
   * `expired` or `cancelled` (read `status` first, then `outcome`). Rejects with
   * `SaysoTimeoutError` when `timeout` (ms) passes with the decision still pending, and with
   * the signal's reason when `signal` aborts. A dropped connection or a restarting server
   * is retried, so the answer is never lost.
   */
  async wait(decision: DecisionRef, options: WaitOptions = {}): Promise<Decision> {
    const id = idOf(decision);
    const timeout = options.timeout;
    if (timeout !== undefined && (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout < 0)) {
      throw invalidArgument(`wait: timeout must be milliseconds, 0 or more, not ${String(timeout)}`);
    }
    const expiresAt = typeof decision === "object" ? decision.expires_at : undefined;
    return waitForDecision(this.#http, id, expiresAt, options);
  }

  /** The decision as it stands. */
  async get(decision: DecisionRef, options: RequestOptions = {}): Promise<Decision> {
    return this.#read<Decision>(["v1", "decisions", idOf(decision)], undefined, options);
  }

  /** Withdraws a pending decision; it becomes `cancelled`. A decided one is `409 already_resolved`. */
  async cancel(decision: DecisionRef, options: RequestOptions & { reason?: string } = {}): Promise<Decision> {
    return this.#http.send<Decision>({
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
  async list(options: ListOptions = {}): Promise<DecisionPage> {
    const { signal, ...query } = options;
    return this.#read<DecisionPage>(["v1", "decisions"], query, { signal });
  }

  /** A decision's audit trail, oldest first: `created`, `viewed`, `notified`, `answered`, … */
  async auditTrail(decision: DecisionRef, options: RequestOptions = {}): Promise<AuditEvent[]> {
    const page = await this.#read<{ items: AuditEvent[] }>(["v1", "decisions", idOf(decision), "events"], undefined, options);
    return page.items;
  }

  /**
   * The inbox's resolutions as they happen (`GET /v1/events`), one `ResolvedEvent` per
   * decision answered, declined, cancelled or expired; without `lastEventId`, the history
   * comes first. The stream is resumed after its last event whenever the connection ends,
   * so none is missed or repeated. It goes on until the loop breaks or `signal` aborts.
   */
  events(options: EventsOptions = {}): AsyncGenerator<ResolvedEvent> {
    return resolvedEvents(this.#http, options);
  }

  /** `verifyWebhook`, for code that has a client at hand. */
  static verifyWebhook = verifyWebhook;

  #read<T>(path: string[], query: Record<string, string | number | undefined> | undefined, options: RequestOptions): Promise<T> {
    return this.#http.send<T>({
      path,
      query,
      signal: options.signal,
      attemptTimeoutMs: REQUEST_TIMEOUT_MS,
      retry: "safe",
      retryUntil: Date.now() + this.#retryFor,
    });
  }
}

function idOf(decision: DecisionRef): string {
  const id = typeof decision === "string" ? decision : decision?.decision_id;
  if (typeof id !== "string" || id.trim() === "") {
    throw invalidArgument("a decision id is required: the handle ask returned, or its decision_id");
  }
  return id.trim();
}

/** `process.env` where there is one (Node, Deno, Bun); nothing in a browser. */
function environment(): Record<string, string | undefined> {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env ?? {};
}
