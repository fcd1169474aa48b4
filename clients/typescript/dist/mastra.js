// sayso/mastra: a Mastra workflow step that waits on a person through sayso. The step asks
// (once per workflow, run and call), pauses with Mastra's own `suspend`, whose snapshot the
// workflow's storage keeps for as long as the person takes, and is resumed once the decision
// settles by `resumeWhenAnswered`, which finds suspended runs in that storage, so a process
// started after the first was killed picks them up. On resume the step reads the person's
// answer from sayso, never from the resume data. Mastra is not imported: the workflow and the
// step's context are passed in, so the package keeps no dependency on it.
import { ApprovalGate, verdictOf } from "./approval.js";
import { sleep } from "./timing.js";
/** The harness name sayso shows the person for this framework. */
export const HARNESS = "mastra";
/** sayso approvals for Mastra workflow steps. */
export function saysoApprovals(sayso, options = {}) {
    return {
        async approve(step, call) {
            if (typeof step?.workflowId !== "string" || typeof step?.runId !== "string") {
                throw new TypeError("approve takes the step's execute argument first: approvals.approve(context, { toolName, input })");
            }
            if (typeof call?.toolName !== "string" || call.toolName === "") {
                throw new TypeError("approve: toolName is required, the name the person sees");
            }
            const gate = new ApprovalGate(sayso, HARNESS, {
                runId: `${step.workflowId}:${step.runId}`,
                ttlMinutes: options.ttlMinutes,
                ttlSeconds: options.ttlSeconds,
                cwd: options.cwd,
            });
            const toolCall = { toolCallId: call.callId ?? call.toolName, toolName: call.toolName, input: call.input };
            // A resumed step runs from its start: the ask is idempotent, so it finds the decision
            // made the first time, and the resume data (anyone's to write) is never read.
            const asked = await gate.request(toolCall);
            if ("approved" in asked)
                return asked;
            const decision = await sayso.get(asked.decision_id);
            const verdict = verdictOf(decision, toolCall);
            if (decision.status !== "pending")
                return verdict;
            return {
                ...verdict,
                pending: {
                    type: "sayso_approval",
                    decision_id: decision.decision_id,
                    tool_name: call.toolName,
                    tool_input: call.input,
                    web_url: decision.web_url,
                    expires_at: decision.expires_at,
                },
            };
        },
    };
}
/** The approvals the workflow's suspended runs wait on, read from its storage. */
export async function pendingApprovals(workflow) {
    const { runs } = await workflow.listWorkflowRuns({ status: "suspended", perPage: false });
    const pending = [];
    for (const run of runs) {
        const snapshot = typeof run.snapshot === "string" ? JSON.parse(run.snapshot) : run.snapshot;
        const context = snapshot?.context ?? {};
        if (snapshot.status !== "suspended")
            continue;
        for (const [step, result] of Object.entries(context)) {
            const r = result;
            const p = r?.suspendPayload;
            if (r?.status !== "suspended" || p?.type !== "sayso_approval" || typeof p.decision_id !== "string")
                continue;
            pending.push({ runId: run.runId, step, decisionId: p.decision_id, toolName: String(p.tool_name) });
        }
    }
    return pending;
}
/**
 * Resumes the workflow's runs as their approvals settle, until `signal` aborts: reads its
 * suspended runs from storage (at start, then every `every` ms), waits on each approval with
 * sayso's long-poll, and resumes the run at that step once the decision is no longer
 * pending. Run one resumer per workflow and storage: two could resume a run at once.
 */
export async function resumeWhenAnswered(workflow, sayso, options = {}) {
    const { signal } = options;
    const every = options.every ?? 2000;
    if (!Number.isFinite(every) || every < 10)
        throw new TypeError(`every must be milliseconds, 10 or more, not ${String(every)}`);
    const waiting = new Map();
    // When each decision's resume ended: a reading made before then may still list its run as
    // suspended, and must not resume it again. A resume that succeeded is never made again; one
    // that failed is tried again by a reading made after it.
    const ended = new Map();
    const follow = async (p) => {
        const decision = await sayso.wait(p.decisionId, { signal });
        if (decision.status === "pending")
            return;
        const run = await workflow.createRun({ runId: p.runId });
        const result = await run.resume({ step: p.step, resumeData: { decision_id: p.decisionId } });
        ended.set(p.decisionId, Number.POSITIVE_INFINITY);
        await options.onResumed?.(p, result);
    };
    while (!signal?.aborted) {
        const readAt = Date.now();
        let pending = [];
        try {
            pending = await pendingApprovals(workflow);
        }
        catch (e) {
            options.onError?.(e);
        }
        for (const p of pending) {
            if (waiting.has(p.decisionId) || (ended.get(p.decisionId) ?? Number.NEGATIVE_INFINITY) >= readAt)
                continue;
            const task = follow(p)
                .catch((e) => {
                if (ended.get(p.decisionId) !== Number.POSITIVE_INFINITY)
                    ended.set(p.decisionId, Date.now());
                if (!signal?.aborted)
                    options.onError?.(e, p);
            })
                .finally(() => waiting.delete(p.decisionId));
            waiting.set(p.decisionId, task);
        }
        await sleep(every, signal).catch(() => undefined);
    }
    await Promise.all(waiting.values());
}
