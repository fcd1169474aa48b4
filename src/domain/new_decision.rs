//! Parsing a create request (`POST /v1/decisions`, MCP `ask_user`) into a `NewDecision`.
//!
//! Hard errors only for what would make the decision unanswerable or unsafe; anything
//! harmless (an unknown field, a field another kind uses, a `recommended` out of range) is
//! accepted and reported in `warnings`. Every problem is collected, not just the first.

use std::io::{self, Write};

use serde_json::{Map, Value};
use time::Duration;

use super::answer::check_outcome;
use super::decision::NewDecision;
use super::form_schema::parse_form_schema;
use super::image::decode_image;
use super::issues::{Issue, Issues, index, join};
use super::kind::{Kind, Notify};
use super::options::{parse_options, parse_recommended};
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
pub const MAX_URL_CHARS: usize = 2000;
pub const MAX_METADATA_BYTES: usize = 4096;
pub const DEFAULT_TTL_MINUTES: i64 = 60;
pub const MAX_TTL_MINUTES: i64 = 43_200;
pub const MIN_TTL_SECONDS: i64 = 10;
pub const MAX_TTL_SECONDS: i64 = 2_592_000;

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
    ("metadata", None),
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
        .and_then(|s| parse_http_url(s, "callback_url", &mut issues));
    let metadata = read::get(obj, "metadata")
        .and_then(|v| parse_metadata(v, &mut issues))
        .unwrap_or_default();

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
        metadata,
        default_outcome: None,
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
            .and_then(|s| parse_http_url(s.trim(), &url_path, issues));
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

/// An absolute `http` or `https` URL; anything else (`javascript:`, `file:`, relative) is
/// refused, as the person would be sent there.
fn parse_http_url(s: &str, path: &str, issues: &mut Issues) -> Option<String> {
    if read::chars(s) > MAX_URL_CHARS {
        issues.push(
            path,
            format!(
                "must be at most {MAX_URL_CHARS} characters (got {})",
                read::chars(s)
            ),
        );
        return None;
    }
    match url::Url::parse(s) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Some(url.to_string()),
        Ok(url) => {
            issues.push(
                path,
                format!(
                    "must be an http or https URL (got a {}: URL)",
                    quote_short(url.scheme())
                ),
            );
            None
        }
        Err(e) => {
            issues.push(path, format!("must be an absolute http or https URL ({e})"));
            None
        }
    }
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

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use serde_json::json;

    use super::*;
    use crate::domain::spec::{FieldInput, FormSource};

    fn parse(body: Value) -> NewDecision {
        parse_new_decision(&body).unwrap_or_else(|e| panic!("refused: {e:?}"))
    }

    fn refused(body: Value) -> Vec<Issue> {
        match parse_new_decision(&body) {
            Ok(d) => panic!("accepted: {d:?}"),
            Err(issues) => issues,
        }
    }

    /// The message at `path`, failing when there is none.
    fn message_at(body: Value, path: &str) -> String {
        let issues = refused(body);
        issues
            .iter()
            .find(|i| i.path == path)
            .map(|i| i.message.clone())
            .unwrap_or_else(|| panic!("no issue at {path}: {issues:?}"))
    }

    fn with(mut base: Value, extra: Value) -> Value {
        for (k, v) in extra.as_object().unwrap() {
            base[k] = v.clone();
        }
        base
    }

    fn bool_q() -> Value {
        json!({"question": "Deploy to production?", "kind": "bool"})
    }

    fn choose_q() -> Value {
        json!({"question": "Which plan?", "kind": "choose", "options": ["A", "B", "C"]})
    }

    #[test]
    fn a_minimal_bool_gets_the_defaults() {
        let d = parse(bool_q());
        assert_eq!(d.spec.question, "Deploy to production?");
        assert_eq!(
            d.spec.body,
            KindSpec::Bool {
                yes_label: "Yes".into(),
                no_label: "No".into()
            }
        );
        assert_eq!(d.ttl, Duration::minutes(60));
        assert!(d.spec.allow_remark);
        assert_eq!(d.spec.notify, Notify::Push);
        assert!(d.spec.metadata.is_empty());
        assert!(d.image.is_none());
        assert!(d.warnings.is_empty());
    }

    #[test]
    fn a_body_that_is_not_an_object_is_one_issue_at_the_root() {
        for body in [json!([]), json!("ask"), json!(null), json!(3)] {
            let issues = refused(body);
            assert_eq!(issues.len(), 1);
            assert_eq!(issues[0].path, "");
            assert_eq!(issues[0].message, "the request body must be a JSON object");
        }
    }

    #[test]
    fn every_problem_is_listed_at_once() {
        let issues = refused(json!({
            "kind": "choose",
            "options": ["A", "A"],
            "ttl_minutes": 0,
            "notify": "sms",
            "metadata": [1]
        }));
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "question",
                "options[1].label",
                "ttl_minutes",
                "notify",
                "metadata"
            ]
        );
    }

    #[test]
    fn question_is_required_trimmed_and_limited_to_2000_chars() {
        assert_eq!(
            message_at(json!({"kind": "bool"}), "question"),
            "is required"
        );
        assert_eq!(
            message_at(json!({"kind": "bool", "question": null}), "question"),
            "is required"
        );
        assert_eq!(
            parse(json!({"kind": "bool", "question": "  Ship?  "}))
                .spec
                .question,
            "Ship?"
        );
        let long = "q".repeat(2417);
        assert_eq!(
            message_at(json!({"kind": "bool", "question": long}), "question"),
            "must be 1–2000 characters after trimming (got 2417)"
        );
        assert!(
            message_at(json!({"kind": "bool", "question": "   "}), "question")
                .starts_with("must not be empty")
        );
        assert_eq!(
            message_at(json!({"kind": "bool", "question": 5}), "question"),
            "must be a string (got a number)"
        );
        // Characters, not bytes.
        parse(json!({"kind": "bool", "question": "é".repeat(2000)}));
    }

    #[test]
    fn kind_must_be_one_of_the_five() {
        assert_eq!(
            message_at(json!({"question": "Q", "kind": "maybe"}), "kind"),
            "must be one of bool, choose, text, form, todo (got \"maybe\")"
        );
        assert_eq!(message_at(json!({"question": "Q"}), "kind"), "is required");
        assert_eq!(
            message_at(json!({"question": "Q", "kind": 1}), "kind"),
            "must be a string (got a number)"
        );
    }

    #[test]
    fn project_is_trimmed_limited_and_blank_means_absent() {
        let d = parse(with(bool_q(), json!({"project": " billing "})));
        assert_eq!(d.spec.project.as_deref(), Some("billing"));
        assert_eq!(
            parse(with(bool_q(), json!({"project": "  "}))).spec.project,
            None
        );
        assert_eq!(
            parse(with(bool_q(), json!({"project": null}))).spec.project,
            None
        );
        message_at(
            with(bool_q(), json!({"project": "p".repeat(101)})),
            "project",
        );
        message_at(with(bool_q(), json!({"project": ["x"]})), "project");
    }

    #[test]
    fn choose_options_accept_strings_and_objects() {
        let d = parse(json!({
            "question": "Which?", "kind": "choose",
            "options": ["Plan A", {"label": "Plan B", "description": "cheaper", "preview": "```\nx\n```"}],
        }));
        let KindSpec::Choose {
            options,
            multi,
            recommended,
            allow_other,
            placeholder,
        } = d.spec.body
        else {
            panic!("not a choose")
        };
        assert_eq!(options.len(), 2);
        assert_eq!(options[0].value, "Plan A");
        assert_eq!(options[1].value, options[1].label);
        assert_eq!(options[1].description.as_deref(), Some("cheaper"));
        assert!(options[1].preview.is_some());
        assert!(!multi);
        assert_eq!(recommended, None);
        assert!(allow_other);
        assert_eq!(placeholder, None);
    }

    #[test]
    fn choose_needs_2_to_20_options_with_unique_labels() {
        let q = json!({"question": "Which?", "kind": "choose"});
        assert!(message_at(q.clone(), "options").starts_with("is required"));
        assert_eq!(
            message_at(with(q.clone(), json!({"options": ["A"]})), "options"),
            "must have 2–20 options (got 1)"
        );
        let many: Vec<String> = (0..21).map(|i| format!("o{i}")).collect();
        message_at(with(q.clone(), json!({"options": many})), "options");
        assert!(
            message_at(
                with(q.clone(), json!({"options": ["A", "B", "C", "B"]})),
                "options[3].label"
            )
            .contains("duplicate label \"B\"")
        );
        message_at(
            with(
                q.clone(),
                json!({"options": ["A", {"label": "x".repeat(201)}]}),
            ),
            "options[1].label",
        );
        message_at(
            with(
                q.clone(),
                json!({"options": ["A", {"label": "B", "description": "d".repeat(1001)}]}),
            ),
            "options[1].description",
        );
        message_at(
            with(
                q.clone(),
                json!({"options": ["A", {"label": "B", "preview": "p".repeat(16 * 1024 + 1)}]}),
            ),
            "options[1].preview",
        );
        message_at(with(q, json!({"options": "A, B"})), "options");
    }

    #[test]
    fn choose_flags_are_type_checked() {
        assert_eq!(
            message_at(with(choose_q(), json!({"multi": "yes"})), "multi"),
            "must be true or false (got a string)"
        );
        message_at(with(choose_q(), json!({"allow_other": 1})), "allow_other");
        message_at(with(choose_q(), json!({"recommended": "1"})), "recommended");
        message_at(with(choose_q(), json!({"recommended": 1.5})), "recommended");
        message_at(
            with(choose_q(), json!({"placeholder": "p".repeat(201)})),
            "placeholder",
        );
        let d = parse(with(
            choose_q(),
            json!({"multi": true, "allow_other": false, "recommended": 1, "placeholder": "Other…"}),
        ));
        assert_eq!(
            d.spec.body,
            KindSpec::Choose {
                options: match &d.spec.body {
                    KindSpec::Choose { options, .. } => options.clone(),
                    _ => unreachable!(),
                },
                multi: true,
                recommended: Some(1),
                allow_other: false,
                placeholder: Some("Other…".into()),
            }
        );
    }

    #[test]
    fn recommended_out_of_range_is_dropped_with_a_warning() {
        let d = parse(with(choose_q(), json!({"recommended": 7})));
        assert!(matches!(
            d.spec.body,
            KindSpec::Choose {
                recommended: None,
                ..
            }
        ));
        assert!(
            d.warnings[0].starts_with("recommended index 7 is out of range and was ignored"),
            "{:?}",
            d.warnings
        );
        let d = parse(with(choose_q(), json!({"recommended": -1})));
        assert_eq!(d.warnings.len(), 1);
    }

    #[test]
    fn bool_labels_default_and_are_limited() {
        let d = parse(with(
            bool_q(),
            json!({"yes_label": " Ship it ", "no_label": "Wait"}),
        ));
        assert_eq!(
            d.spec.body,
            KindSpec::Bool {
                yes_label: "Ship it".into(),
                no_label: "Wait".into()
            }
        );
        message_at(with(bool_q(), json!({"yes_label": ""})), "yes_label");
        message_at(
            with(bool_q(), json!({"no_label": "n".repeat(101)})),
            "no_label",
        );
        message_at(with(bool_q(), json!({"no_label": 0})), "no_label");
        assert_eq!(
            message_at(
                with(bool_q(), json!({"yes_label": "Go", "no_label": "go"})),
                "no_label"
            ),
            "must differ from yes_label"
        );
    }

    #[test]
    fn text_takes_a_placeholder() {
        let d = parse(json!({"question": "Name?", "kind": "text", "placeholder": "payments-…"}));
        assert_eq!(
            d.spec.body,
            KindSpec::Text {
                placeholder: Some("payments-…".into())
            }
        );
    }

    #[test]
    fn todo_needs_nothing_else() {
        let d = parse(json!({"question": "Rotate the keys", "kind": "todo"}));
        assert_eq!(d.spec.body, KindSpec::Todo);
    }

    #[test]
    fn unknown_fields_are_warnings() {
        let d = parse(with(bool_q(), json!({"foo": 1, "urgency": "high"})));
        assert_eq!(
            d.warnings,
            [
                "unknown field \"foo\" ignored",
                "unknown field \"urgency\" ignored"
            ]
        );
    }

    #[test]
    fn fields_of_another_kind_are_warnings_and_not_checked() {
        let d = parse(json!({
            "question": "Name?", "kind": "text",
            "yes_label": 5, "options": "nonsense", "schema": {}
        }));
        assert_eq!(d.warnings.len(), 3, "{:?}", d.warnings);
        assert!(d.warnings[0].starts_with("options is only used by kind choose"));
        assert!(d.warnings[1].starts_with("yes_label is only used by kind bool"));
        assert_eq!(d.spec.body, KindSpec::Text { placeholder: None });
    }

    #[test]
    fn form_needs_exactly_one_of_schema_and_questions() {
        let q = json!({"question": "Details", "kind": "form"});
        assert!(message_at(q.clone(), "schema").starts_with("is required"));
        let both = with(
            q.clone(),
            json!({
                "schema": {"properties": {"a": {"type": "string"}}},
                "questions": [{"question": "a?"}]
            }),
        );
        assert_eq!(
            message_at(both, "questions"),
            "give either schema or questions, not both"
        );
        let d = parse(with(
            q.clone(),
            json!({"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}),
        ));
        let KindSpec::Form(form) = &d.spec.body else {
            panic!()
        };
        assert_eq!(form.source, FormSource::Schema);
        let d = parse(with(q, json!({"questions": [{"question": "a?"}]})));
        let KindSpec::Form(form) = &d.spec.body else {
            panic!()
        };
        assert_eq!(form.source, FormSource::Questions);
        assert!(matches!(form.fields[0].input, FieldInput::Text { .. }));
    }

    #[test]
    fn form_problems_carry_their_full_path() {
        let body = json!({
            "question": "Details", "kind": "form",
            "schema": {"properties": {"address": {"type": "object"}}}
        });
        message_at(body, "schema.properties.address.type");
        let body = json!({
            "question": "Details", "kind": "form",
            "questions": [{"question": "a?", "type": "choice", "options": []}]
        });
        message_at(body, "questions[0].options");
    }

    #[test]
    fn context_md_is_limited_to_64_kib() {
        let d = parse(with(
            bool_q(),
            json!({"context_md": "## Diff\n```\n+x\n```"}),
        ));
        assert!(d.spec.context_md.is_some());
        assert_eq!(
            message_at(
                with(bool_q(), json!({"context_md": "x".repeat(65 * 1024)})),
                "context_md"
            ),
            "must be at most 64 KiB (got 66560 bytes)"
        );
        assert_eq!(
            parse(with(bool_q(), json!({"context_md": ""})))
                .spec
                .context_md,
            None
        );
    }

    #[test]
    fn context_image_is_decoded_and_sniffed() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let b64 = base64::engine::general_purpose::STANDARD.encode(png);
        let d = parse(with(bool_q(), json!({ "context_image_b64": b64 })));
        let image = d.image.unwrap();
        assert_eq!(image.content_type, "image/png");
        assert_eq!(image.bytes, png);
        let pdf = base64::engine::general_purpose::STANDARD.encode(b"%PDF-1.4");
        message_at(
            with(bool_q(), json!({ "context_image_b64": pdf })),
            "context_image_b64",
        );
        message_at(
            with(bool_q(), json!({ "context_image_b64": "%%%" })),
            "context_image_b64",
        );
        message_at(
            with(bool_q(), json!({ "context_image_b64": 12 })),
            "context_image_b64",
        );
    }

    #[test]
    fn attachments_are_http_links() {
        let d = parse(with(
            bool_q(),
            json!({"attachments": [{"name": "PR", "url": "https://example.com/pr/1"}]}),
        ));
        assert_eq!(
            d.spec.attachments,
            [Attachment {
                name: "PR".into(),
                url: "https://example.com/pr/1".into()
            }]
        );
        let bad = with(
            bool_q(),
            json!({"attachments": [
                {"name": "x", "url": "javascript:alert(1)"},
                {"name": "", "url": "https://example.com"},
                {"name": "rel", "url": "/relative"},
                {"url": "https://example.com"},
                "https://example.com"
            ]}),
        );
        let issues = refused(bad);
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "attachments[0].url",
                "attachments[1].name",
                "attachments[2].url",
                "attachments[3].name",
                "attachments[4]"
            ]
        );
        assert_eq!(
            issues[0].message,
            "must be an http or https URL (got a \"javascript\": URL)"
        );
        let eleven: Vec<Value> = (0..11)
            .map(|i| json!({"name": format!("n{i}"), "url": "https://example.com"}))
            .collect();
        message_at(
            with(bool_q(), json!({ "attachments": eleven })),
            "attachments",
        );
    }

    #[test]
    fn ttl_minutes_and_seconds_are_checked_integers() {
        assert_eq!(
            parse(with(bool_q(), json!({"ttl_minutes": 5}))).ttl,
            Duration::minutes(5)
        );
        assert_eq!(
            parse(with(bool_q(), json!({"ttl_seconds": 30}))).ttl,
            Duration::seconds(30)
        );
        assert_eq!(
            parse(with(bool_q(), json!({"ttl_minutes": 43200}))).ttl,
            Duration::days(30)
        );
        for bad in [json!(0), json!(43201), json!(1.5), json!("60"), json!(true)] {
            message_at(with(bool_q(), json!({ "ttl_minutes": bad })), "ttl_minutes");
        }
        for bad in [json!(9), json!(2_592_001), json!("10")] {
            message_at(with(bool_q(), json!({ "ttl_seconds": bad })), "ttl_seconds");
        }
        assert_eq!(
            message_at(
                with(bool_q(), json!({"ttl_minutes": 5, "ttl_seconds": 30})),
                "ttl_seconds"
            ),
            "give either ttl_minutes or ttl_seconds, not both"
        );
    }

    #[test]
    fn default_outcome_is_checked_and_normalised() {
        let d = parse(with(bool_q(), json!({"default_outcome": "No"})));
        assert_eq!(d.spec.default_outcome, Some(json!(false)));
        let d = parse(with(choose_q(), json!({"default_outcome": "b"})));
        assert_eq!(d.spec.default_outcome, Some(json!("B")));
        let d = parse(with(
            choose_q(),
            json!({"multi": true, "default_outcome": ["C", "A"]}),
        ));
        assert_eq!(d.spec.default_outcome, Some(json!(["A", "C"])));
        assert_eq!(
            message_at(
                with(choose_q(), json!({"default_outcome": "D"})),
                "default_outcome"
            ),
            "\"D\" is not one of the options: A, B, C"
        );
        message_at(
            with(bool_q(), json!({"default_outcome": "maybe"})),
            "default_outcome",
        );
        let todo = json!({"question": "Rotate keys", "kind": "todo"});
        assert_eq!(
            parse(with(todo.clone(), json!({"default_outcome": "skipped"})))
                .spec
                .default_outcome,
            Some(json!("skipped"))
        );
        message_at(
            with(todo, json!({"default_outcome": "later"})),
            "default_outcome",
        );
        let form = json!({
            "question": "Details", "kind": "form",
            "schema": {"properties": {"n": {"type": "integer"}}, "required": ["n"]}
        });
        assert_eq!(
            parse(with(form.clone(), json!({"default_outcome": {"n": "3"}})))
                .spec
                .default_outcome,
            Some(json!({"n": 3}))
        );
        message_at(
            with(form, json!({"default_outcome": {}})),
            "default_outcome.n",
        );
    }

    #[test]
    fn default_outcome_null_means_none() {
        let d = parse(with(bool_q(), json!({"default_outcome": null})));
        assert_eq!(d.spec.default_outcome, None);
    }

    #[test]
    fn remark_notify_and_callback_are_checked() {
        let d = parse(with(
            bool_q(),
            json!({"allow_remark": false, "notify": "email", "callback_url": "https://agent.example/hook"}),
        ));
        assert!(!d.spec.allow_remark);
        assert_eq!(d.spec.notify, Notify::Email);
        assert_eq!(
            d.spec.callback_url.as_deref(),
            Some("https://agent.example/hook")
        );
        message_at(
            with(bool_q(), json!({"allow_remark": "no"})),
            "allow_remark",
        );
        assert_eq!(
            message_at(with(bool_q(), json!({"notify": "sms"})), "notify"),
            "must be one of push, email, none (got \"sms\")"
        );
        message_at(
            with(bool_q(), json!({"callback_url": "ftp://x.example/"})),
            "callback_url",
        );
        message_at(
            with(bool_q(), json!({"callback_url": "not a url"})),
            "callback_url",
        );
        let long = format!("https://example.com/{}", "a".repeat(2000));
        message_at(
            with(bool_q(), json!({ "callback_url": long })),
            "callback_url",
        );
    }

    #[test]
    fn metadata_is_an_object_of_at_most_4096_bytes() {
        let d = parse(with(
            bool_q(),
            json!({"metadata": {"run": 42, "tags": ["a"]}}),
        ));
        assert_eq!(d.spec.metadata["run"], json!(42));
        message_at(with(bool_q(), json!({"metadata": "run=42"})), "metadata");
        assert_eq!(
            message_at(
                with(bool_q(), json!({"metadata": {"big": "x".repeat(4096)}})),
                "metadata"
            ),
            "must be at most 4096 bytes as JSON"
        );
    }

    #[test]
    fn nulls_for_optional_fields_mean_absent() {
        let d = parse(json!({
            "question": "Q", "kind": "choose", "options": ["A", "B"],
            "project": null, "multi": null, "recommended": null, "allow_other": null,
            "placeholder": null, "context_md": null, "context_image_b64": null,
            "attachments": null, "ttl_minutes": null, "ttl_seconds": null,
            "default_outcome": null, "allow_remark": null, "notify": null,
            "callback_url": null, "metadata": null
        }));
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!(d.ttl, Duration::minutes(60));
    }

    #[test]
    fn hostile_input_is_refused_quickly_without_panics() {
        let many: Vec<Value> = (0..100_000).map(|i| json!(format!("o{i}"))).collect();
        let issues = refused(json!({"question": "Q", "kind": "choose", "options": many}));
        assert_eq!(issues.len(), 1);
        let mut body = Map::new();
        for i in 0..10_000 {
            body.insert(format!("extra{i}"), json!(i));
        }
        body.insert("question".into(), json!("Q"));
        body.insert("kind".into(), json!("todo"));
        let d = parse(Value::Object(body));
        assert_eq!(d.warnings.len(), 11);
    }

    #[test]
    fn odd_values_in_any_field_never_panic() {
        use crate::domain::answer::validate_answer;
        use crate::domain::decision::AnswerInput;

        let odd = [
            json!(null),
            json!(true),
            json!(-1),
            json!(1e308),
            json!(u64::MAX),
            json!(""),
            json!("日本語"),
            json!("x".repeat(3000)),
            json!([]),
            json!([null, 1, "a", {}]),
            json!({}),
            json!({"a": null, "properties": {"p": {"type": "string"}}}),
        ];
        for kind in Kind::ALL {
            for (field, _) in FIELDS {
                for v in &odd {
                    let mut body = json!({"question": "Q", "kind": kind.as_str(), "options": ["A", "B"],
                        "schema": {"properties": {"f": {"type": "string"}}}});
                    if *field == "questions" {
                        body.as_object_mut().unwrap().remove("schema");
                    }
                    body[*field] = v.clone();
                    let Ok(d) = parse_new_decision(&body) else {
                        continue;
                    };
                    for value in &odd {
                        let input = AnswerInput {
                            value: Some(value.clone()),
                            other: Some("日本".into()),
                            ..AnswerInput::default()
                        };
                        let _ = validate_answer(&d.spec, &input);
                    }
                }
            }
        }
    }
}
