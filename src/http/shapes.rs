//! The shapes the agent API's OpenAPI annotations name that no handler's own type gives:
//! the request bodies read by hand, the responses built by hand, and the error responses,
//! each the one error shape (`web::ApiError`) with its own example, and the sets of them that
//! endpoints share.

use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::{Object, Ref, RefOr, ResponseBuilder, Type, response};
use utoipa::{IntoResponses, ToResponse, ToSchema};

use crate::domain::{DecisionEvent, Kind, Notify};

// ---- Request bodies parsed by hand, described here ----

/// A create request (`POST /v1/decisions`), the `ask_user` of the MCP tool. Which fields
/// apply depends on `kind`; a field of another kind, or one sayso does not know, is accepted
/// and reported in `warnings`.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
#[schema(example = json!({
    "question": "Deploy v2.3 to production?",
    "kind": "bool",
    "project": "billing",
    "context_md": "All checks green. Migration `0042` is reversible.",
    "ttl_minutes": 30,
    "metadata": {"run": 4711}
}))]
pub struct CreateDecision {
    /// 1–2000 characters after trimming.
    #[schema(min_length = 1, max_length = 2000)]
    question: String,
    kind: Kind,
    /// At most 100 characters; groups and filters.
    project: Option<String>,
    /// `choose`: 2–20 options, each a label or `{label, description?, preview?}`; labels
    /// 1–200 characters and unique within the decision.
    options: Option<Vec<ChoiceOption>>,
    /// `choose`: several options may be picked (default false).
    multi: Option<bool>,
    /// `choose`: index of the recommended option, from 0; out of range is a warning.
    recommended: Option<i64>,
    /// `choose`: offer "Other (type your own)" (default true).
    allow_other: Option<bool>,
    /// `bool`: the yes button's text (default "Yes"), 1–100 characters.
    yes_label: Option<String>,
    /// `bool`: the no button's text (default "No"), 1–100 characters.
    no_label: Option<String>,
    /// `text` and the Other box: hint text, at most 200 characters.
    placeholder: Option<String>,
    /// `form`: a flat JSON Schema object, the MCP elicitation subset: `{"type": "object",
    /// "properties": {…}, "required": […]}`, at most 30 properties of type string, number,
    /// integer, boolean, or an array of enum strings.
    #[schema(value_type = Option<Object>)]
    schema: Option<Value>,
    /// `form`, instead of `schema`: 1–10 questions in the shape coding agents' ask tools send.
    questions: Option<Vec<CodingQuestion>>,
    /// Markdown shown above the controls, at most 64 KiB; rendered sanitised.
    context_md: Option<String>,
    /// A PNG, JPEG, GIF or WebP image, base64, at most 5 MiB decoded; the type is sniffed.
    context_image_b64: Option<String>,
    /// At most 10 links, http(s) only.
    attachments: Option<Vec<Attachment>>,
    /// 1–43200, default 60. Not together with `ttl_seconds`.
    #[schema(minimum = 1, maximum = 43200)]
    ttl_minutes: Option<i64>,
    /// For short waits, 10–2592000. Not together with `ttl_minutes`.
    #[schema(minimum = 10, maximum = 2592000)]
    ttl_seconds: Option<i64>,
    /// Applied on expiry; must be a valid answer for the decision.
    #[schema(value_type = Option<Value>)]
    default_outcome: Option<Value>,
    /// The person may add a free-text remark (default true).
    allow_remark: Option<bool>,
    /// How the person is told (default `push`).
    notify: Option<Notify>,
    /// An http(s) URL that receives a signed webhook on resolution.
    callback_url: Option<String>,
    /// The one request that resumes a durable workflow when the decision settles (answered,
    /// declined, expired or cancelled): a signed POST of the Decision to `url`, retried like
    /// the webhook. The asker names where it goes and its envelope, never its content.
    completion: Option<CompletionRequest>,
    /// At most 4 KiB serialised; echoed back unchanged.
    #[schema(value_type = Option<Object>)]
    metadata: Option<Value>,
    /// `choose`: makes the decision a coding agent's tool approval (`sayso hook`, the MCP
    /// `approve` tool), shown on the approval page. Its options must then be exactly
    /// `Allow`, `Deny` (and `Allow for this session` with a `session_id`); no Other.
    approval: Option<ApprovalRequest>,
    /// Ask only these people of the inbox, by name (1–64 characters of a–z, 0–9, `-`, `_`;
    /// at most 50, each a person of the inbox). Only they see it in their feed and are
    /// notified, and only they may answer it, each through their own link: the `web_url`
    /// then only shows it (`403 answer_elsewhere`). Default: everyone in the inbox.
    #[schema(max_items = 50)]
    approvers: Option<Vec<String>>,
    /// How many people must say yes (`bool`) or Allow (an `approval`) before it resolves,
    /// 1–50 and at most the number of `approvers`; each person counts once, and any no,
    /// Deny or decline resolves it at once. More than 1 only for `bool` and approvals.
    /// Default 1: the first answer resolves it. The decision's `answers` and `progress`
    /// show how far it has come.
    #[schema(minimum = 1, maximum = 50)]
    required: Option<i64>,
    /// Seconds after creation at which a decision still pending goes to `escalate_to` too,
    /// who may then answer it; 1 or more, and less than the decision's time to live.
    #[schema(minimum = 1, maximum = 2592000)]
    escalate_after_s: Option<i64>,
    /// Who an escalation reaches, by name, as `approvers`; needs `escalate_after_s`.
    /// Default: everyone in the inbox not among the `approvers`.
    #[schema(max_items = 50)]
    escalate_to: Option<Vec<String>>,
    /// Notifications go out even in the people's quiet hours (default false).
    urgent: Option<bool>,
}

/// Where a settled decision resumes a workflow: a Restate awakeable's resolve URL, a
/// Trigger.dev wait token's completion URL.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
#[schema(example = json!({"url": "http://127.0.0.1:8080/restate/awakeables/sign_1abc/resolve"}))]
pub struct CompletionRequest {
    /// An absolute http(s) URL, at most 2000 characters; public addresses only unless the
    /// server allows private webhooks.
    url: String,
    /// 1–64 letters, digits, `_` or `-`: the body is then `{"<wrap_in>": Decision}` (e.g.
    /// `data` for Trigger.dev); without it, the Decision itself.
    #[schema(min_length = 1, max_length = 64, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    wrap_in: Option<String>,
}

/// The tool call an approval asks about.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct ApprovalRequest {
    /// The agent: `claude`, `codex`, `gemini`, `copilot`, `cursor`, or another name; 1–200.
    harness: String,
    /// The tool, as the agent names it (`Bash`, `run_shell_command`, `mcp__db__query`); 1–200.
    tool_name: String,
    /// The tool's arguments, an object of at most 256 KiB as JSON.
    #[schema(value_type = Option<Object>)]
    tool_input: Option<Value>,
    /// The agent's working directory.
    cwd: Option<String>,
    /// The agent's session, for "Allow for this session".
    session_id: Option<String>,
    /// RFC 3339: when the agent stops waiting; a later answer is shown as late.
    answer_by: Option<String>,
}

/// An option of a `choose` decision: a plain label, or a label with more to show.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum ChoiceOption {
    Label(String),
    Full {
        label: String,
        description: Option<String>,
        /// Markdown shown when the option is picked: a diff, a mock-up.
        preview: Option<String>,
    },
}

/// A question as Claude Code's AskUserQuestion, gemini-cli's and pi's ask_user send it.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code, non_snake_case)]
pub struct CodingQuestion {
    /// The answer's key in the outcome; the question text when absent.
    id: Option<String>,
    question: String,
    /// A short chip shown above the question.
    header: Option<String>,
    /// `choice` when options are given, else `text`.
    #[schema(value_type = Option<String>, example = "choice")]
    r#type: Option<String>,
    options: Option<Vec<ChoiceOption>>,
    multiSelect: Option<bool>,
    placeholder: Option<String>,
    recommended: Option<i64>,
}

/// A link shown with the question.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct Attachment {
    name: String,
    /// http(s) only.
    url: String,
}

// ---- Responses built by hand in the handlers, described here ----

/// The audit trail of a decision, oldest first.
#[derive(ToSchema)]
#[allow(dead_code)]
#[schema(example = json!({"items": [
    {"at": "2026-05-04T16:58:40Z", "kind": "created", "detail": {}},
    {"at": "2026-05-04T17:01:02Z", "kind": "viewed", "detail": {}},
    {"at": "2026-05-04T17:02:11Z", "kind": "answered", "detail": {"action": "answer"}}
]}))]
pub struct EventList {
    items: Vec<DecisionEvent>,
}

// ---- The error responses, each the one error shape with its own example ----

macro_rules! error_responses {
    ($($name:ident: $description:literal, $code:literal, $message:literal, [$($header:literal),*];)*) => {$(
        #[doc = $description]
        pub struct $name;

        impl<'r> ToResponse<'r> for $name {
            fn response() -> (&'r str, RefOr<response::Response>) {
                (stringify!($name), error_response($description, $code, $message, &[$($header),*]))
            }
        }
    )*};
}

error_responses! {
    BadRequest: "The body is not JSON at all (or is empty, or nested deeper than 128 levels).",
        "bad_request", "the request body is not valid JSON: expected value at line 1 column 1", [];
    Unauthorized: "No API key, or one sayso does not know.",
        "unauthorized", "missing or unknown API key: send Authorization: Bearer sk_…", ["WWW-Authenticate"];
    NotFound: "No such decision in the key's inbox (or no such link).",
        "not_found", "no such decision", [];
    AlreadyResolved: "The decision was already resolved: answered, declined, cancelled or expired.",
        "already_resolved", "the decision was already answered at 2026-05-04T17:02:11Z", [];
    AnswerElsewhere: "The decision is a tool approval, or was sent to people by name \
        (`approvers`, `required`, …): its `web_url` only shows it, and only the people's feeds \
        and notifications answer it. Nothing was changed.",
        "answer_elsewhere", "this is a tool approval, or a question sent to people by name: its web_url only shows it, and nothing was changed; the people asked answer it from their sayso feed or a notification", [];
    Expired: "The decision expired before this answer.",
        "expired", "the decision was already expired at 2026-05-04T17:58:40Z", [];
    PayloadTooLarge: "The body is larger than the limit (8 MiB for a create, 64 KiB otherwise).",
        "payload_too_large", "the request body is too large", [];
    ValidationFailed: "JSON of the wrong shape (`validation_failed`, every problem in `details`), \
        or an `Idempotency-Key` reused with another body (`idempotency_mismatch`).",
        "validation_failed", "options[2].label: must be 1–200 characters", [];
    TooManyRequests: "Rate limited (`rate_limited`), the inbox's daily quota spent \
        (`quota_exceeded`), or, for a request that waits, too many waiting already \
        (`too_many_waiting`); retry after `Retry-After` seconds.",
        "rate_limited", "too many requests; retry after 2 seconds", ["Retry-After"];
    ReceiptNotReady: "No receipt yet: the decision is still `pending` (`pending`), or it is \
        resolved and its receipt is being chained (`receipt_not_ready`; retry after \
        `Retry-After` seconds).",
        "receipt_not_ready", "the decision is resolved but its receipt is not chained yet; retry in a moment", ["Retry-After"];
    Unavailable: "The database cannot be reached; retry after `Retry-After` seconds.",
        "unavailable", "the database is unavailable; retry shortly", ["Retry-After"];
}

fn error_response(
    description: &str,
    code: &str,
    message: &str,
    headers: &[&str],
) -> RefOr<response::Response> {
    let details = if code == "validation_failed" {
        json!([{"path": "options[2].label", "message": "must be 1–200 characters"}])
    } else {
        json!([])
    };
    let example = json!({"error": {"code": code, "message": message, "details": details}});
    let mut builder = ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("Error")))
            .example(Some(example))
            .build(),
    );
    for name in headers {
        let (schema, text) = match *name {
            "Retry-After" => (Type::Integer, "Seconds to wait before retrying."),
            _ => (Type::String, "`Bearer realm=\"sayso\"`"),
        };
        builder = builder.header(
            *name,
            HeaderBuilder::new()
                .schema(Some(Object::with_type(schema)))
                .description(Some(text))
                .build(),
        );
    }
    builder.build().into()
}

// ---- The refusals endpoints share, each set named once ----

// An annotation lists the sets that apply besides its own statuses, as
// `responses((status = 200, …), (status = 404, response = NotFound), KeyedRefusals)`. Each
// status of a set references its response component, as `(status = …, response = …)` does,
// so the document is the same either way. The sets are only types, never built.
macro_rules! refusal_sets {
    ($($(#[doc = $doc:literal])* $set:ident { $($status:tt: $response:ident),* };)*) => {$(
        $(#[doc = $doc])*
        #[derive(IntoResponses)]
        #[allow(dead_code)]
        pub enum $set {
            $(#[response(status = $status)] $response(#[ref_response] $response),)*
        }
    )*};
}

refusal_sets! {
    /// What any request with the API key may be refused: an unknown key, too many requests,
    /// or no database.
    KeyedRefusals { 401: Unauthorized, 429: TooManyRequests, 503: Unavailable };
    /// What any request with a JSON body may be refused: not JSON, too large, or the wrong
    /// shape.
    BodyRefusals { 400: BadRequest, 413: PayloadTooLarge, 422: ValidationFailed };
}
