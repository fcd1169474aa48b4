// A scripted model endpoint for driving the real harnesses offline.
//
//   node model.mjs <script.json> <log.jsonl>
//
// Listens on 127.0.0.1 (a free port, printed as `listening <port>` on stdout) and speaks what
// the harnesses speak: Anthropic Messages (`POST …/v1/messages`, streamed or not), OpenAI
// Responses (`POST …/responses`, streamed) and Gemini (`…:streamGenerateContent`,
// `…:generateContent`, `…:countTokens`). Every request is appended to the log as one JSON
// line: {api, path, body, turn, tool_results}, where `tool_results` is what the model was handed
// back from earlier tool calls, in one shape for every API ({call_id, name, text, error}).
//
// The script is {"turns": [...]}, each turn {"tool": {"name": …, "input": {…}}} or
// {"text": …}. A request's turn is the number of assistant turns already in its conversation,
// so the harness's first request gets turn 0 and the one carrying its tool's result turn 1. A
// turn past the script, a request offering no tools (a title or summary on the side), or a
// tool call the request does not offer is answered with plain text, so side requests never run
// a tool. The script file is read on every request: a test may rewrite it between runs.

import http from "node:http";
import fs from "node:fs";

const [scriptPath, logPath] = process.argv.slice(2);
if (!scriptPath || !logPath) {
  console.error("usage: node model.mjs <script.json> <log.jsonl>");
  process.exit(2);
}

function script() {
  return JSON.parse(fs.readFileSync(scriptPath, "utf8"));
}

let seq = 0;
const nextId = (prefix) => `${prefix}_${Date.now().toString(36)}${(seq++).toString(36)}`;

// The text of a tool result in any of the shapes the APIs use.
function textOf(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(textOf).join("\n");
  if (typeof content === "object") {
    if (typeof content.text === "string") return content.text;
    if ("output" in content) return textOf(content.output);
    if ("content" in content) return textOf(content.content);
    return JSON.stringify(content);
  }
  return String(content);
}

// --- Anthropic Messages ----------------------------------------------------------------

function anthropicView(body) {
  const messages = body.messages || [];
  const turn = messages.filter((m) => m.role === "assistant").length;
  const names = new Map();
  const results = [];
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === "tool_use") names.set(b.id, b.name);
      if (b.type === "tool_result") {
        results.push({
          call_id: b.tool_use_id,
          name: names.get(b.tool_use_id) ?? null,
          text: textOf(b.content),
          error: !!b.is_error,
        });
      }
    }
  }
  const tools = (body.tools || []).map((t) => t.name).filter(Boolean);
  return { turn, tools, results };
}

function anthropicReply(res, body, reply) {
  const id = nextId("msg");
  const block =
    reply.tool != null
      ? { type: "tool_use", id: nextId("toolu"), name: reply.tool.name, input: reply.tool.input ?? {} }
      : { type: "text", text: reply.text };
  const stop = reply.tool != null ? "tool_use" : "end_turn";
  const usage = { input_tokens: 10, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const model = body.model || "scripted";
  if (!body.stream) {
    return json(res, 200, { id, type: "message", role: "assistant", model, content: [block], stop_reason: stop, stop_sequence: null, usage });
  }
  const events = [
    ["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }],
  ];
  if (block.type === "tool_use") {
    events.push(["content_block_start", { type: "content_block_start", index: 0, content_block: { ...block, input: {} } }]);
    events.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }]);
  } else {
    events.push(["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }]);
    events.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: block.text } }]);
  }
  events.push(["content_block_stop", { type: "content_block_stop", index: 0 }]);
  events.push(["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } }]);
  events.push(["message_stop", { type: "message_stop" }]);
  sse(res, events);
}

// --- OpenAI Responses ------------------------------------------------------------------

function responsesView(body) {
  const input = Array.isArray(body.input) ? body.input : [];
  const calls = new Set(["function_call", "custom_tool_call", "local_shell_call"]);
  const turn = input.filter((i) => calls.has(i.type) || (i.type === "message" && i.role === "assistant")).length;
  const names = new Map();
  const results = [];
  for (const i of input) {
    if (calls.has(i.type)) names.set(i.call_id, i.name ?? i.type);
    if (i.type === "function_call_output" || i.type === "custom_tool_call_output") {
      results.push({ call_id: i.call_id, name: names.get(i.call_id) ?? null, text: textOf(i.output), error: false });
    }
  }
  const tools = (body.tools || []).map((t) => t.name ?? t.type).filter(Boolean);
  return { turn, tools, results };
}

function responsesReply(res, body, reply) {
  const id = nextId("resp");
  const item =
    reply.tool != null
      ? { type: "function_call", id: nextId("fc"), call_id: nextId("call"), name: reply.tool.name, arguments: JSON.stringify(reply.tool.input ?? {}), status: "completed" }
      : { type: "message", id: nextId("msg"), role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.text, annotations: [] }] };
  const base = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model: body.model || "scripted" };
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 20 };
  const events = [
    ["response.created", { type: "response.created", response: { ...base, status: "in_progress", output: [] } }],
    ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", { type: "response.completed", response: { ...base, status: "completed", output: [item], usage } }],
  ];
  sse(res, events);
}

// --- Gemini ----------------------------------------------------------------------------

function geminiView(body) {
  const contents = body.contents || [];
  const turn = contents.filter((c) => c.role === "model").length;
  const results = [];
  for (const c of contents) {
    for (const p of c.parts || []) {
      if (p.functionResponse) {
        const r = p.functionResponse.response;
        results.push({
          call_id: p.functionResponse.id ?? null,
          name: p.functionResponse.name ?? null,
          text: r && typeof r === "object" && "output" in r ? textOf(r.output) : r && "error" in r ? textOf(r.error) : JSON.stringify(r),
          error: !!(r && typeof r === "object" && "error" in r),
        });
      }
    }
  }
  const tools = (body.tools || []).flatMap((t) => (t.functionDeclarations || []).map((f) => f.name));
  return { turn, tools, results };
}

// gemini-cli's side questions ask for JSON (who speaks next, which model routes): answer them
// so the conversation ends with the user and stays on the model asked for.
function geminiSideAnswer(body) {
  const cfg = body.generationConfig || body.config || {};
  if (cfg.responseMimeType === "application/json" || cfg.responseJsonSchema || cfg.responseSchema) {
    return JSON.stringify({ reasoning: "scripted", next_speaker: "user", model_choice: "flash", complexity_reasoning: "scripted", complexity_score: 1 });
  }
  return null;
}

function geminiPayload(body, reply) {
  const part =
    reply.tool != null
      ? { functionCall: { name: reply.tool.name, args: reply.tool.input ?? {} } }
      : { text: reply.text };
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
    modelVersion: body.model || "scripted",
  };
}

// --- serving ---------------------------------------------------------------------------

function json(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sse(res, events) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

// What the script says for this request, or plain text where a tool must not be called.
function choose(view) {
  const turns = script().turns || [];
  const t = turns[view.turn];
  if (!t) return { text: "Done." };
  if (t.tool != null) {
    if (!view.tools.includes(t.tool.name)) {
      return { text: `The scripted tool ${t.tool.name} is not offered here.` };
    }
    return t;
  }
  return { text: t.text ?? "Done." };
}

function record(entry) {
  fs.appendFileSync(logPath, JSON.stringify(entry) + "\n");
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const raw = Buffer.concat(chunks).toString("utf8");
    let body = {};
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      body = { unparsed: raw };
    }
    const path = req.url.split("?")[0];
    const entry = { method: req.method, path, url: req.url, body };
    try {
      if (req.method === "GET" && /\/models\/?$/.test(path)) {
        // Model lists (Codex, Copilot): one model, whatever it is called.
        record({ ...entry, api: "models" });
        return json(res, 200, { object: "list", data: [{ id: "scripted", object: "model", created: 0, owned_by: "sayso" }], models: [] });
      }
      if (path.endsWith("/messages/count_tokens")) {
        record({ ...entry, api: "anthropic-count" });
        return json(res, 200, { input_tokens: 10 });
      }
      if (path.endsWith("/messages")) {
        const view = anthropicView(body);
        const reply = view.tools.length ? choose(view) : { text: "Done." };
        record({ ...entry, api: "anthropic", turn: view.turn, tools: view.tools, tool_results: view.results, reply });
        return anthropicReply(res, body, reply);
      }
      if (path.endsWith("/responses")) {
        const view = responsesView(body);
        const reply = view.tools.length ? choose(view) : { text: "Done." };
        record({ ...entry, api: "responses", turn: view.turn, tools: view.tools, tool_results: view.results, reply });
        return responsesReply(res, body, reply);
      }
      if (path.endsWith(":countTokens")) {
        record({ ...entry, api: "gemini-count" });
        return json(res, 200, { totalTokens: 10 });
      }
      if (path.endsWith(":streamGenerateContent") || path.endsWith(":generateContent")) {
        const view = geminiView(body);
        const side = geminiSideAnswer(body);
        const reply = side != null ? { text: side } : view.tools.length ? choose(view) : { text: "Done." };
        record({ ...entry, api: "gemini", turn: view.turn, tools: view.tools, tool_results: view.results, reply, side: side != null });
        const payload = geminiPayload(body, reply);
        if (path.endsWith(":generateContent")) return json(res, 200, payload);
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`data: ${JSON.stringify(payload)}\n\n`);
        return;
      }
      record({ ...entry, api: "unknown" });
      json(res, 404, { error: { message: `scripted model: no route for ${req.method} ${path}` } });
    } catch (e) {
      record({ ...entry, api: "error", error: String(e && e.stack ? e.stack : e) });
      json(res, 500, { error: { message: String(e) } });
    }
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`listening ${server.address().port}`);
});
