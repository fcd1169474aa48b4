// sayso/ai: the Vercel AI SDK's tool approval (`needsApproval`) answered by a person through
// sayso. The SDK is not imported: the adapter works on the plain objects it passes around
// (tools, model messages), so the package keeps no dependency on it.

import { ApprovalGate, type ApprovalClient, type ApprovalOptions, type Verdict } from "./approval.js";

export type { ApprovalOptions, Verdict } from "./approval.js";

/** The harness name sayso shows the person for this framework. */
export const HARNESS = "ai-sdk";

/** A tool as the AI SDK defines it; only `execute` and `needsApproval` are touched. */
export interface AiTool {
  execute?: (input: any, options: { toolCallId: string; [k: string]: unknown }) => unknown;
  needsApproval?: unknown;
  [k: string]: unknown;
}

/** A model message as the AI SDK keeps them (`result.response.messages`). */
export interface AiMessage {
  role: string;
  content: unknown;
  [k: string]: unknown;
}

/** The tool message answering the SDK's approval requests, to append to the messages. */
export interface ApprovalResponses {
  role: "tool";
  content: Array<{ type: "tool-approval-response"; approvalId: string; approved: boolean; reason: string }>;
}

/** The error a gated tool throws instead of running; the model reads its message. */
export class ToolNotApprovedError extends Error {
  override name = "ToolNotApprovedError";
  readonly verdict: Verdict;
  constructor(verdict: Verdict) {
    super(verdict.reason);
    this.verdict = verdict;
  }
}

export interface SaysoApprovals {
  /** `tools` with every one gated: `needsApproval`, and a check with sayso before it runs. */
  gate<T extends Record<string, AiTool>>(tools: T): T;
  /**
   * Answers the approval requests in `messages` that have no response yet: asks the person
   * about all of them at once through sayso (or finds the questions already asked for those
   * calls), then waits for every answer. Returns the
   * tool message to append, or null when nothing waits for an answer.
   */
  answer(messages: readonly AiMessage[]): Promise<ApprovalResponses | null>;
}

/**
 * sayso approvals for one AI SDK run (`runId`: the conversation, the same on every resume).
 * Gate the tools with `gate`, and after each `generateText`/`streamText` append
 * `await answer(messages)` when it is not null, then call the model again.
 */
export function saysoApprovals(sayso: ApprovalClient, options: ApprovalOptions): SaysoApprovals {
  const gate = new ApprovalGate(sayso, HARNESS, options);
  return {
    gate(tools) {
      const gated: Record<string, AiTool> = {};
      for (const [toolName, tool] of Object.entries(tools)) {
        const execute = tool.execute;
        gated[toolName] = {
          ...tool,
          needsApproval: true,
          ...(execute && {
            // The SDK runs a tool when the messages say "approved"; the messages are the
            // agent's to edit, so the tool itself asks sayso whether the person allowed it.
            execute: async (input: unknown, opts: { toolCallId: string; [k: string]: unknown }) => {
              const verdict = await gate.check({ toolCallId: opts.toolCallId, toolName, input });
              if (!verdict.approved) throw new ToolNotApprovedError(verdict);
              return execute.call(tool, input, opts);
            },
          }),
        };
      }
      return gated as typeof tools;
    },

    async answer(messages) {
      const pending = pendingApprovals(messages);
      if (pending.length === 0) return null;
      const verdicts = await gate.decideAll(pending);
      return {
        role: "tool",
        content: pending.map((p, i) => ({
          type: "tool-approval-response",
          approvalId: p.approvalId,
          approved: verdicts[i]!.approved,
          reason: verdicts[i]!.reason,
        })),
      };
    },
  };
}

/** The approval requests of `messages` that no later tool message answers, with their calls. */
export function pendingApprovals(messages: readonly AiMessage[]): Array<{ approvalId: string; toolCallId: string; toolName: string; input: unknown }> {
  const calls = new Map<string, { toolName: string; input: unknown }>();
  const requests: Array<{ approvalId: string; toolCallId: string }> = [];
  const answered = new Set<string>();
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const part of m.content as Array<Record<string, any>>) {
      if (part?.type === "tool-call") calls.set(part.toolCallId, { toolName: part.toolName, input: part.input });
      else if (part?.type === "tool-approval-request") requests.push({ approvalId: part.approvalId, toolCallId: part.toolCallId });
      else if (part?.type === "tool-approval-response") answered.add(part.approvalId);
    }
  }
  return requests
    .filter((r) => !answered.has(r.approvalId))
    .map((r) => {
      const call = calls.get(r.toolCallId);
      if (!call) throw new Error(`approval ${r.approvalId} asks for tool call ${r.toolCallId}, which is not in the messages`);
      return { ...r, ...call };
    });
}
