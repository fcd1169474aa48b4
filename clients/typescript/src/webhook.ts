// Verifies the webhooks sayso sends to a decision's `callback_url` (docs/NOTIFICATIONS.md),
// in the Standard Webhooks form: `webhook-id`, `webhook-timestamp` (unix seconds) and
// `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed with the
// base64-decoded part of the inbox's `whsec_…` secret. WebCrypto only, so it runs in Node,
// browsers and edge runtimes alike.

import { WebhookVerificationError, invalidArgument } from "./errors.js";
import type { Decision } from "./types.js";

/** How far a webhook's timestamp may be from now, either way, by default: five minutes. */
export const DEFAULT_TOLERANCE_S = 300;

export interface VerifyOptions {
  /** Seconds a timestamp may be off, either way (default 300), so an old webhook cannot be replayed. */
  toleranceSeconds?: number;
  /** The time to check against, ms since the epoch (default now). */
  now?: number;
}

/** Header lookup over a `Headers`, a plain object (any case), or Node's `IncomingHttpHeaders`. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

/**
 * Checks that `payload` is a webhook sayso signed with `secret` within the tolerance, and
 * returns the Decision it carries. Throws `WebhookVerificationError` saying what failed.
 * `payload` must be the raw body as received (a string or bytes), not re-serialised JSON.
 */
export async function verifyWebhook(
  payload: string | Uint8Array | ArrayBuffer,
  headers: HeadersLike,
  secret: string,
  opts: VerifyOptions = {},
): Promise<Decision> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw invalidArgument("verifyWebhook needs WebCrypto (crypto.subtle), which this runtime lacks");
  const key = secretKey(secret);
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) {
    const missing = [!id && "webhook-id", !timestamp && "webhook-timestamp", !signatures && "webhook-signature"];
    throw new WebhookVerificationError(`missing header ${missing.filter(Boolean).join(", ")}`);
  }
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError(`webhook-timestamp ${JSON.stringify(timestamp)} is not unix seconds`);
  }
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  const nowS = Math.floor((opts.now ?? Date.now()) / 1000);
  const age = nowS - Number(timestamp);
  if (age > tolerance) {
    throw new WebhookVerificationError(`webhook-timestamp is ${age} s old, more than the tolerance of ${tolerance} s`);
  }
  if (-age > tolerance) {
    throw new WebhookVerificationError(`webhook-timestamp is ${-age} s in the future, more than the tolerance of ${tolerance} s`);
  }
  const body = bytesOf(payload);
  const enc = new TextEncoder();
  const signed = concat(enc.encode(`${id}.${timestamp}.`), body);
  const hmac = await subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  // Every `v1,` signature is tried (a secret being rotated sends two); `verify` compares in
  // constant time.
  for (const entry of signatures.split(" ")) {
    const [version, sig] = entry.split(",", 2);
    if (version !== "v1" || !sig) continue;
    const expected = base64Decode(sig);
    if (expected && (await subtle.verify("HMAC", hmac, expected as BufferSource, signed as BufferSource))) {
      try {
        return JSON.parse(new TextDecoder().decode(body)) as Decision;
      } catch {
        throw new WebhookVerificationError("the signature matches, but the body is not JSON");
      }
    }
  }
  throw new WebhookVerificationError("no webhook-signature matches: the body, id or timestamp was changed, or the secret is another inbox's");
}

function secretKey(secret: string): Uint8Array {
  if (typeof secret !== "string" || secret.trim() === "") {
    throw invalidArgument("no webhook secret: pass the inbox's whsec_… secret");
  }
  const key = base64Decode(secret.trim().replace(/^whsec_/, ""));
  if (!key || key.length === 0) {
    throw invalidArgument("the webhook secret is not whsec_ followed by base64; copy it again from `sayso inbox create` or first-run.txt");
  }
  return key;
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(" ") : v;
  }
  return undefined;
}

function bytesOf(payload: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof payload === "string") return new TextEncoder().encode(payload);
  if (payload instanceof Uint8Array) return payload;
  if (payload instanceof ArrayBuffer) return new Uint8Array(payload);
  throw invalidArgument("the webhook payload must be the raw body: a string, Uint8Array or ArrayBuffer");
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Standard base64, padding optional; undefined when it is not base64. */
function base64Decode(s: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  const padded = s.replace(/=+$/, "");
  if (padded.length % 4 === 1) return undefined;
  try {
    const bin = atob(padded + "=".repeat((4 - (padded.length % 4)) % 4));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}
