// sayso/openai-agents: the OpenAI Agents SDK's tool approvals (`needsApproval`, the run's
// interruptions, `state.approve` / `state.reject`) answered by a person through sayso. The
// SDK is not imported: the adapter works on the tools and run state the caller passes in.

import { ApprovalGate, type ApprovalClient, type ApprovalOptions, type ToolCall, type Verdict } from "./approval.js";

export type { ApprovalOptions, Verdict } from "./approval.js";

/** The harness name sayso shows the person for this framework. */
export const HARNESS = "openai-agents";

/** A function tool as `tool()` makes it; only `needsApproval` and `invoke` are touched. */
export interface AgentsFunctionTool {
  type: string;
  name: string;
  invoke: (runContext: any, input: string, details?: { toolCall?: { callId?: string } | undefined; [k: string]: unknown }) => Promise<unknown>;
  needsApproval: unknown;
  [k: string]: unknown;
}

/** An interruption of a run (`result.interruptions`, `state.getInterruptions()`). */
export interface AgentsApprovalItem {
  type: string;
  rawItem: { type: string; callId?: string; name?: string; arguments?: string; [k: string]: unknown };
  name?: string | undefined;
  [k: string]: unknown;
}

/** The parts of a `RunState` the adapter uses. */
export interface AgentsRunState {
  getInterruptions(): AgentsApprovalItem[];
  approve(item: any, options?: { alwaysApprove?: boolean }): void;
  reject(item: any, options?: { alwaysReject?: boolean; message?: string }): void;
}

export interface SaysoApprovals {
  /** `tool` gated: it always needs approval, and asks sayso whether it was allowed before it runs. */
  gate<T extends AgentsFunctionTool>(tool: T): T;
  /**
   * Answers the state's interruptions: asks the person about all of them at once through
   * sayso (or finds the questions already asked for those calls), waits for every answer,
   * and approves or rejects each in `state` with the
   * reason. Run the agent again with `state` afterwards.
   */
  resolve(state: AgentsRunState): Promise<Verdict[]>;
}

/** sayso approvals for one Agents SDK run (`runId`: the conversation, the same on every resume). */
export function saysoApprovals(sayso: ApprovalClient, options: ApprovalOptions): SaysoApprovals {
  const gate = new ApprovalGate(sayso, HARNESS, options);
  return {
    gate(tool) {
      if (tool?.type !== "function" || typeof tool.invoke !== "function") {
        throw new TypeError("gate takes a function tool, as tool({ name, parameters, execute }) makes it");
      }
      const invoke = tool.invoke;
      return {
        ...tool,
        needsApproval: async () => true,
        // The SDK runs a call its run state marks approved; that state is serialized and the
        // agent's to edit, so the tool itself asks sayso whether the person allowed it.
        invoke: async (runContext: unknown, input: string, details?: { toolCall?: { callId?: string } }) => {
          const verdict = await gate.check(callOf(tool.name, details?.toolCall?.callId, input));
          if (!verdict.approved) return verdict.reason;
          return invoke.call(tool, runContext, input, details);
        },
      };
    },

    async resolve(state) {
      const items = state.getInterruptions().filter((i) => i.type === "tool_approval_item");
      const verdicts = await gate.decideAll(
        items.map((item) => callOf(item.name ?? String(item.rawItem.name), item.rawItem.callId, item.rawItem.arguments)),
      );
      items.forEach((item, i) => {
        const v = verdicts[i]!;
        if (v.approved) state.approve(item);
        else state.reject(item, { message: v.reason });
      });
      return verdicts;
    },
  };
}

/** The call as sayso sees it: the SDK's call id, and the arguments parsed from their JSON. */
function callOf(toolName: string, callId: string | undefined, args: string | undefined): ToolCall {
  let input: unknown = args ?? {};
  if (typeof args === "string") {
    try {
      input = JSON.parse(args);
    } catch {
      // Arguments that are not JSON are shown and bound as the text they are.
    }
  }
  return { toolCallId: callId ?? "", toolName, input };
}
