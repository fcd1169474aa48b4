// sayso/langgraph: LangGraph's pause for approval (`interrupt()`, resumed with
// `new Command({ resume })`) answered by a person through sayso. The graph library is not
// imported: the caller passes its `interrupt`, so the package keeps no dependency on it.
//
// LangGraph runs a node again from its start on every resume, and keeps none of its work when
// any part of it interrupts: a tool that ran before a sibling call of the same node paused
// would run again on the next resume. So no gated call runs while any call of its step is
// undecided: the calls of a step are asked together, read together, and either all are
// decided (each runs or is denied, once) or the node pauses for the undecided ones.
import { ApprovalGate, verdictOf } from "./approval.js";
/** The harness name sayso shows the person for this framework. */
export const HARNESS = "langgraph";
/** More resume values than any node run can hold: past them, the node is not LangGraph's. */
const MAX_RESUMES = 10_000;
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
    const gatedTools = new Set();
    // One read per node run: the gates of one ToolNode get the same state object, and reading
    // the step once for all of them makes them agree on whether it is decided.
    const reads = new WeakMap();
    const readStep = async (calls, config) => {
        const gate = gateFor(config);
        const asked = await Promise.all(calls.map((c) => gate.request(c)));
        const decisions = await Promise.all(asked.map((a) => ("approved" in a ? undefined : sayso.get(a.decision_id))));
        return { asked, decisions };
    };
    const settle = async (calls, config, shared) => {
        let read = shared ? reads.get(shared) : undefined;
        if (!read) {
            read = readStep(calls, config);
            if (shared)
                reads.set(shared, read);
        }
        const { asked, decisions } = await read;
        const pending = decisions.flatMap((d, i) => (d?.status === "pending" ? [{ decision_id: d.decision_id, tool_name: calls[i].toolName, tool_input: calls[i].input }] : []));
        if (pending.length > 0) {
            const value = { type: "sayso_approval", ...pending[0], calls: pending };
            // A resume before every call is decided (a value the caller wrote, an early resume)
            // pauses again: the node goes past here only on a run that finds the step decided.
            for (let i = 0; i < MAX_RESUMES; i++)
                options.interrupt(value);
            throw new Error("interrupt() returned more resume values than LangGraph keeps: pass the interrupt of @langchain/langgraph");
        }
        return asked.map((a, i) => ("approved" in a ? a : verdictOf(decisions[i], calls[i])));
    };
    const approveAll = (calls, config) => settle(calls, config);
    return {
        approveAll,
        async approve(call, config) {
            return (await approveAll([call], config))[0];
        },
        gate(toolName, fn) {
            gatedTools.add(toolName);
            return async (input, config) => {
                const own = { toolCallId: config?.toolCall?.id ?? "", toolName, input: config?.toolCall?.args ?? input };
                const step = stepOf(own, config?.state, gatedTools);
                const state = config?.state;
                const verdicts = await settle(step, config, state !== null && typeof state === "object" ? state : undefined);
                const verdict = verdicts[step.findIndex((c) => c.toolCallId === own.toolCallId)];
                if (!verdict.approved)
                    return verdict.reason;
                return fn(input, config);
            };
        },
        async answer(interrupts) {
            const ours = (interrupts ?? []).filter((i) => i?.value?.type === "sayso_approval");
            if (ours.length === 0)
                return null;
            // Every call any interrupt names, each waited on once, all at the same time.
            const calls = new Map();
            for (const i of ours)
                for (const c of Array.isArray(i.value.calls) ? i.value.calls : [i.value])
                    calls.set(c.decision_id, c);
            const ended = new Map();
            await Promise.all([...calls.keys()].map(async (id) => ended.set(id, await waiter.waitFor(id))));
            const verdicts = ours.map((i) => {
                const { decision, note } = ended.get(i.value.decision_id);
                return verdictOf(decision, { toolCallId: "", toolName: i.value.tool_name, input: i.value.tool_input }, note);
            });
            if (ours.length === 1 && ours[0].id === undefined)
                return verdicts[0];
            return Object.fromEntries(ours.map((i, n) => [i.id ?? String(n), verdicts[n]]));
        },
    };
}
/**
 * The gated calls of the step `own` belongs to: those of the last AI message in `state` with
 * no tool result yet, as a `ToolNode` runs them; `own` alone when the state does not hold it.
 */
export function stepOf(own, state, gated) {
    const messages = state?.messages;
    if (!Array.isArray(messages))
        return [own];
    const done = new Set(messages.map((m) => m?.tool_call_id).filter((id) => typeof id === "string"));
    for (let i = messages.length - 1; i >= 0; i--) {
        const calls = messages[i]?.tool_calls;
        if (!Array.isArray(calls) || calls.length === 0)
            continue;
        const step = calls
            .filter((c) => gated.has(c?.name) && typeof c?.id === "string" && !done.has(c.id))
            .map((c) => ({ toolCallId: c.id, toolName: c.name, input: c.args ?? {} }));
        return step.some((c) => c.toolCallId === own.toolCallId && c.toolName === own.toolName) ? step : [own];
    }
    return [own];
}
