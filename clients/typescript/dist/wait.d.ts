import { Transport } from "./http.js";
import type { Decision } from "./types.js";
export interface WaitOptions {
    /** Milliseconds to wait in all; past it `wait` rejects with `SaysoTimeoutError`. Default: until the decision ends. */
    timeout?: number;
    /** Aborts the wait: it rejects with the signal's reason, and the decision stays as it is. */
    signal?: AbortSignal;
}
export declare function waitForDecision(http: Transport, id: string, expiresAt: string | undefined, opts: WaitOptions): Promise<Decision>;
