use serde_json::json;

use super::*;
use crate::domain::new_decision::parse_new_decision;

fn spec(body: Value) -> DecisionSpec {
    parse_new_decision(&body).unwrap().spec
}

fn answer(value: Value) -> AnswerInput {
    AnswerInput {
        value: Some(value),
        ..AnswerInput::default()
    }
}

fn other(value: Option<Value>, other: &str) -> AnswerInput {
    AnswerInput {
        value,
        other: Some(other.into()),
        ..AnswerInput::default()
    }
}

fn action(action: AnswerAction) -> AnswerInput {
    AnswerInput {
        action,
        ..AnswerInput::default()
    }
}

fn accepted(spec: &DecisionSpec, input: AnswerInput) -> Resolution {
    validate_answer(spec, &input).unwrap_or_else(|e| panic!("refused: {e:?}"))
}

fn outcome(spec: &DecisionSpec, input: AnswerInput) -> (Value, bool) {
    let r = accepted(spec, input);
    (r.outcome.unwrap(), r.custom)
}

fn message_at(spec: &DecisionSpec, input: AnswerInput, path: &str) -> String {
    let issues = validate_answer(spec, &input).expect_err("accepted");
    issues
        .iter()
        .find(|i| i.path == path)
        .map(|i| i.message.clone())
        .unwrap_or_else(|| panic!("no issue at {path}: {issues:?}"))
}

fn bool_spec() -> DecisionSpec {
    spec(json!({"question": "Deploy?", "kind": "bool", "yes_label": "Ship it", "no_label": "Hold"}))
}

fn choose_spec(extra: Value) -> DecisionSpec {
    let mut body = json!({"question": "Which?", "kind": "choose", "options": ["A", "B", "C"]});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    spec(body)
}

fn todo_spec() -> DecisionSpec {
    spec(json!({"question": "Rotate keys", "kind": "todo"}))
}

#[test]
fn an_answer_is_a_human_outcome_with_its_action() {
    let r = accepted(&bool_spec(), answer(json!(true)));
    assert_eq!(r.status, Status::Answered);
    assert_eq!(r.outcome, Some(json!(true)));
    assert_eq!(r.outcome_source, Some(OutcomeSource::Human));
    assert!(!r.custom);
    assert_eq!(r.remark, None);
    assert_eq!(r.detail, json!({"action": "answer"}));
}

#[test]
fn bool_accepts_booleans_words_and_its_own_labels() {
    let s = bool_spec();
    for (v, b) in [
        (json!(false), false),
        (json!("yes"), true),
        (json!("NO"), false),
        (json!(" Yes "), true),
        (json!("true"), true),
        (json!("ship it"), true),
        (json!("Hold"), false),
    ] {
        assert_eq!(outcome(&s, answer(v)), (json!(b), false));
    }
}

#[test]
fn bool_refuses_anything_else() {
    let s = bool_spec();
    for v in [json!("maybe"), json!(1), json!(["yes"])] {
        assert_eq!(
            message_at(&s, answer(v), "value"),
            "must be true or false (or \"yes\" or \"no\")"
        );
    }
    assert!(message_at(&s, AnswerInput::default(), "value").starts_with("is required"));
    assert_eq!(
        message_at(&s, other(Some(json!(true)), "meh"), "other"),
        "only a choose decision takes a typed answer of your own; this one is bool"
    );
}

#[test]
fn decline_is_allowed_for_every_kind_and_has_no_outcome() {
    for s in [bool_spec(), choose_spec(json!({})), todo_spec()] {
        let r = accepted(
            &s,
            AnswerInput {
                action: AnswerAction::Decline,
                remark: Some(" not my call ".into()),
                ..AnswerInput::default()
            },
        );
        assert_eq!(r.status, Status::Declined);
        assert_eq!(r.outcome, None);
        assert_eq!(r.outcome_source, None);
        assert_eq!(r.remark.as_deref(), Some("not my call"));
        assert_eq!(r.detail, json!({"action": "decline"}));
    }
}

#[test]
fn remarks_are_trimmed_limited_and_refused_when_not_allowed() {
    let s = bool_spec();
    let with_remark = |r: &str| AnswerInput {
        remark: Some(r.into()),
        ..answer(json!(true))
    };
    assert_eq!(accepted(&s, with_remark("   ")).remark, None);
    assert_eq!(
        accepted(&s, with_remark(" after 6pm ")).remark.as_deref(),
        Some("after 6pm")
    );
    message_at(&s, with_remark(&"r".repeat(2001)), "remark");
    let quiet = spec(json!({"question": "Q", "kind": "bool", "allow_remark": false}));
    assert_eq!(
        message_at(&quiet, with_remark("hi"), "remark"),
        "this decision does not take a remark"
    );
    assert_eq!(accepted(&quiet, with_remark("")).remark, None);
}

#[test]
fn done_and_skip_resolve_a_todo() {
    let s = todo_spec();
    let r = accepted(&s, action(AnswerAction::Done));
    assert_eq!(
        (r.status, r.outcome, r.outcome_source),
        (
            Status::Answered,
            Some(json!("done")),
            Some(OutcomeSource::Human)
        )
    );
    assert_eq!(r.detail, json!({"action": "done"}));
    let r = accepted(&s, action(AnswerAction::Skip));
    assert_eq!(r.outcome, Some(json!("skipped")));
    assert_eq!(outcome(&s, answer(json!("done"))).0, json!("done"));
    assert_eq!(outcome(&s, answer(json!("skipped"))).0, json!("skipped"));
    message_at(&s, answer(json!("later")), "value");
    message_at(&s, AnswerInput::default(), "value");
}

#[test]
fn done_and_skip_are_refused_for_other_kinds() {
    for a in [AnswerAction::Done, AnswerAction::Skip] {
        assert_eq!(
            message_at(&bool_spec(), action(a), "action"),
            "must be answer or decline for a bool decision (done and skip are for to-dos)"
        );
    }
}

#[test]
fn choose_takes_one_label() {
    let s = choose_spec(json!({}));
    assert_eq!(outcome(&s, answer(json!("B"))), (json!("B"), false));
    assert_eq!(outcome(&s, answer(json!(" c "))), (json!("C"), false));
    assert_eq!(
        message_at(&s, answer(json!("X")), "value"),
        "\"X\" is not one of the options: A, B, C"
    );
    message_at(&s, answer(json!(["A"])), "value");
    assert_eq!(
        message_at(&s, AnswerInput::default(), "value"),
        "is required: pick an option or type your own answer"
    );
    message_at(&s, answer(json!("")), "value");
}

#[test]
fn choose_other_is_a_custom_answer() {
    let s = choose_spec(json!({}));
    assert_eq!(
        outcome(&s, other(None, " use Redis ")),
        (json!("use Redis"), true)
    );
    // Browsers send an empty value with the typed text.
    assert_eq!(
        outcome(&s, other(Some(json!("")), "use Redis")),
        (json!("use Redis"), true)
    );
    // Typing an option's label is picking that option.
    assert_eq!(outcome(&s, other(None, "b")), (json!("B"), false));
    assert_eq!(
        message_at(&s, other(Some(json!("A")), "use Redis"), "other"),
        "pick one option or type your own answer, not both"
    );
    message_at(&s, other(None, &"o".repeat(2001)), "other");
    // An empty other is no other.
    assert_eq!(
        outcome(&s, other(Some(json!("A")), "  ")),
        (json!("A"), false)
    );
}

#[test]
fn choose_other_is_refused_when_not_allowed() {
    let s = choose_spec(json!({"allow_other": false}));
    assert_eq!(
        message_at(&s, other(None, "use Redis"), "other"),
        "this decision does not take an answer of your own: pick one of the options"
    );
    assert_eq!(
        message_at(&s, AnswerInput::default(), "value"),
        "is required: pick an option"
    );
}

#[test]
fn multi_choose_returns_labels_in_option_order() {
    let s = choose_spec(json!({"multi": true}));
    assert_eq!(
        outcome(&s, answer(json!(["C", "A"]))),
        (json!(["A", "C"]), false)
    );
    assert_eq!(outcome(&s, answer(json!("B"))), (json!(["B"]), false));
    assert!(message_at(&s, answer(json!(["A", "a"])), "value[1]").contains("is given twice"));
    message_at(&s, answer(json!(["A", "Z"])), "value[1]");
    message_at(&s, answer(json!(["A", 3])), "value[1]");
    message_at(&s, answer(json!([])), "value");
    message_at(&s, answer(json!({"A": true})), "value");
}

#[test]
fn multi_choose_puts_the_typed_answer_last() {
    let s = choose_spec(json!({"multi": true}));
    assert_eq!(
        outcome(&s, other(Some(json!(["C", "A"])), "Redis")),
        (json!(["A", "C", "Redis"]), true)
    );
    assert_eq!(outcome(&s, other(None, "Redis")), (json!(["Redis"]), true));
    assert_eq!(
        outcome(&s, other(Some(json!([])), "Redis")),
        (json!(["Redis"]), true)
    );
    assert_eq!(
        outcome(&s, other(Some(json!(["C"])), "a")),
        (json!(["A", "C"]), false)
    );
}

#[test]
fn text_takes_a_trimmed_non_empty_string() {
    let s = spec(json!({"question": "Name?", "kind": "text"}));
    assert_eq!(
        outcome(&s, answer(json!(" payments-gateway "))),
        (json!("payments-gateway"), false)
    );
    message_at(&s, answer(json!("  ")), "value");
    message_at(&s, answer(json!(42)), "value");
    message_at(&s, answer(json!("x".repeat(10_001))), "value");
    outcome(&s, answer(json!("x".repeat(10_000))));
}

#[test]
fn check_outcome_refuses_unknown_labels_for_choose() {
    let s = choose_spec(json!({}));
    let mut issues = Issues::new();
    assert_eq!(
        check_outcome(&s, &json!("Redis"), "default_outcome", &mut issues),
        None
    );
    assert_eq!(issues.into_vec()[0].path, "default_outcome");
}

fn form_spec() -> DecisionSpec {
    spec(json!({
        "question": "Release details", "kind": "form",
        "schema": {"properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 10},
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2},
            "count": {"type": "integer", "minimum": 1, "maximum": 5},
            "ratio": {"type": "number", "maximum": 1},
            "ok": {"type": "boolean"}
        }, "required": ["name", "count"]}
    }))
}

#[test]
fn a_form_answer_is_normalised_to_its_fields() {
    let (v, custom) = outcome(
        &form_spec(),
        answer(json!({
            "name": " Ada ", "email": "ada@example.com", "site": "https://example.com/x",
            "day": "2025-02-28", "at": "2025-02-28T18:00:00+01:00", "size": "Medium",
            "tags": ["c", "a"], "count": "3", "ratio": "0.5", "ok": "on",
            "extra": "dropped", "day_unused": null
        })),
    );
    assert!(!custom);
    assert_eq!(
        v,
        json!({
            "name": "Ada", "email": "ada@example.com", "site": "https://example.com/x",
            "day": "2025-02-28", "at": "2025-02-28T18:00:00+01:00", "size": "m",
            "tags": ["a", "c"], "count": 3, "ratio": 0.5, "ok": true
        })
    );
}

#[test]
fn optional_form_fields_may_be_left_out_or_blank() {
    let (v, _) = outcome(
        &form_spec(),
        answer(json!({"name": "Ada", "count": 1.0, "email": "", "tags": []})),
    );
    assert_eq!(v, json!({"name": "Ada", "count": 1}));
}

#[test]
fn every_bad_form_field_is_listed_at_its_path() {
    let issues = validate_answer(
        &form_spec(),
        &answer(json!({
            "name": "A", "email": "ada at example", "site": "not a url",
            "day": "2025-02-30", "at": "tomorrow", "size": "xl",
            "tags": ["a", "b", "c"], "ratio": 2, "ok": "perhaps"
        })),
    )
    .unwrap_err();
    let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "value.name",
            "value.email",
            "value.site",
            "value.day",
            "value.at",
            "value.size",
            "value.tags",
            "value.count",
            "value.ratio",
            "value.ok"
        ]
    );
    assert_eq!(issues[0].message, "must be at least 2 characters (got 1)");
    assert_eq!(issues[7].message, "is required");
}

#[test]
fn form_numbers_are_checked() {
    let s = form_spec();
    let with_count = |c: Value| answer(json!({"name": "Ada", "count": c}));
    assert_eq!(
        message_at(&s, with_count(json!(2.5)), "value.count"),
        "must be a whole number (got 2.5)"
    );
    assert_eq!(
        message_at(&s, with_count(json!(6)), "value.count"),
        "must be at most 5 (got 6)"
    );
    message_at(&s, with_count(json!(0)), "value.count");
    message_at(&s, with_count(json!("three")), "value.count");
    message_at(&s, with_count(json!("NaN")), "value.count");
    message_at(&s, with_count(json!(true)), "value.count");
}

#[test]
fn form_text_checks_length_and_type() {
    let s = form_spec();
    message_at(
        &s,
        answer(json!({"name": "x".repeat(11), "count": 1})),
        "value.name",
    );
    message_at(&s, answer(json!({"name": 12, "count": 1})), "value.name");
    message_at(
        &s,
        answer(json!({"name": "Ada", "count": 1, "email": "a@b@c"})),
        "value.email",
    );
    message_at(
        &s,
        answer(json!({"name": "Ada", "count": 1, "email": "@b"})),
        "value.email",
    );
    message_at(
        &s,
        answer(json!({"name": "Ada", "count": 1, "day": "25-02-28"})),
        "value.day",
    );
}

#[test]
fn form_multi_choices_are_checked() {
    let s = form_spec();
    let with_tags = |t: Value| answer(json!({"name": "Ada", "count": 1, "tags": t}));
    assert_eq!(outcome(&s, with_tags(json!("b"))).0["tags"], json!(["b"]));
    assert!(message_at(&s, with_tags(json!(["a", "a"])), "value.tags[1]").contains("twice"));
    message_at(&s, with_tags(json!(["z"])), "value.tags[0]");
    message_at(&s, with_tags(json!(3)), "value.tags");
}

#[test]
fn a_form_value_must_be_an_object() {
    assert!(
        message_at(&form_spec(), answer(json!("Ada")), "value").starts_with("must be an object")
    );
    assert!(message_at(&form_spec(), AnswerInput::default(), "value").starts_with("is required"));
}

fn questions_spec() -> DecisionSpec {
    spec(json!({
        "question": "Setup", "kind": "form",
        "questions": [
            {"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]},
            {"id": "extras", "question": "Extras?", "options": ["metrics", "tracing"], "multiSelect": true},
            {"id": "go", "question": "Proceed?", "type": "yesno"},
            {"id": "notes", "question": "Notes?"}
        ]
    }))
}

#[test]
fn question_choices_take_other_answers_as_custom() {
    let s = questions_spec();
    let (v, custom) = outcome(
        &s,
        answer(json!({"db": "SQLite", "extras": ["tracing"], "go": "yes", "notes": "none"})),
    );
    assert!(!custom);
    assert_eq!(
        v,
        json!({"db": "SQLite", "extras": ["tracing"], "go": "yes", "notes": "none"})
    );
    let (v, custom) = outcome(
        &s,
        answer(json!({"db": "MySQL", "extras": ["logs", "metrics"], "go": true, "notes": "x"})),
    );
    assert!(custom);
    assert_eq!(
        v,
        json!({"db": "MySQL", "extras": ["logs", "metrics"], "go": "yes", "notes": "x"})
    );
    // A question's picks keep the order given: the order the person ticked them.
    let (v, _) = outcome(
        &s,
        answer(json!({"db": "SQLite", "extras": ["tracing", "metrics"], "go": "no", "notes": "x"})),
    );
    assert_eq!(v["extras"], json!(["tracing", "metrics"]));
}

#[test]
fn every_question_must_be_answered_and_yesno_is_closed() {
    let s = questions_spec();
    let issues = validate_answer(&s, &answer(json!({"go": "maybe"}))).unwrap_err();
    let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(
        paths,
        ["value.db", "value.extras", "value.go", "value.notes"]
    );
    assert_eq!(
        issues[2].message,
        "\"maybe\" is not one of the options: yes, no"
    );
}

#[test]
fn the_other_marker_is_never_an_answer() {
    let s = questions_spec();
    for value in [
        json!({"db": "__other__", "extras": ["metrics"], "go": "yes", "notes": "x"}),
        json!({"db": "SQLite", "extras": ["__other__"], "go": "yes", "notes": "x"}),
    ] {
        let issues = validate_answer(&s, &answer(value)).unwrap_err();
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert!(issues[0].message.contains("nothing typed"), "{issues:?}");
    }
    let choose = spec(
        json!({"question": "Q", "kind": "choose", "options": ["A", "B"], "allow_other": true}),
    );
    let issues = validate_answer(&choose, &other(None, "__other__")).unwrap_err();
    assert_eq!(issues[0].path, "other");
}

fn noted_spec() -> DecisionSpec {
    spec(json!({"question": "q", "kind": "form", "questions": [
        {"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]},
        {"question": "Name?"}
    ]}))
}

#[test]
fn notes_per_question_go_to_the_audit_trail_entry() {
    let input = AnswerInput {
        value: Some(json!({"db": "SQLite", "Name?": "orders"})),
        notes: Some(json!({"db": "  for now  ", "Name?": " "})),
        ..AnswerInput::default()
    };
    let r = accepted(&noted_spec(), input);
    assert_eq!(r.detail["notes"], json!({"db": "for now"}));
    let plain = accepted(
        &noted_spec(),
        answer(json!({"db": "SQLite", "Name?": "orders"})),
    );
    assert!(plain.detail.get("notes").is_none());
}

#[test]
fn notes_must_name_questions_of_a_form() {
    let refused = |spec: &DecisionSpec, notes: Value| {
        let input = AnswerInput {
            value: Some(json!({"db": "SQLite", "Name?": "orders"})),
            notes: Some(notes),
            ..AnswerInput::default()
        };
        validate_answer(spec, &input).unwrap_err()
    };
    let issues = refused(&noted_spec(), json!({"nope": "x", "db": 3}));
    let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(paths, ["notes.nope", "notes.db"]);
    assert_eq!(
        refused(&noted_spec(), json!("x"))[0].message,
        "must be an object of notes keyed by question (got a string)"
    );
    let long = "x".repeat(MAX_NOTE_CHARS + 1);
    assert_eq!(
        refused(&noted_spec(), json!({ "db": long }))[0].path,
        "notes.db"
    );
    let issues = refused(&bool_spec(), json!({"a": "b"}));
    assert!(issues.iter().any(|i| i.path == "notes"), "{issues:?}");
}
