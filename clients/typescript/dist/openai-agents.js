// sayso/openai-agents: the OpenAI Agents SDK's tool approvals (`needsApproval`, the run's
// interruptions, `state.approve` / `state.reject`) answered by a person through sayso. The
// SDK is not imported: the adapter works on the tools and run state the caller passes in.
import { ApprovalGate } from "./approval.js";
/** The harness name sayso shows the person for this framework. */
export const HARNESS = "openai-agents";
/** sayso approvals for one Agents SDK run (`runId`: the conversation, the same on every resume). */
export function saysoApprovals(sayso, options) {
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
                invoke: async (runContext, input, details) => {
                    const verdict = await gate.check(callOf(tool.name, details?.toolCall?.callId, input));
                    if (!verdict.approved)
                        return verdict.reason;
                    return invoke.call(tool, runContext, input, details);
                },
            };
        },
        async resolve(state) {
            const items = state.getInterruptions().filter((i) => i.type === "tool_approval_item");
            const verdicts = await gate.decideAll(items.map((item) => callOf(item.name ?? String(item.rawItem.name), item.rawItem.callId, item.rawItem.arguments)));
            items.forEach((item, i) => {
                const v = verdicts[i];
                if (v.approved)
                    state.approve(item);
                else
                    state.reject(item, { message: v.reason });
            });
            return verdicts;
        },
    };
}
/** The call as sayso sees it: the SDK's call id, and the arguments parsed from their JSON. */
function callOf(toolName, callId, args) {
    let input = args ?? {};
    if (typeof args === "string") {
        try {
            input = JSON.parse(args);
        }
        catch {
            // Arguments that are not JSON are shown and bound as the text they are.
        }
    }
    return { toolCallId: callId ?? "", toolName, input };
}
