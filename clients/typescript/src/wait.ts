// Waiting for a person's answer across as many `GET /v1/decisions/{id}/await` rounds as it
// takes, through dropped connections and server restarts (docs/API.md, "Waiting").

import { SaysoError, SaysoTimeoutError } from "./errors.js";
import { Transport, retryPause } from "./http.js";
import { linkedSignal, sleep, withJitter } from "./timing.js";
import type { Decision } from "./types.js";

/** How long one await round holds: below common proxy and client timeouts. */
const ROUND_S = 50;
/** How much longer than its `timeout_s` a round may take before it counts as lost. */
const ROUND_MARGIN_MS = 20_000;
/** While the server cannot be reached, keep trying this long past the decision's expiry
 * (its answer, or its expiry, is still to be read), allowing for clock skew. */
const GRACE_AFTER_EXPIRY_MS = 120_000;
/** While the server cannot be reached and the expiry is not known yet, keep trying this long. */
const GRACE_UNKNOWN_EXPIRY_MS = 300_000;
/** How long past its deadline a wait lets the last round's answer arrive. */
const DEADLINE_GRACE_MS = 2000;

export interface WaitOptions {
  /** Milliseconds to wait in all; past it `wait` rejects with `SaysoTimeoutError`. Default: until the decision ends. */
  timeout?: number;
  /** Aborts the wait: it rejects with the signal's reason, and the decision stays as it is. */
  signal?: AbortSignal;
}

export async function waitForDecision(
  http: Transport,
  id: string,
  expiresAt: string | undefined,
  opts: WaitOptions,
): Promise<Decision> {
  const started = Date.now();
  const deadline = opts.timeout === undefined ? undefined : started + opts.timeout;
  opts.signal?.throwIfAborted();
  // Rounds are whole seconds, so the last one ends at the deadline and the decision is read
  // there. This timer only cuts a request that hangs past it (a server gone silent).
  const { signal, done, timedOut } = linkedSignal(
    opts.signal,
    opts.timeout === undefined ? undefined : opts.timeout + DEADLINE_GRACE_MS,
  );
  let last: Decision | undefined;
  let expiry = parseTime(expiresAt);
  try {
    let backoff = 200;
    let quickPause = 250;
    let failingSince: number | undefined;
    for (;;) {
      let timeoutS = ROUND_S;
      if (deadline !== undefined) {
        const remaining = deadline - Date.now();
        timeoutS = Math.min(ROUND_S, Math.max(0, Math.floor(remaining / 1000)));
        // Less than a second left: look once more at the deadline itself.
        if (timeoutS === 0 && remaining > 0) await sleep(remaining, signal);
      }
      const roundStart = Date.now();
      let d: Decision;
      try {
        d = await http.send<Decision>({
          path: ["v1", "decisions", id, "await"],
          query: { timeout_s: timeoutS },
          signal,
          attemptTimeoutMs: timeoutS * 1000 + ROUND_MARGIN_MS,
          retry: "safe",
          retryUntil: 0, // this loop retries, with the deadline and the expiry in view
        });
      } catch (e) {
        if (signal.aborted || !(e instanceof SaysoError)) throw e;
        const pause = retryPause(e, "safe");
        failingSince ??= Date.now();
        let giveUp = expiry === undefined ? failingSince + GRACE_UNKNOWN_EXPIRY_MS : expiry + GRACE_AFTER_EXPIRY_MS;
        if (deadline !== undefined) giveUp = Math.min(giveUp, deadline);
        const wait = Math.max(withJitter(backoff), pause ?? 0);
        if (pause === undefined || Date.now() + wait >= giveUp) throw e;
        await sleep(wait, signal);
        backoff = Math.min(backoff * 2, 5000);
        continue;
      }
      backoff = 200;
      failingSince = undefined;
      if (d.status !== "pending") return d;
      last = d;
      expiry = parseTime(d.expires_at) ?? expiry;
      if (deadline !== undefined && Date.now() >= deadline) break;
      // A server shutting down answers parked awaits at once: do not spin on it.
      if (timeoutS > 0 && Date.now() - roundStart < 1000) {
        await sleep(quickPause, signal);
        quickPause = Math.min(quickPause * 2, 5000);
      } else {
        quickPause = 250;
      }
    }
  } catch (e) {
    if (!timedOut() || opts.signal?.aborted) throw e;
  } finally {
    done();
  }
  throw new SaysoTimeoutError(id, Date.now() - started, last);
}

function parseTime(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}
