import { SaysoError } from "./errors.js";
/** The fetch the client calls; any WHATWG-compatible one will do. */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;
/** Which failures a request may be sent again after. */
export type Retry = 
/** Reading, or a create with an Idempotency-Key: again after any failure that changed nothing for sure or may have. */
"safe"
/** A change: again only when nothing can have happened (connection refused, `503 unavailable`). */
 | "unsafe";
export interface SendOptions {
    method?: "GET" | "POST";
    /** Path segments under the base URL, each escaped: `["v1", "decisions", id]`. */
    path: string[];
    query?: Record<string, string | number | undefined>;
    body?: unknown;
    headers?: Record<string, string>;
    signal?: AbortSignal | undefined;
    /** Give up on one attempt after this long without the whole answer. */
    attemptTimeoutMs?: number;
    retry: Retry;
    /** Stop retrying at this moment (ms since the epoch). */
    retryUntil: number;
    /** Told the status of the 2xx answer returned (a create's 200 is a replay, 201 a new one). */
    onStatus?: (status: number) => void;
}
export declare class Transport {
    #private;
    readonly base: string;
    constructor(url: string, key: string, fetchImpl: FetchLike);
    url(path: string[], query?: Record<string, string | number | undefined>): string;
    /** Opens a request and returns the response as it starts, for a stream; failures as `send`'s. */
    open(url: string, init: RequestInit): Promise<Response>;
    /** Sends a request, again after passing failures until `retryUntil`; the JSON of a 2xx. */
    send<T>(opts: SendOptions): Promise<T>;
    /** The JSON of a 2xx answer; any other answer thrown as the SaysoError it stands for. */
    read<T>(resp: Response, text: string, url: string): T;
    unreachable(e: unknown): SaysoError;
}
/**
 * How long to wait before sending again after `failure`, or undefined when it is final.
 * A `4xx` is final (the request itself is wrong, or the key), except a short `429`.
 */
export declare function retryPause(failure: SaysoError, retry: Retry): number | undefined;
