// The inbox's resolutions as Server-Sent Events (`GET /v1/events`, docs/API.md): parsed
// here rather than with EventSource, which cannot send an Authorization header, and
// resumed with Last-Event-ID whenever the connection ends, so no event is missed or repeated.
import { SaysoError } from "./errors.js";
import { retryPause } from "./http.js";
import { abortable, linkedSignal, sleep, withJitter } from "./timing.js";
/** The server sends a comment every 15 s; this long without a byte means the connection is gone. */
const IDLE_MS = 45_000;
export async function* resolvedEvents(http, opts) {
    let lastId = opts.lastEventId === undefined ? "" : String(opts.lastEventId);
    let backoff = 250;
    // Until the stream has opened once, a server that cannot be reached is a mistake to
    // report (a wrong URL), not a restart to sit out.
    let opened = false;
    for (;;) {
        opts.signal?.throwIfAborted();
        const { signal, done } = linkedSignal(opts.signal);
        let failure;
        try {
            const headers = { accept: "text/event-stream" };
            if (lastId)
                headers["last-event-id"] = lastId;
            const resp = await http.open(http.url(["v1", "events"]), { headers, signal });
            if (!resp.ok || !resp.body) {
                // Read as `send` would, for the same errors (401, 429, not sayso, …).
                failure = await errorOf(http, resp);
            }
            else if (!(resp.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
                failure = new SaysoError(`${http.base}/v1/events answered with ${resp.headers.get("content-type")}, not an event stream: is ${http.base} a sayso server?`, { status: resp.status, code: "not_sayso" });
            }
            else {
                opened = true;
                for await (const ev of parse(resp.body, signal)) {
                    backoff = 250;
                    if (ev.id)
                        lastId = ev.id;
                    if (ev.type === "decision.resolved") {
                        yield { id: ev.id, type: ev.type, decision: JSON.parse(ev.data) };
                    }
                }
            }
        }
        catch (e) {
            if (opts.signal?.aborted)
                throw opts.signal.reason;
            if (!(e instanceof SaysoError) && !(e instanceof TypeError) && !isIdle(e))
                throw e;
            failure = e instanceof SaysoError ? e : http.unreachable(e);
        }
        finally {
            done();
        }
        // The stream ended (a restart, a proxy's timeout) or failed: resume where it stopped.
        const pause = failure ? retryPause(failure, "safe") : 0;
        if (pause === undefined || (!opened && failure?.code === "unreachable"))
            throw failure;
        await sleep(Math.max(withJitter(backoff), pause), opts.signal);
        backoff = Math.min(backoff * 2, 5000);
    }
}
async function errorOf(http, resp) {
    const url = http.url(["v1", "events"]);
    try {
        http.read(resp, await resp.text(), url);
    }
    catch (e) {
        if (e instanceof SaysoError)
            return e;
        throw e;
    }
    return new SaysoError(`${url} answered ${resp.status} without a stream: is ${http.base} a sayso server?`, {
        status: resp.status,
        code: "not_sayso",
    });
}
class IdleError extends Error {
}
function isIdle(e) {
    return e instanceof IdleError;
}
/** The events of an SSE body (the WHATWG event-stream format). */
async function* parse(body, signal) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let id = "";
    let type = "";
    let data = [];
    try {
        for (;;) {
            const idle = linkedSignal(signal, IDLE_MS);
            let chunk;
            try {
                chunk = await abortable(reader.read(), idle.signal);
            }
            catch (e) {
                if (idle.timedOut())
                    throw new IdleError("no data from the event stream for 45 s");
                throw e;
            }
            finally {
                idle.done();
            }
            if (chunk.done)
                return;
            buffer += decoder.decode(chunk.value, { stream: true });
            let nl;
            while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
                // A lone \r at the very end may be the first half of \r\n: wait for the next byte.
                if (buffer[nl] === "\r" && nl === buffer.length - 1)
                    break;
                const line = buffer.slice(0, nl);
                buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
                if (line === "") {
                    if (data.length)
                        yield { id, type: type || "message", data: data.join("\n") };
                    type = "";
                    data = [];
                    continue;
                }
                if (line.startsWith(":"))
                    continue;
                const colon = line.indexOf(":");
                const field = colon < 0 ? line : line.slice(0, colon);
                let value = colon < 0 ? "" : line.slice(colon + 1);
                if (value.startsWith(" "))
                    value = value.slice(1);
                if (field === "data")
                    data.push(value);
                else if (field === "event")
                    type = value;
                else if (field === "id" && !value.includes("\0"))
                    id = value;
            }
        }
    }
    finally {
        reader.cancel().catch(() => { });
    }
}
