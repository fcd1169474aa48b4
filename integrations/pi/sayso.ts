// sayso for pi (https://github.com/badlogic/pi-mono): installed by `sayso hook install pi`,
// checked by `sayso hook doctor pi` (docs/HARNESSES.md).
//
// - Every tool call but ask_user goes through `sayso hook pi` before it runs: the policy file
//   the other harnesses use decides, or a person on sayso does. Anything but a clear allow
//   (a deny, a fallback, a hook that fails, cannot start or takes too long) blocks the call.
// - ask_user asks the person on sayso, as pi's ask_user design describes it: the model reads
//   {answered, answers: [{question, answer, selectedOption?, wasCustom}]}, or
//   {answered: false, answers: [], cancelled: true}. The result is worded by sayso's /mcp/pi.
//
// SAYSO_URL and SAYSO_KEY come from the environment pi starts with. Nothing handed to the
// model carries the link the person answers at.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";

// Written by `sayso hook install pi`: the hook's command line, and how long pi lets it run.
const HOOK_COMMAND = "sayso hook pi";
const HOOK_TIMEOUT_S = 930;

const ASK_TOOL = "ask_user";
const PENDING_FILE = join(".pi", "pending-questions.json");
// One MCP call's wait, in seconds: short enough for proxies, looped until the person answers.
const ROUND_S = 50;

// The same input and wording as sayso's /mcp/pi (src/mcp/profiles/pi.rs, src/mcp/tools.rs).
const OptionSchema = Type.Object({
  label: Type.String({ description: "What the user picks." }),
  description: Type.Optional(Type.String({ description: "Help text under the label." })),
});

const QuestionSchema = Type.Object({
  question: Type.String({ description: "The question." }),
  header: Type.Optional(Type.String({ description: "A short title shown above it." })),
  options: Type.Optional(
    Type.Array(OptionSchema, {
      description: 'Suggested answers; without them the user types the answer. "Other" is always added.',
    }),
  ),
  multiSelect: Type.Optional(Type.Boolean({ description: "Several options may be picked." })),
});

const AskUserParams = Type.Object({
  questions: Type.Array(QuestionSchema, {
    description: "The questions, asked together and answered all or none.",
    minItems: 1,
  }),
  metadata: Type.Optional(
    Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'Your own tracking data, e.g. {"source": "setup-wizard"}; kept with the question.',
      },
    ),
  ),
});

const DESCRIPTION =
  "Ask the user one or more questions when you need a decision, a preference, a confirmation " +
  "or input you cannot infer. Options are suggestions: the user may always answer in their own " +
  'words. Put the option you recommend first, with "(Recommended)" in its label, and ask related ' +
  "questions together. The user may be away: they are notified and answer on their phone, and " +
  "the tool waits for them; if the wait ends first, the questions are saved as pending and the " +
  "result says so.";

type Question = { question: string; header?: string; options?: { label: string }[]; multiSelect?: boolean };
type Pending = { sessionId?: string; timestamp: string; decisionId: string; questions: unknown[] };

export default function (pi: ExtensionAPI) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName === ASK_TOOL) return undefined;
    return gate(event as { toolName: string; toolCallId: string; input: Record<string, unknown> }, ctx);
  });

  pi.registerTool({
    name: ASK_TOOL,
    label: "Ask User",
    description: DESCRIPTION,
    promptSnippet: "Ask the user questions (they may be away; ask_user waits for their answer)",
    parameters: AskUserParams,
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      return askUser(params as { questions: Question[]; metadata?: Record<string, unknown> }, signal, ctx);
    },
  });

  pi.registerCommand("questions", {
    description: "Show the pending ask_user questions, or `clear` them (withdrawing them on sayso)",
    handler: async (args, ctx) => {
      const file = join(ctx.cwd, PENDING_FILE);
      const pending = readPending(ctx.cwd);
      if (!pending) {
        ctx.ui.notify("No questions are pending.", "info");
        return;
      }
      if (args.trim() === "clear") {
        try {
          await mcp("cancel_decision", { decision_id: pending.decisionId }, undefined);
        } catch {
          // Already answered or gone: the file goes either way.
        }
        rmSync(file, { force: true });
        ctx.ui.notify("Pending questions cleared.", "info");
        return;
      }
      ctx.ui.notify(JSON.stringify(pending, null, 2), "info");
    },
  });
}

// --- the gate ----------------------------------------------------------------------------

type Verdict = { decision?: string; reason?: string; input?: Record<string, unknown> };

async function gate(
  event: { toolName: string; toolCallId: string; input: Record<string, unknown> },
  ctx: ExtensionContext,
): Promise<{ block: true; reason: string } | undefined> {
  const stdin = JSON.stringify({
    hook_event_name: "tool_call",
    tool_name: event.toolName,
    tool_call_id: event.toolCallId,
    input: event.input,
    cwd: ctx.cwd,
    session_id: sessionId(ctx),
  });
  const envWait = Number(process.env.SAYSO_HOOK_TIMEOUT_S);
  const limit = Math.max(HOOK_TIMEOUT_S, Number.isFinite(envWait) && envWait > 0 ? envWait + 30 : 0);
  let verdict: Verdict;
  try {
    verdict = await runHook(stdin, ctx.cwd, limit * 1000, ctx.signal);
  } catch (e) {
    return { block: true, reason: `sayso: ${(e as Error).message}; blocked` };
  }
  const reason = typeof verdict.reason === "string" ? verdict.reason : "";
  if (verdict.decision === "allow") {
    if (verdict.input && typeof verdict.input === "object") {
      // The person edited the call before allowing it: run theirs, nothing else.
      for (const k of Object.keys(event.input)) delete event.input[k];
      Object.assign(event.input, verdict.input);
    }
    return undefined;
  }
  if (verdict.decision === "ask" && ctx.hasUI) {
    const ok = await ctx.ui.confirm("sayso could not ask the person", `${reason}\n\nAllow ${event.toolName}?`);
    if (ok) return undefined;
    return { block: true, reason: "Blocked by the user." };
  }
  return { block: true, reason: reason || "sayso did not allow this; blocked" };
}

/** Runs the hook with `stdin`; its one line of JSON, or an error saying why there is none. */
function runHook(stdin: string, cwd: string, limitMs: number, signal: AbortSignal | undefined): Promise<Verdict> {
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(HOOK_COMMAND, { shell: true, cwd, env: process.env, stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      reject(new Error(`cannot start \`${HOOK_COMMAND}\`: ${(e as Error).message}`));
      return;
    }
    let out = "";
    let settled = false;
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      f();
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish(() => reject(new Error(`\`${HOOK_COMMAND}\` did not answer within ${Math.round(limitMs / 1000)} s`)));
    }, limitMs);
    const onAbort = () => {
      child.kill("SIGKILL");
      finish(() => reject(new Error("the run was aborted while the hook waited")));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
    });
    // The hook's stderr is for the operator (it may hold the question's link): never the model.
    child.stderr.on("data", (d: Buffer) => process.stderr.write(d));
    child.on("error", (e: Error) => finish(() => reject(new Error(`cannot start \`${HOOK_COMMAND}\`: ${e.message}`))));
    child.on("close", (code: number | null) => {
      finish(() => {
        const line = out.trim().split("\n").pop() ?? "";
        let v: Verdict | undefined;
        try {
          v = JSON.parse(line);
        } catch {
          v = undefined;
        }
        if (code !== 0 || !v || typeof v !== "object") {
          reject(new Error(`\`${HOOK_COMMAND}\` gave no answer (exit ${code})`));
        } else {
          resolve(v);
        }
      });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(stdin);
  });
}

function sessionId(ctx: ExtensionContext): string | undefined {
  try {
    return ctx.sessionManager.getSessionId();
  } catch {
    return undefined;
  }
}

// --- ask_user ----------------------------------------------------------------------------

async function askUser(
  params: { questions: Question[]; metadata?: Record<string, unknown> },
  signal: AbortSignal | undefined,
  ctx: ExtensionContext,
) {
  const mode = ctx.hasUI ? "interactive" : "print";
  const limitS = Number(process.env.SAYSO_PI_ASK_WAIT_S);
  const deadline = Number.isFinite(limitS) && limitS > 0 ? Date.now() + limitS * 1000 : Infinity;
  const roundS = () => Math.max(1, Math.min(ROUND_S, Math.ceil((deadline - Date.now()) / 1000)));

  // The same questions as the pending file's are that decision's, not a new one.
  const pending = readPending(ctx.cwd);
  let decisionId: string | undefined =
    pending && sameQuestions(pending.questions, params.questions) ? pending.decisionId : undefined;
  let r: McpResult;
  r = decisionId
    ? await mcp("await_decision", { decision_id: decisionId, timeout_s: roundS() }, signal)
    : await mcp(ASK_TOOL, { ...params, wait_s: roundS() }, signal);
  if (decisionId && r.isError) {
    // The pending file names a decision this key cannot see: ask afresh.
    rmSync(join(ctx.cwd, PENDING_FILE), { force: true });
    decisionId = undefined;
    r = await mcp(ASK_TOOL, { ...params, wait_s: roundS() }, signal);
  }
  if (r.isError) throw new Error(r.text);
  if (ctx.hasUI && isPending(r)) ctx.ui.notify("Waiting for the answer on sayso…", "info");
  try {
    while (isPending(r)) {
      decisionId = String(r.structured?.decision_id ?? decisionId ?? "");
      if (!decisionId) throw new Error("sayso gave no decision id for the pending questions");
      if (Date.now() >= deadline) {
        writePending(ctx, decisionId, params.questions);
        return {
          content: [
            {
              type: "text" as const,
              text:
                "Questions pending. User input required.\n\n" +
                "The user answers on sayso. To pick up the answers, re-run with:\n  pi -c\n\n" +
                `Questions saved to: ${PENDING_FILE}`,
            },
          ],
          details: { questions: params.questions, answers: [], mode, metadata: params.metadata, pendingFile: PENDING_FILE },
        };
      }
      r = await mcp("await_decision", { decision_id: decisionId, timeout_s: roundS() }, signal);
      if (r.isError) throw new Error(r.text);
    }
  } catch (e) {
    if (signal?.aborted && decisionId) {
      // Esc in pi: the question is withdrawn, as a cancelled dialog would be.
      await mcp("cancel_decision", { decision_id: decisionId }, undefined).catch(() => {});
    }
    throw e;
  }
  if (pending && decisionId === pending.decisionId) rmSync(join(ctx.cwd, PENDING_FILE), { force: true });
  const result = (r.structured ?? {}) as { answered?: boolean; answers?: unknown[] };
  return {
    content: [{ type: "text" as const, text: r.text }],
    details: {
      questions: params.questions,
      answers: result.answers ?? [],
      answeredAt: Date.now(),
      mode,
      metadata: params.metadata,
    },
  };
}

/** A result still waiting for the person (sayso's decision view, status pending). */
function isPending(r: McpResult): boolean {
  return r.structured?.status === "pending";
}

function sameQuestions(a: unknown[], b: Question[]): boolean {
  const texts = (qs: unknown[]) => qs.map((q) => (q as { question?: string })?.question ?? "");
  return JSON.stringify(texts(a)) === JSON.stringify(texts(b));
}

function readPending(cwd: string): Pending | undefined {
  const file = join(cwd, PENDING_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const p = JSON.parse(readFileSync(file, "utf8"));
    return typeof p?.decisionId === "string" && Array.isArray(p.questions) ? p : undefined;
  } catch {
    return undefined;
  }
}

function writePending(ctx: ExtensionContext, decisionId: string, questions: Question[]) {
  const file = join(ctx.cwd, PENDING_FILE);
  mkdirSync(dirname(file), { recursive: true });
  const p: Pending = {
    sessionId: sessionId(ctx),
    timestamp: new Date().toISOString(),
    decisionId,
    questions: questions.map((q) => ({
      question: q.question,
      ...(q.options ? { options: q.options.map((o) => o.label) } : {}),
      answer: null,
    })),
  };
  writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
}

// --- sayso's /mcp/pi, over MCP's streamable HTTP ---------------------------------------

type McpResult = { text: string; structured?: Record<string, unknown>; isError: boolean };

let nextId = 1;

/** Calls one tool of /mcp/pi; an error names what failed, never the answer link. */
async function mcp(name: string, args: Record<string, unknown>, signal: AbortSignal | undefined): Promise<McpResult> {
  const base = (process.env.SAYSO_URL || "http://127.0.0.1:8080").replace(/\/+$/, "");
  const key = process.env.SAYSO_KEY;
  if (!key) throw new Error("sayso: SAYSO_KEY is not set where pi runs; nobody was asked");
  const id = nextId++;
  let res: Response;
  try {
    res = await fetch(`${base}/mcp/pi`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }),
      signal,
    });
  } catch (e) {
    if (signal?.aborted) throw new Error("the question was cancelled");
    throw new Error(`sayso at ${base} cannot be reached (${(e as Error).message}); nobody was asked`);
  }
  const body = await res.text();
  if (!res.ok) {
    let why = `HTTP ${res.status}`;
    try {
      why = JSON.parse(body)?.error?.message ?? why;
    } catch {
      // Not JSON: the status says enough.
    }
    throw new Error(`sayso refused the question: ${why}`);
  }
  const message = parseResponse(body, id);
  if (!message) throw new Error("sayso's answer could not be read");
  if (message.error) throw new Error(`sayso refused the question: ${message.error.message ?? "error"}`);
  const result = message.result ?? {};
  const text = (result.content ?? [])
    .filter((c: { type?: string }) => c?.type === "text")
    .map((c: { text?: string }) => c.text ?? "")
    .join("\n");
  return { text, structured: result.structuredContent, isError: result.isError === true };
}

/** The JSON-RPC response with `id`, from a JSON body or an event stream. */
function parseResponse(body: string, id: number): any {
  const candidates: string[] = [];
  if (body.trimStart().startsWith("{")) {
    candidates.push(body);
  } else {
    for (const event of body.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n");
      if (data) candidates.push(data);
    }
  }
  for (const c of candidates) {
    try {
      const m = JSON.parse(c);
      if (m && m.id === id) return m;
    } catch {
      // A keep-alive or partial event.
    }
  }
  return undefined;
}
