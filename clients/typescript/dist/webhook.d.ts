import type { Decision } from "./types.js";
/** How far a webhook's timestamp may be from now, either way, by default: five minutes. */
export declare const DEFAULT_TOLERANCE_S = 300;
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
export declare function verifyWebhook(payload: string | Uint8Array | ArrayBuffer, headers: HeadersLike, secret: string, opts?: VerifyOptions): Promise<Decision>;
