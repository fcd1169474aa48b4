// sayso/ai: the Vercel AI SDK's tool approval (`needsApproval`) answered by a person through
// sayso. The SDK is not imported: the adapter works on the plain objects it passes around
// (tools, model messages), so the package keeps no dependency on it.
import { ApprovalGate } from "./approval.js";
/** The harness name sayso shows the person for this framework. */
export const HARNESS = "ai-sdk";
/** The error a gated tool throws instead of running; the model reads its message. */
export class ToolNotApprovedError extends Error {
    name = "ToolNotApprovedError";
    verdict;
    constructor(verdict) {
        super(verdict.reason);
        this.verdict = verdict;
    }
}
/**
 * sayso approvals for one AI SDK run (`runId`: the conversation, the same on every resume).
 * Gate the tools with `gate`, and after each `generateText`/`streamText` append
 * `await answer(messages)` when it is not null, then call the model again.
 */
export function saysoApprovals(sayso, options) {
    const gate = new ApprovalGate(sayso, HARNESS, options);
    return {
        gate(tools) {
            const gated = {};
            for (const [toolName, tool] of Object.entries(tools)) {
                const execute = tool.execute;
                gated[toolName] = {
                    ...tool,
                    needsApproval: true,
                    ...(execute && {
                        // The SDK runs a tool when the messages say "approved"; the messages are the
                        // agent's to edit, so the tool itself asks sayso whether the person allowed it.
                        execute: async (input, opts) => {
                            const verdict = await gate.check({ toolCallId: opts.toolCallId, toolName, input });
                            if (!verdict.approved)
                                throw new ToolNotApprovedError(verdict);
                            return execute.call(tool, input, opts);
                        },
                    }),
                };
            }
            return gated;
        },
        async answer(messages) {
            const pending = pendingApprovals(messages);
            if (pending.length === 0)
                return null;
            const verdicts = await gate.decideAll(pending);
            return {
                role: "tool",
                content: pending.map((p, i) => ({
                    type: "tool-approval-response",
                    approvalId: p.approvalId,
                    approved: verdicts[i].approved,
                    reason: verdicts[i].reason,
                })),
            };
        },
    };
}
/** The approval requests of `messages` that no later tool message answers, with their calls. */
export function pendingApprovals(messages) {
    const calls = new Map();
    const requests = [];
    const answered = new Set();
    for (const m of messages) {
        if (!Array.isArray(m.content))
            continue;
        for (const part of m.content) {
            if (part?.type === "tool-call")
                calls.set(part.toolCallId, { toolName: part.toolName, input: part.input });
            else if (part?.type === "tool-approval-request")
                requests.push({ approvalId: part.approvalId, toolCallId: part.toolCallId });
            else if (part?.type === "tool-approval-response")
                answered.add(part.approvalId);
        }
    }
    return requests
        .filter((r) => !answered.has(r.approvalId))
        .map((r) => {
        const call = calls.get(r.toolCallId);
        if (!call)
            throw new Error(`approval ${r.approvalId} asks for tool call ${r.toolCallId}, which is not in the messages`);
        return { ...r, ...call };
    });
}
