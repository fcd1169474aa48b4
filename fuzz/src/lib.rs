//! What each fuzz target checks, beyond "no panic": the properties a valid result must have,
//! so that a validator that accepts something it should not, or rewrites a value into one it
//! would itself refuse, is found as well as one that crashes.

pub mod shell;
pub mod webauthn;

use sayso::domain::answer::{check_outcome, validate_answer};
use sayso::domain::answer_text::answer_text;
use sayso::domain::form_schema::{MAX_FIELDS, parse_form_schema};
use sayso::domain::new_decision::{
    MAX_QUESTION_CHARS, MAX_TTL_SECONDS, MIN_TTL_SECONDS, parse_new_decision,
};
use sayso::domain::spec::{FormSpec, KindSpec};
use sayso::domain::{
    AnswerAction, AnswerInput, Decision, DecisionSpec, Issues, NewDecision, OutcomeSource, Status,
};
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// The fuzzer's bytes as JSON, the way the API reads a body; `None` when they are not JSON
/// (the API answers `400` before any validation runs).
pub fn json(data: &[u8]) -> Option<Value> {
    serde_json::from_slice(data).ok()
}

/// `POST /v1/decisions`: parses a create body and checks what a valid one promises.
pub fn create_request(body: &Value) -> Option<NewDecision> {
    match parse_new_decision(body) {
        Ok(new) => {
            check_new_decision(&new);
            Some(new)
        }
        Err(issues) => {
            assert!(!issues.is_empty(), "a refusal lists at least one problem");
            for issue in &issues {
                assert!(
                    !issue.message.is_empty(),
                    "empty message at {:?}",
                    issue.path
                );
            }
            None
        }
    }
}

fn check_new_decision(new: &NewDecision) {
    let spec = &new.spec;
    let question_chars = spec.question.chars().count();
    assert!(
        (1..=MAX_QUESTION_CHARS).contains(&question_chars),
        "question of {question_chars} characters accepted"
    );
    assert_eq!(
        spec.question.trim(),
        spec.question,
        "question kept untrimmed"
    );
    let ttl = new.ttl.whole_seconds();
    assert!(
        (MIN_TTL_SECONDS..=MAX_TTL_SECONDS).contains(&ttl),
        "ttl of {ttl} s accepted"
    );
    // The spec is stored as JSON and read back: it must come back the same.
    let stored = serde_json::to_string(spec).expect("a spec serialises");
    let read: DecisionSpec = serde_json::from_str(&stored).expect("a stored spec reads back");
    assert_eq!(&read, spec, "the spec changed through its stored JSON");
    if let KindSpec::Form(form) = &spec.body {
        check_form_spec(form);
    }
    if let Some(default) = &spec.default_outcome {
        // The default is stored normalised and applied on expiry as the outcome: checking
        // it again must accept it unchanged.
        let mut issues = Issues::new();
        let again = check_outcome(spec, default, "default_outcome", &mut issues);
        assert_eq!(
            again.map(|(v, _)| v).as_ref(),
            Some(default),
            "the normalised default_outcome is not a valid outcome: {:?}",
            issues.into_vec()
        );
    }
    for status in [Status::Pending, Status::Expired, Status::Cancelled] {
        let outcome = (status == Status::Expired)
            .then(|| spec.default_outcome.clone())
            .flatten();
        let source = outcome.as_ref().map(|_| OutcomeSource::Default);
        let text = answer_text(&decision(
            spec.clone(),
            status,
            outcome,
            source,
            false,
            None,
        ));
        assert!(!text.is_empty());
    }
}

/// What a parsed form promises: 1–30 fields with unique, non-empty names, and defaults that
/// the form itself accepts.
pub fn check_form_spec(form: &FormSpec) {
    let n = form.fields.len();
    assert!(
        (1..=MAX_FIELDS).contains(&n),
        "a form of {n} fields accepted"
    );
    let mut names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert!(names.iter().all(|n| !n.is_empty()), "an empty field name");
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "two fields with one name");
    // Each default prefills the page; a person who submits the page unchanged must not be
    // refused. With every required field defaulted, the defaults alone are a valid answer.
    // A blank default (`""`, `[]`) prefills nothing, as a form answer reads a blank value as
    // none: it counts as no default.
    let spec = form_spec(form.clone());
    let default_of =
        |f: &sayso::domain::spec::FormField| f.default.clone().filter(|d| !is_blank(d));
    for field in &form.fields {
        if let Some(default) = default_of(field) {
            let mut issues = Issues::new();
            let one = json!({ field.name.clone(): default });
            let _ = check_outcome(&spec, &one, "value", &mut issues);
            let path = format!("value.{}", field.name);
            let about_this_field = issues
                .into_vec()
                .into_iter()
                .filter(|i| {
                    i.path == path
                        || i.path.starts_with(&format!("{path}."))
                        || i.path.starts_with(&format!("{path}["))
                })
                .collect::<Vec<_>>();
            assert!(
                about_this_field.is_empty(),
                "the default of {:?} is refused: {about_this_field:?}",
                field.name
            );
        }
    }
    if form
        .fields
        .iter()
        .all(|f| !f.required || default_of(f).is_some())
    {
        let defaults: serde_json::Map<String, Value> = form
            .fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), default_of(f)?)))
            .collect();
        let mut issues = Issues::new();
        let checked = check_outcome(&spec, &Value::Object(defaults), "value", &mut issues);
        assert!(
            checked.is_some(),
            "the form's own defaults are refused: {:?}",
            issues.into_vec()
        );
    }
}

/// What a form answer reads as no value (as `check_form` does).
fn is_blank(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// `schema` of a `form` decision on its own.
pub fn form_schema(schema: &Value) {
    let mut issues = Issues::new();
    let mut warnings = Vec::new();
    let form = parse_form_schema(schema, "schema", &mut issues, &mut warnings);
    match form {
        Some(form) => {
            assert!(issues.is_empty(), "a form and problems: {issues:?}");
            check_form_spec(&form);
            let stored = serde_json::to_string(&form).expect("a form serialises");
            let read: FormSpec = serde_json::from_str(&stored).expect("a stored form reads back");
            assert_eq!(read, form);
        }
        None => assert!(!issues.is_empty(), "no form and no problem either"),
    }
}

/// `[create body, answer body]`: a decision made from the first, answered with the second
/// the way `POST /d/{token}` reads a JSON answer.
pub fn answer(spec_body: &Value, answer_body: &Value) {
    let Some(new) = create_request(spec_body) else {
        return;
    };
    let Ok(input) = serde_json::from_value::<AnswerInput>(answer_body.clone()) else {
        return;
    };
    let spec = new.spec;
    let Ok(resolution) = validate_answer(&spec, &input) else {
        return;
    };
    match input.action {
        AnswerAction::Decline => {
            assert_eq!(resolution.status, Status::Declined);
            assert_eq!(resolution.outcome, None);
            assert_eq!(resolution.outcome_source, None);
        }
        _ => {
            assert_eq!(resolution.status, Status::Answered);
            assert_eq!(resolution.outcome_source, Some(OutcomeSource::Human));
            let outcome = resolution
                .outcome
                .as_ref()
                .expect("an answer has an outcome");
            if !resolution.custom {
                // An outcome is stored normalised: checking it again accepts it unchanged.
                let mut issues = Issues::new();
                let again = check_outcome(&spec, outcome, "value", &mut issues);
                assert_eq!(
                    again.as_ref().map(|(v, _)| v),
                    Some(outcome),
                    "the normalised outcome is not a valid outcome: {:?}",
                    issues.into_vec()
                );
            }
        }
    }
    if let Some(remark) = &resolution.remark {
        assert!(spec.allow_remark, "a remark kept where none is allowed");
        assert!(!remark.trim().is_empty());
    }
    let d = decision(
        spec,
        resolution.status,
        resolution.outcome,
        resolution.outcome_source,
        resolution.custom,
        resolution.remark,
    );
    assert!(!answer_text(&d).is_empty());
}

fn form_spec(form: FormSpec) -> DecisionSpec {
    DecisionSpec {
        question: "Q".into(),
        project: None,
        body: KindSpec::Form(form),
        context_md: None,
        attachments: Vec::new(),
        allow_remark: true,
        notify: Default::default(),
        callback_url: None,
        completion: None,
        metadata: Default::default(),
        default_outcome: None,
        shape: None,
        approval: None,
        routing: None,
    }
}

fn decision(
    spec: DecisionSpec,
    status: Status,
    outcome: Option<Value>,
    outcome_source: Option<OutcomeSource>,
    custom: bool,
    remark: Option<String>,
) -> Decision {
    let created_at = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
    Decision {
        id: Uuid::nil(),
        inbox_id: Uuid::nil(),
        spec,
        status,
        outcome,
        outcome_source,
        custom,
        remark,
        created_at,
        expires_at: created_at + Duration::hours(1),
        resolved_at: (status != Status::Pending).then_some(created_at + Duration::minutes(5)),
        has_image: false,
        // Who answered never changes how an answer reads back.
        answered_by: None,
        answers: Vec::new(),
        // How a withdrawn decision reads back is not what is fuzzed here.
        cancel_reason: None,
    }
}
