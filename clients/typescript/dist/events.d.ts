import { Transport } from "./http.js";
import type { ResolvedEvent } from "./types.js";
export interface EventsOptions {
    /** Resume after this event id (a `ResolvedEvent.id`); default: the inbox's whole history first, then live ones. */
    lastEventId?: string | number;
    /** Ends the stream: the iteration rejects with the signal's reason. */
    signal?: AbortSignal;
}
export declare function resolvedEvents(http: Transport, opts: EventsOptions): AsyncGenerator<ResolvedEvent>;
