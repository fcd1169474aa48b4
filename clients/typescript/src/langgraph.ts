// sayso/langgraph: LangGraph's pause for approval (`interrupt()`, resumed with
// `new Command({ resume })`) answered by a person through sayso. The graph library is not
// imported: the caller passes its `interrupt`, so the package keeps no dependency on it.

import { ApprovalGate, type ApprovalClient, type ToolCall, type Verdict, verdictOf } from "./approval.js";

export type { Verdict } from "./approval.js";

/** The harness name sayso shows the person for this framework. */
export const HARNESS = "langgraph";

/** What the adapter's interrupts carry (`result.__interrupt__[i].value`). */
export interface SaysoInterrupt {
  type: "sayso_approval";
  decision_id: string;
  tool_name: string;
  tool_input: unknown;
}

/** The part of a LangGraph config the adapter reads: the thread, and the tool call. */
export interface GraphConfig {
  configurable?: { thread_id?: string | number; [k: string]: unknown };
  toolCall?: { id?: string; name?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export interface LangGraphApprovalOptions {
  /** `interrupt` from `@langchain/langgraph`. */
  interrupt: (value: SaysoInterrupt) => unknown;
  /** How long the person has, in minutes (default 60). Keep it the same across resumes. */
  ttlMinutes?: number;
  /** Or in seconds (10 or more), instead of `ttlMinutes`. */
  ttlSeconds?: number;
  /** How long `answer` waits for the person, in ms (default: until the approval expires). */
  timeout?: number;
  cwd?: string;
}

export interface SaysoApprovals {
  /**
   * `fn`, a tool's function, gated: before it runs, the call is put to the person and the
   * graph pauses (an interrupt) until `answer` resumes it; then it runs only if sayso says the
   * person allowed these arguments, and otherwise returns the reason to the model.
   */
  gate<I, R>(toolName: string, fn: (input: I, config: GraphConfig) => R | Promise<R>): (input: I, config: GraphConfig) => Promise<R | string>;
  /**
   * Inside a node or tool: asks for `call` (once per thread and call id), pauses the graph,
   * and on resume returns the verdict read from sayso, never from the resume value.
   */
  approve(call: ToolCall, config: GraphConfig): Promise<Verdict>;
  /**
   * Outside the graph: waits for the person on each of the adapter's pending interrupts and
   * returns the value for `new Command({ resume })` (keyed by interrupt id), or null when
   * none of them is the adapter's.
   */
  answer(interrupts: ReadonlyArray<{ id?: string; value?: unknown }> | undefined): Promise<Record<string, Verdict> | Verdict | null>;
}

/** sayso approvals for LangGraph graphs; the thread id names the run. */
export function saysoApprovals(sayso: ApprovalClient, options: LangGraphApprovalOptions): SaysoApprovals {
  if (typeof options?.interrupt !== "function") {
    throw new TypeError('interrupt is required: import { interrupt } from "@langchain/langgraph" and pass it');
  }
  const gateFor = (config: GraphConfig) => {
    const thread = config?.configurable?.thread_id;
    if (thread === undefined || thread === "") {
      throw new TypeError("the graph runs without configurable.thread_id: sayso approvals need a checkpointer and a thread id");
    }
    return new ApprovalGate(sayso, HARNESS, { runId: String(thread), ttlMinutes: options.ttlMinutes, ttlSeconds: options.ttlSeconds, cwd: options.cwd });
  };
  const waiter = new ApprovalGate(sayso, HARNESS, { runId: "-", timeout: options.timeout });

  const approve = async (call: ToolCall, config: GraphConfig): Promise<Verdict> => {
    const gate = gateFor(config);
    // The node runs again from its start on resume: the ask is idempotent, so it finds the
    // decision made the first time instead of asking twice.
    const asked = await gate.request(call);
    if ("approved" in asked) return asked;
    options.interrupt({ type: "sayso_approval", decision_id: asked.decision_id, tool_name: call.toolName, tool_input: call.input });
    // Whatever the resume value says (the caller's to write), the person's answer is read here.
    return gate.check(call);
  };

  return {
    approve,

    gate(toolName, fn) {
      return async (input, config) => {
        const verdict = await approve({ toolCallId: config?.toolCall?.id ?? "", toolName, input }, config);
        if (!verdict.approved) return verdict.reason;
        return fn(input, config);
      };
    },

    async answer(interrupts) {
      const ours = (interrupts ?? []).filter((i): i is { id?: string; value: SaysoInterrupt } => (i?.value as SaysoInterrupt)?.type === "sayso_approval");
      if (ours.length === 0) return null;
      const verdicts = await Promise.all(
        ours.map(async (i) => {
          const { decision, note } = await waiter.waitFor(i.value.decision_id);
          return verdictOf(decision, { toolCallId: "", toolName: i.value.tool_name, input: i.value.tool_input }, note);
        }),
      );
      if (ours.length === 1 && ours[0]!.id === undefined) return verdicts[0]!;
      return Object.fromEntries(ours.map((i, n) => [i.id ?? String(n), verdicts[n]!]));
    },
  };
}
