/** What kind of answer a decision asks for. */
export type Kind = "bool" | "choose" | "text" | "form" | "todo";
/** Where a decision stands. Every status but `pending` is final. */
export type Status = "pending" | "answered" | "declined" | "expired" | "cancelled";
/** The statuses a decision ends in; `wait` returns on each of them. */
export declare const TERMINAL_STATUSES: readonly Status[];
/** What a create returns: enough to wait for the answer and to show the person the link. */
export interface AskHandle {
    decision_id: string;
    /** The answer page. A plain question's may be shared with the person; whoever holds it answers. */
    web_url: string;
    /** RFC 3339. */
    expires_at: string;
    /** Accepted problems with the request (unknown fields, options ignored for the kind, …). */
    warnings: string[];
    /** True when the `Idempotency-Key` found an earlier create (`200`): nothing new was asked. */
    replayed: boolean;
}
/** One channel's state in `Decision.notifications`. */
export interface NotificationState {
    channel: string;
    status: string;
    detail: string | null;
}
/** Which way a decision was answered, declined or cancelled. */
export interface AnsweredBy {
    channel: string;
    device_id: string | null;
}
/** One answer given, in order. */
export interface AnswerRecord {
    person: string | null;
    action: string;
    value: unknown;
    remark: string | null;
    at: string;
    channel: string | null;
}
/** A decision as the API shows it (`GET /v1/decisions/{id}`, the await, the event stream, webhooks). */
export interface Decision {
    decision_id: string;
    kind: Kind;
    question: string;
    project: string | null;
    status: Status;
    /**
     * By kind: `bool` true/false; `choose` the label (with `multi`, an array of labels); `text`
     * the string; `form` an object; `todo` `"done"` or `"skipped"`. Null while pending, when
     * declined or cancelled, and when expired without a `default_outcome`.
     */
    outcome: unknown;
    outcome_source: "human" | "default" | null;
    /** True when the person typed their own answer instead of picking an option. */
    custom: boolean;
    remark: string | null;
    answered_at: string | null;
    created_at: string;
    expires_at: string;
    web_url: string;
    metadata: Record<string, unknown>;
    /** One plain sentence describing the outcome, to hand to a model as is. */
    answer_text: string;
    notifications: NotificationState[];
    answered_by: AnsweredBy | null;
    step_up?: string;
    approval?: {
        harness: string;
        tool_name: string;
        session_id: string | null;
        rule?: string;
    };
    answers: AnswerRecord[];
    routing?: Record<string, unknown>;
    progress?: string;
}
/** The fields of a create request (docs/API.md); anything else is passed through as given. */
export interface AskFields {
    question: string;
    /** Default `"bool"`. */
    kind?: Kind;
    context_md?: string;
    project?: string;
    options?: Array<string | {
        label: string;
        description?: string;
    }>;
    multi?: boolean;
    allow_other?: boolean;
    recommended?: number;
    yes_label?: string;
    no_label?: string;
    placeholder?: string;
    schema?: Record<string, unknown>;
    ttl_minutes?: number;
    ttl_seconds?: number;
    default_outcome?: unknown;
    notify?: string;
    callback_url?: string;
    /**
     * One signed request that resumes a durable workflow when the decision settles: the
     * settled Decision is POSTed to `url` (a Restate awakeable's resolve URL, say), wrapped as
     * `{ [wrap_in]: Decision }` when `wrap_in` is given (docs/API.md, Completion callbacks).
     */
    completion?: {
        url: string;
        wrap_in?: string;
    };
    metadata?: Record<string, unknown>;
    allow_remark?: boolean;
    approvers?: string[];
    urgent?: boolean;
    [field: string]: unknown;
}
/** One page of `list`. */
export interface DecisionPage {
    items: Decision[];
    /** Pass as `cursor` for the next page; null on the last. */
    next: string | null;
}
/** One step of a decision's audit trail (`auditTrail`). */
export interface AuditEvent {
    /** `created`, `viewed`, `notified`, `voted`, `escalated`, `answered`, `declined`, `cancelled`, `expired`, … */
    kind: string;
    at: string;
    detail: Record<string, unknown>;
}
/** One event of the inbox's stream (`events`). */
export interface ResolvedEvent {
    /** The stream's id of the event: pass it as `lastEventId` to resume after it. */
    id: string;
    /** `"decision.resolved"`. */
    type: string;
    decision: Decision;
}
