// A framework's paused tool call as a sayso approval (docs/API.md, "Approvals"), and the
// person's answer as a verdict the framework adapters (ai.ts, …) feed back. Nothing here
// holds an answer capability: the adapter asks with the agent's key and only reads.

import type { Sayso } from "./client.js";
import { SaysoError, SaysoTimeoutError } from "./errors.js";
import type { AskFields, Decision } from "./types.js";

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

/** The approval label that lets a call run. */
const ALLOW = "Allow";
/** The cancel reason the server reads as "the agent stopped waiting" (docs/API.md, "Lifecycle"). */
const ABANDONED = "abandoned";
/** The server's bound on an approval's session id. */
const MAX_SESSION_CHARS = 200;

/**
 * Asks sayso for a framework's tool calls and reads the answers back. The approval's
 * idempotency key is the framework's call id within the run, and the create body holds the
 * canonical arguments: asking again for the same call returns the same decision (a resumed
 * run never asks twice), while the same call id with other arguments is refused by the
 * server, so an Allow given for one call's arguments never lets another's through.
 */
export class ApprovalGate {
  readonly #sayso: ApprovalClient;
  readonly #harness: string;
  readonly #options: ApprovalOptions;

  constructor(sayso: ApprovalClient, harness: string, options: ApprovalOptions) {
    if (!sayso || typeof sayso.ask !== "function") throw new TypeError("a sayso client is required: new Sayso({ url, key })");
    if (typeof options?.runId !== "string" || options.runId === "") {
      throw new TypeError("runId is required: the run, thread or conversation id, the same on every resume");
    }
    this.#sayso = sayso;
    this.#harness = harness;
    this.#options = options;
  }

  /** Asks (or finds the ask already made for this call) and waits for the person. */
  async decide(call: ToolCall): Promise<Verdict> {
    return (await this.decideAll([call]))[0]!;
  }

  /**
   * The calls of one model step put to the person together: every approval is made (or
   * found) before any is waited on, so the person sees the whole step at once (they share
   * the run's session, which the feed groups) and answers them in any order.
   */
  async decideAll(calls: readonly ToolCall[]): Promise<Verdict[]> {
    const asked = await Promise.all(calls.map((c) => this.request(c)));
    return Promise.all(
      asked.map(async (a, i) => {
        if ("approved" in a) return a;
        const { decision, note } = await this.waitFor(a.decision_id);
        return verdictOf(decision, calls[i]!, note);
      }),
    );
  }

  /**
   * Waits for a decision to end, up to `timeout`; past it the decision is cancelled, so the
   * denial the framework hears is the server's too, and a resume later cannot find an Allow
   * given after the agent stopped waiting.
   */
  async waitFor(decisionId: string): Promise<{ decision: Decision; note?: string }> {
    try {
      return { decision: await this.#sayso.wait(decisionId, { timeout: this.#options.timeout }) };
    } catch (e) {
      if (!(e instanceof SaysoTimeoutError)) throw e;
      // Withdrawn as `abandoned`: the person's page then says an answer changes nothing now.
      const note = `no answer within ${Math.round((this.#options.timeout ?? 0) / 1000)} s`;
      return { decision: await this.#cancel(decisionId, "abandoned"), note };
    }
  }

  /**
   * The decision as it stands, without waiting: what a tool checks just before it runs, so
   * that state the agent can edit (a message saying "approved", a resume value) counts for
   * nothing; only the person's Allow of these exact arguments does. The check finds the
   * approval asked when the run paused; when it has to make it, the call never paused for
   * the person, and when it is still pending, the run went on without the answer: either
   * way the call is denied and the approval withdrawn as abandoned, so nothing stays on the
   * person's phone that no one will act on.
   */
  async check(call: ToolCall): Promise<Verdict> {
    const asked = await this.request(call);
    if ("approved" in asked) return asked;
    const id = asked.decision_id;
    const not = (why: string): Verdict => ({ decisionId: id, approved: false, reason: `sayso: ${call.toolName} was not run: ${why}` });
    if (!asked.replayed) {
      await this.withdraw(id);
      return not("no approval was asked for this call before it ran");
    }
    let decision = await this.#sayso.get(id);
    if (decision.status === "pending") {
      decision = await this.withdraw(id);
      if (decision.status === "cancelled") return not("the person has not answered yet");
    }
    return verdictOf(decision, call);
  }

  /**
   * Withdraws an approval nothing will act on, as `abandoned`: the person's page says the
   * agent stopped waiting. An answer that came first stands, and is returned.
   */
  withdraw(decisionId: string): Promise<Decision> {
    return this.#cancel(decisionId, ABANDONED);
  }

  async #cancel(decisionId: string, reason: string): Promise<Decision> {
    try {
      return await this.#sayso.cancel(decisionId, { reason });
    } catch (c) {
      // Answered in the meantime: the answer stands.
      if (c instanceof SaysoError && c.code === "already_resolved") return this.#sayso.get(decisionId);
      throw c;
    }
  }

  /** The idempotency key of a call: the harness, the run and the framework's call id. */
  keyOf(call: ToolCall): string {
    const key = `${this.#harness}:${this.#options.runId}:${call.toolCallId}`;
    if (key.length > 255) throw new TypeError(`the approval key ${JSON.stringify(key.slice(0, 60))}… is over 255 characters: use a shorter runId`);
    return key;
  }

  /**
   * Asks, or finds the ask already made for this call: the decision's id, or a denial when
   * this call id was already put to the person with other arguments.
   */
  async request(call: ToolCall): Promise<{ decision_id: string; replayed: boolean } | Verdict> {
    if (typeof call.toolCallId !== "string" || call.toolCallId === "") {
      throw new TypeError(`the ${call.toolName} call has no id: the framework's tool-call id makes the approval's key`);
    }
    try {
      return await this.#sayso.ask(this.#body(call), { idempotencyKey: this.keyOf(call) });
    } catch (e) {
      if (e instanceof SaysoError && e.code === "idempotency_mismatch") {
        return {
          approved: false,
          reason: `sayso: ${call.toolName} was not run: call ${call.toolCallId} was put to the person with other arguments`,
        };
      }
      throw e;
    }
  }

  /** The create body; the same call always gives the same body (the server compares them). */
  #body(call: ToolCall): AskFields {
    const input = canonical(call.input);
    const toolInput = input !== null && typeof input === "object" && !Array.isArray(input) ? input : { input };
    return {
      question: `${this.#harness} agent wants to run ${call.toolName}`,
      kind: "choose",
      options: [ALLOW, "Deny"],
      allow_other: false,
      ...(this.#options.ttlSeconds !== undefined ? { ttl_seconds: this.#options.ttlSeconds } : { ttl_minutes: this.#options.ttlMinutes ?? 60 }),
      metadata: { run_id: this.#options.runId, tool_call_id: call.toolCallId },
      approval: {
        harness: this.#harness,
        tool_name: call.toolName,
        tool_input: toolInput,
        // The run's calls share a session: the feed groups them, one page answers them all.
        session_id: Array.from(this.#options.runId).slice(0, MAX_SESSION_CHARS).join(""),
        ...(this.#options.cwd ? { cwd: this.#options.cwd } : {}),
      },
    };
  }
}

/**
 * The verdict a decision gives for `call`: Allow of this very tool, or a denial saying why
 * (`note`: why the adapter cancelled it, which the decision does not carry).
 */
export function verdictOf(d: Decision, call: ToolCall, note?: string): Verdict {
  const base = { decisionId: d.decision_id };
  const not = (why: string): Verdict => ({ ...base, approved: false, reason: `sayso: ${call.toolName} was not run: ${why}` });
  if (d.approval && d.approval.tool_name !== call.toolName) {
    return not(`the approval is for ${d.approval.tool_name}, not ${call.toolName}`);
  }
  switch (d.status) {
    case "answered":
      if (d.outcome === ALLOW && d.outcome_source !== "default") {
        return { ...base, approved: true, reason: `sayso: the person allowed ${call.toolName}${d.remark ? `: ${d.remark}` : ""}` };
      }
      return not(`the person denied it${d.remark ? `: ${d.remark}` : ""}`);
    case "declined":
      return not(`the person declined to answer${d.remark ? `: ${d.remark}` : ""}`);
    case "expired":
      return not("the approval expired with no answer");
    case "cancelled":
      return not(`the approval was cancelled${note ? `: ${note}` : ""}`);
    default:
      return not("the person has not answered yet");
  }
}

/** `value` with every object's keys sorted, as JSON would carry it. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = canonical(v);
    }
    return out;
  }
  return value === undefined ? null : value;
}
