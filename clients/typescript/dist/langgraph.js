// sayso/langgraph: LangGraph's pause for approval (`interrupt()`, resumed with
// `new Command({ resume })`) answered by a person through sayso. The graph library is not
// imported: the caller passes its `interrupt`, so the package keeps no dependency on it.
import { ApprovalGate, verdictOf } from "./approval.js";
/** The harness name sayso shows the person for this framework. */
export const HARNESS = "langgraph";
/** sayso approvals for LangGraph graphs; the thread id names the run. */
export function saysoApprovals(sayso, options) {
    if (typeof options?.interrupt !== "function") {
        throw new TypeError('interrupt is required: import { interrupt } from "@langchain/langgraph" and pass it');
    }
    const gateFor = (config) => {
        const thread = config?.configurable?.thread_id;
        if (thread === undefined || thread === "") {
            throw new TypeError("the graph runs without configurable.thread_id: sayso approvals need a checkpointer and a thread id");
        }
        return new ApprovalGate(sayso, HARNESS, { runId: String(thread), ttlMinutes: options.ttlMinutes, ttlSeconds: options.ttlSeconds, cwd: options.cwd });
    };
    const waiter = new ApprovalGate(sayso, HARNESS, { runId: "-", timeout: options.timeout });
    const approve = async (call, config) => {
        const gate = gateFor(config);
        // The node runs again from its start on resume: the ask is idempotent, so it finds the
        // decision made the first time instead of asking twice.
        const asked = await gate.request(call);
        if ("approved" in asked)
            return asked;
        options.interrupt({ type: "sayso_approval", decision_id: asked.decision_id, tool_name: call.toolName, tool_input: call.input });
        // Whatever the resume value says (the caller's to write), the person's answer is read here.
        return gate.check(call);
    };
    return {
        approve,
        gate(toolName, fn) {
            return async (input, config) => {
                const verdict = await approve({ toolCallId: config?.toolCall?.id ?? "", toolName, input }, config);
                if (!verdict.approved)
                    return verdict.reason;
                return fn(input, config);
            };
        },
        async answer(interrupts) {
            const ours = (interrupts ?? []).filter((i) => i?.value?.type === "sayso_approval");
            if (ours.length === 0)
                return null;
            const verdicts = await Promise.all(ours.map(async (i) => {
                const { decision, note } = await waiter.waitFor(i.value.decision_id);
                return verdictOf(decision, { toolCallId: "", toolName: i.value.tool_name, input: i.value.tool_input }, note);
            }));
            if (ours.length === 1 && ours[0].id === undefined)
                return verdicts[0];
            return Object.fromEntries(ours.map((i, n) => [i.id ?? String(n), verdicts[n]]));
        },
    };
}
