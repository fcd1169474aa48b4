//! The fields around the question: context, attachments, TTL, default outcome, notify,
//! metadata; and inputs that must never panic.

use base64::Engine as _;
use serde_json::json;

use super::*;

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
