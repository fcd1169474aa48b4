//! Parsing a create request (`POST /v1/decisions`, MCP `ask_user`) into a `NewDecision`.
//!
//! Hard errors only for what would make the decision unanswerable or unsafe; anything
//! harmless (an unknown field, a field another kind uses, a `recommended` out of range) is
//! accepted and reported in `warnings`. Every problem is collected, not just the first.

use std::io::{self, Write};

use serde_json::{Map, Value};
use time::Duration;

use super::answer::check_outcome;
use super::approval::{ALLOW, ALLOW_SESSION, ApprovalSpec, DENY, parse_approval};
use super::completion::parse_completion;
use super::decision::NewDecision;
use super::form_schema::parse_form_schema;
use super::image::decode_image;
use super::issues::{Issue, Issues, index, join};
use super::kind::{Kind, Notify};
use super::options::{parse_options, parse_recommended};
use super::people::{self, Routing};
use super::questions::parse_questions;
use super::read::{self, quote_short};
use super::spec::{Attachment, DecisionSpec, KindSpec};

pub const MAX_QUESTION_CHARS: usize = 2000;
pub const MAX_PROJECT_CHARS: usize = 100;
pub const MIN_OPTIONS: usize = 2;
pub const MAX_OPTIONS: usize = 20;
pub const MAX_PLACEHOLDER_CHARS: usize = 200;
pub const MAX_BUTTON_LABEL_CHARS: usize = 100;
pub const MAX_CONTEXT_MD_BYTES: usize = 64 * 1024;
pub const MAX_ATTACHMENTS: usize = 10;
pub const MAX_ATTACHMENT_NAME_CHARS: usize = 200;
pub const MAX_METADATA_BYTES: usize = 4096;
pub const DEFAULT_TTL_MINUTES: i64 = 60;
pub const MAX_TTL_MINUTES: i64 = 43_200;
pub const MIN_TTL_SECONDS: i64 = 10;
pub const MAX_TTL_SECONDS: i64 = 2_592_000;
/// The fields that say who is asked and how many must agree (`people::Routing`).
pub const ROUTING_FIELDS: [&str; 5] = [
    "approvers",
    "required",
    "escalate_after_s",
    "escalate_to",
    "urgent",
];

/// Every top-level field, with the kinds it belongs to (`None`: every kind).
const FIELDS: &[(&str, Option<&[Kind]>)] = &[
    ("question", None),
    ("kind", None),
    ("project", None),
    ("options", Some(&[Kind::Choose])),
    ("multi", Some(&[Kind::Choose])),
    ("recommended", Some(&[Kind::Choose])),
    ("allow_other", Some(&[Kind::Choose])),
    ("yes_label", Some(&[Kind::Bool])),
    ("no_label", Some(&[Kind::Bool])),
    ("placeholder", Some(&[Kind::Choose, Kind::Text])),
    ("schema", Some(&[Kind::Form])),
    ("questions", Some(&[Kind::Form])),
    ("context_md", None),
    ("context_image_b64", None),
    ("attachments", None),
    ("ttl_minutes", None),
    ("ttl_seconds", None),
    ("default_outcome", None),
    ("allow_remark", None),
    ("notify", None),
    ("callback_url", None),
    ("completion", None),
    ("metadata", None),
    ("approval", Some(&[Kind::Choose])),
    ("approvers", None),
    ("required", None),
    ("escalate_after_s", None),
    ("escalate_to", None),
    ("urgent", None),
];

/// Parses and validates a create request body. Every problem is listed with its JSON path;
/// harmless ones become `warnings` on the result.
pub fn parse_new_decision(body: &Value) -> Result<NewDecision, Vec<Issue>> {
    let mut issues = Issues::new();
    let mut warnings = Vec::new();
    let Some(obj) = body.as_object() else {
        issues.push("", "the request body must be a JSON object");
        return Err(issues.into_vec());
    };
    let known: Vec<&str> = FIELDS.iter().map(|(name, _)| *name).collect();
    read::warn_unknown(obj, &known, "", &mut warnings);

    let question = required(obj, "question", &mut issues)
        .and_then(|v| read::text(v, "question", &mut issues, 1, MAX_QUESTION_CHARS));
    let kind = required(obj, "kind", &mut issues).and_then(|v| parse_kind(v, &mut issues));
    let project = read::optional_text(
        read::get(obj, "project"),
        "project",
        &mut issues,
        MAX_PROJECT_CHARS,
    );
    let body = kind.and_then(|kind| {
        warn_foreign_fields(obj, kind, &mut warnings);
        parse_kind_spec(obj, kind, &mut issues, &mut warnings)
    });
    let context_md = parse_context_md(read::get(obj, "context_md"), &mut issues);
    let image = read::get(obj, "context_image_b64")
        .and_then(|v| read::string(v, "context_image_b64", &mut issues))
        .filter(|s| !s.trim().is_empty())
        .and_then(|s| decode_image(s, "context_image_b64", &mut issues));
    let attachments = read::get(obj, "attachments")
        .map(|v| parse_attachments(v, &mut issues, &mut warnings))
        .unwrap_or_default();
    let ttl = parse_ttl(obj, &mut issues);
    let allow_remark = read::get(obj, "allow_remark")
        .and_then(|v| read::boolean(v, "allow_remark", &mut issues))
        .unwrap_or(true);
    let notify = read::get(obj, "notify")
        .and_then(|v| parse_notify(v, &mut issues))
        .unwrap_or_default();
    let callback_url = read::get(obj, "callback_url")
        .and_then(|v| read::string(v, "callback_url", &mut issues))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .and_then(|s| read::parse_http_url(s, "callback_url", &mut issues));
    let completion =
        read::get(obj, "completion").and_then(|v| parse_completion(v, &mut issues, &mut warnings));
    let metadata = read::get(obj, "metadata")
        .and_then(|v| parse_metadata(v, &mut issues))
        .unwrap_or_default();

    let approval =
        read::get(obj, "approval").and_then(|v| parse_approval(v, &mut issues, &mut warnings));
    let mut body = body;
    if let (Some(a), Some(b)) = (&approval, body.as_mut()) {
        check_approval_body(a, b, &mut issues);
    }
    let routing = parse_routing(obj, kind, approval.is_some(), ttl, &mut issues);
    let (Some(question), Some(body), Some(ttl)) = (question, body, ttl) else {
        return Err(issues.into_vec());
    };
    let mut spec = DecisionSpec {
        question,
        project,
        body,
        context_md,
        attachments,
        allow_remark,
        notify,
        callback_url,
        completion,
        metadata,
        default_outcome: None,
        shape: None,
        approval,
        routing,
    };
    if let Some(default) = read::get(obj, "default_outcome") {
        spec.default_outcome = check_outcome(&spec, default, "default_outcome", &mut issues)
            .map(|(outcome, _custom)| outcome);
    }
    issues.finish(NewDecision {
        spec,
        ttl,
        image,
        warnings,
    })
}

/// A member that must be present (and not null).
fn required<'a>(obj: &'a Map<String, Value>, key: &str, issues: &mut Issues) -> Option<&'a Value> {
    let v = read::get(obj, key);
    if v.is_none() {
        issues.push(key, "is required");
    }
    v
}

fn parse_kind(v: &Value, issues: &mut Issues) -> Option<Kind> {
    let s = read::string(v, "kind", issues)?;
    let kind = Kind::parse(s.trim());
    if kind.is_none() {
        issues.push(
            "kind",
            format!(
                "must be one of bool, choose, text, form, todo (got {})",
                quote_short(s)
            ),
        );
    }
    kind
}

/// Warns about each given field that another kind uses.
fn warn_foreign_fields(obj: &Map<String, Value>, kind: Kind, warnings: &mut Vec<String>) {
    for (name, kinds) in FIELDS {
        let Some(kinds) = kinds else { continue };
        if read::get(obj, name).is_some() && !kinds.contains(&kind) {
            let owners: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
            warnings.push(format!(
                "{name} is only used by kind {} and was ignored for kind {}",
                owners.join(" and "),
                kind.as_str()
            ));
        }
    }
}

fn parse_kind_spec(
    obj: &Map<String, Value>,
    kind: Kind,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<KindSpec> {
    let placeholder = |issues: &mut Issues| {
        read::optional_text(
            read::get(obj, "placeholder"),
            "placeholder",
            issues,
            MAX_PLACEHOLDER_CHARS,
        )
    };
    match kind {
        Kind::Bool => {
            let label = |key: &str, default: &str, issues: &mut Issues| match read::get(obj, key) {
                Some(v) => read::text(v, key, issues, 1, MAX_BUTTON_LABEL_CHARS),
                None => Some(default.to_string()),
            };
            let yes_label = label("yes_label", "Yes", issues);
            let no_label = label("no_label", "No", issues);
            let (yes_label, no_label) = (yes_label?, no_label?);
            if yes_label.to_lowercase() == no_label.to_lowercase() {
                issues.push("no_label", "must differ from yes_label");
                return None;
            }
            Some(KindSpec::Bool {
                yes_label,
                no_label,
            })
        }
        Kind::Choose => {
            let options = match read::get(obj, "options") {
                Some(v) => parse_options(v, "options", MIN_OPTIONS, MAX_OPTIONS, issues, warnings),
                None => {
                    issues.push(
                        "options",
                        format!("is required for kind choose: {MIN_OPTIONS}–{MAX_OPTIONS} options"),
                    );
                    None
                }
            };
            let multi = read::get(obj, "multi")
                .and_then(|v| read::boolean(v, "multi", issues))
                .unwrap_or(false);
            let recommended = parse_recommended(
                read::get(obj, "recommended"),
                "recommended",
                options.as_ref().map(Vec::len),
                issues,
                warnings,
            );
            let allow_other = read::get(obj, "allow_other")
                .and_then(|v| read::boolean(v, "allow_other", issues))
                .unwrap_or(true);
            let placeholder = placeholder(issues);
            Some(KindSpec::Choose {
                options: options?,
                multi,
                recommended,
                allow_other,
                placeholder,
            })
        }
        Kind::Text => Some(KindSpec::Text {
            placeholder: placeholder(issues),
        }),
        Kind::Form => {
            let form = match (read::get(obj, "schema"), read::get(obj, "questions")) {
                (Some(schema), None) => parse_form_schema(schema, "schema", issues, warnings),
                (None, Some(questions)) => {
                    parse_questions(questions, "questions", issues, warnings)
                }
                (Some(_), Some(_)) => {
                    issues.push("questions", "give either schema or questions, not both");
                    None
                }
                (None, None) => {
                    issues.push(
                        "schema",
                        "is required for kind form: give schema (a flat JSON Schema) or questions",
                    );
                    None
                }
            };
            form.map(KindSpec::Form)
        }
        Kind::Todo => Some(KindSpec::Todo),
    }
}

/// Markdown context, limited in bytes; blank counts as absent.
fn parse_context_md(v: Option<&Value>, issues: &mut Issues) -> Option<String> {
    let s = read::string(v?, "context_md", issues)?;
    if s.len() > MAX_CONTEXT_MD_BYTES {
        issues.push(
            "context_md",
            format!("must be at most 64 KiB (got {} bytes)", s.len()),
        );
        return None;
    }
    (!s.trim().is_empty()).then(|| s.to_string())
}

fn parse_attachments(
    v: &Value,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Vec<Attachment> {
    let Some(items) = read::array(v, "attachments", issues) else {
        return Vec::new();
    };
    if items.len() > MAX_ATTACHMENTS {
        issues.push(
            "attachments",
            format!(
                "must have at most {MAX_ATTACHMENTS} links (got {})",
                items.len()
            ),
        );
        return Vec::new();
    }
    let mut attachments = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = index("attachments", i);
        let Some(obj) = read::object(item, &path, issues) else {
            continue;
        };
        read::warn_unknown(obj, &["name", "url"], &path, warnings);
        let name_path = join(&path, "name");
        let name = required_at(obj, "name", &name_path, issues)
            .and_then(|v| read::text(v, &name_path, issues, 1, MAX_ATTACHMENT_NAME_CHARS));
        let url_path = join(&path, "url");
        let url = required_at(obj, "url", &url_path, issues)
            .and_then(|v| read::string(v, &url_path, issues))
            .and_then(|s| read::parse_http_url(s.trim(), &url_path, issues));
        if let (Some(name), Some(url)) = (name, url) {
            attachments.push(Attachment { name, url });
        }
    }
    attachments
}

fn required_at<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
    issues: &mut Issues,
) -> Option<&'a Value> {
    let v = read::get(obj, key);
    if v.is_none() {
        issues.push(path, "is required");
    }
    v
}

fn parse_ttl(obj: &Map<String, Value>, issues: &mut Issues) -> Option<Duration> {
    let minutes = read::get(obj, "ttl_minutes");
    let seconds = read::get(obj, "ttl_seconds");
    let minutes = minutes.map(|v| read::integer_in(v, "ttl_minutes", issues, 1, MAX_TTL_MINUTES));
    let seconds = seconds
        .map(|v| read::integer_in(v, "ttl_seconds", issues, MIN_TTL_SECONDS, MAX_TTL_SECONDS));
    match (minutes, seconds) {
        (Some(_), Some(_)) => {
            issues.push(
                "ttl_seconds",
                "give either ttl_minutes or ttl_seconds, not both",
            );
            None
        }
        (Some(m), None) => m.map(Duration::minutes),
        (None, Some(s)) => s.map(Duration::seconds),
        (None, None) => Some(Duration::minutes(DEFAULT_TTL_MINUTES)),
    }
}

/// `approvers`, `required`, `escalate_after_s`, `escalate_to` and `urgent`: who is asked
/// and how many must agree (`people::Routing`). `None` when none is given. The names are
/// checked against the inbox's people when the decision is created.
fn parse_routing(
    obj: &Map<String, Value>,
    kind: Option<Kind>,
    is_approval: bool,
    ttl: Option<Duration>,
    issues: &mut Issues,
) -> Option<Routing> {
    if ROUTING_FIELDS.iter().all(|f| read::get(obj, f).is_none()) {
        return None;
    }
    let names = |field: &str, issues: &mut Issues| -> Vec<String> {
        let Some(list) = read::get(obj, field).and_then(|v| read::array(v, field, issues)) else {
            return Vec::new();
        };
        if list.len() > people::MAX_NAMED {
            issues.push(field, format!("names at most {} people", people::MAX_NAMED));
            return Vec::new();
        }
        let mut names: Vec<String> = Vec::new();
        for (i, v) in list.iter().enumerate() {
            let path = index(field, i);
            let Some(name) = read::string(v, &path, issues) else {
                continue;
            };
            let name = name.trim();
            match people::check_name(name) {
                Err(e) => issues.push(&path, e),
                Ok(()) if !names.iter().any(|n| n == name) => names.push(name.to_string()),
                Ok(()) => {}
            }
        }
        names
    };
    let approvers = names("approvers", issues);
    let escalate_to = names("escalate_to", issues);
    let required = read::get(obj, "required")
        .and_then(|v| read::integer_in(v, "required", issues, 1, people::MAX_NAMED as i64))
        .unwrap_or(1) as u32;
    let escalate_after_s = read::get(obj, "escalate_after_s")
        .and_then(|v| read::integer_in(v, "escalate_after_s", issues, 1, MAX_TTL_SECONDS))
        .map(|s| s as u32);
    let urgent = read::get(obj, "urgent")
        .and_then(|v| read::boolean(v, "urgent", issues))
        .unwrap_or(false);
    // Several people agree on a yes or no: a bool, or a tool approval's Allow.
    if required > 1 && !(kind == Some(Kind::Bool) || is_approval) {
        issues.push(
            "required",
            "more than one person can only agree on a yes/no question (kind bool) or a tool approval",
        );
    }
    if !approvers.is_empty() && required as usize > approvers.len() {
        issues.push(
            "required",
            format!(
                "asks {required} people to agree but approvers names {}",
                approvers.len()
            ),
        );
    }
    if let (Some(after), Some(ttl)) = (escalate_after_s, ttl)
        && i64::from(after) >= ttl.whole_seconds()
    {
        issues.push(
            "escalate_after_s",
            format!(
                "is {after} s, but the decision expires after {} s: escalate before it does",
                ttl.whole_seconds()
            ),
        );
    }
    if !escalate_to.is_empty() && escalate_after_s.is_none() {
        issues.push("escalate_to", "needs escalate_after_s: when to escalate");
    }
    Some(Routing {
        approvers,
        required,
        escalate_after_s,
        escalate_to,
        urgent,
    })
}

fn parse_notify(v: &Value, issues: &mut Issues) -> Option<Notify> {
    let s = read::string(v, "notify", issues)?;
    let notify = Notify::parse(s.trim());
    if notify.is_none() {
        issues.push(
            "notify",
            format!("must be one of push, email, none (got {})", quote_short(s)),
        );
    }
    notify
}

fn parse_metadata(v: &Value, issues: &mut Issues) -> Option<Map<String, Value>> {
    let obj = read::object(v, "metadata", issues)?;
    let mut counter = ByteCounter {
        bytes: 0,
        limit: MAX_METADATA_BYTES,
    };
    if serde_json::to_writer(&mut counter, obj).is_err() {
        issues.push(
            "metadata",
            format!("must be at most {MAX_METADATA_BYTES} bytes as JSON"),
        );
        return None;
    }
    Some(obj.clone())
}

/// Counts serialised bytes and stops the writer past a limit, so that an oversized value
/// is never serialised in full.
struct ByteCounter {
    bytes: usize,
    limit: usize,
}

impl Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes += buf.len();
        if self.bytes > self.limit {
            return Err(io::Error::other("too large"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The `choose` body an approval must have: its options exactly the approval answers
/// (`Allow`, `Deny`, and `Allow for this session` when the asker offers it, which needs a
/// session and no step-up), one pick, no "Other".
fn check_approval_body(approval: &ApprovalSpec, body: &mut KindSpec, issues: &mut Issues) {
    let KindSpec::Choose {
        options,
        multi,
        allow_other,
        ..
    } = body
    else {
        issues.push("approval", "needs kind choose");
        return;
    };
    let labels: Vec<&str> = options.iter().map(|o| o.label.as_str()).collect();
    let with_session = [ALLOW, DENY, ALLOW_SESSION];
    let session_allowed = approval.session_id.is_some() && approval.step_up.is_none();
    if labels != [ALLOW, DENY] && (labels != with_session || !session_allowed) {
        let expected = if session_allowed {
            format!("{ALLOW}, {DENY} (and {ALLOW_SESSION})")
        } else if approval.step_up.is_some() {
            format!("{ALLOW}, {DENY} (an Allow that needs a passkey is never for a whole session)")
        } else {
            format!("{ALLOW}, {DENY} ({ALLOW_SESSION} needs a session_id)")
        };
        issues.push(
            "options",
            format!(
                "an approval's options must be {expected} (got {})",
                labels.join(", ")
            ),
        );
    }
    if *multi {
        issues.push("multi", "an approval takes one answer");
    }
    *allow_other = false;
}

/// The decisions the tests build on: one of no inbox, made from the create request `body`,
/// pending from `created_at` to `expires_at`.
#[cfg(test)]
impl super::decision::Decision {
    pub fn asked(
        body: &Value,
        created_at: time::OffsetDateTime,
        expires_at: time::OffsetDateTime,
    ) -> Self {
        Self {
            id: uuid::Uuid::nil(),
            inbox_id: uuid::Uuid::nil(),
            spec: parse_new_decision(body).unwrap().spec,
            status: super::kind::Status::Pending,
            outcome: None,
            outcome_source: None,
            custom: false,
            remark: None,
            created_at,
            expires_at,
            resolved_at: None,
            has_image: false,
            answered_by: None,
            answers: Vec::new(),
            cancel_reason: None,
        }
    }
}

#[cfg(test)]
mod tests;
