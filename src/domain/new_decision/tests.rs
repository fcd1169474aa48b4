use serde_json::json;

use super::*;
use crate::domain::spec::{FieldInput, FormSource};

mod settings;

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
