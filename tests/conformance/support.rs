//! What the cases share: a fixed moment, specs of every kind, inserting and resolving.

use serde_json::{Value, json};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use sayso::domain::completion::Completion;
use sayso::domain::spec::{
    Attachment, ChoiceOption, FieldInput, FormField, FormSource, FormSpec, KindSpec, StringFormat,
};
use sayso::domain::{
    AnswerChannel, AnsweredBy, DecisionSpec, NewDecision, Notify, OutcomeSource, Resolution, Status,
};
use sayso::storage::{InsertDecision, Inserted, Resolved, Store, Swept};

/// A moment with sub-millisecond digits, which the stores drop.
pub const T0: OffsetDateTime = datetime!(2030-01-02 03:04:05.678_912_345 UTC);

pub fn ms(t: OffsetDateTime) -> OffsetDateTime {
    t.replace_nanosecond(t.nanosecond() / 1_000_000 * 1_000_000)
        .unwrap()
}

fn spec(question: &str, body: KindSpec) -> DecisionSpec {
    DecisionSpec {
        question: question.to_owned(),
        project: None,
        body,
        context_md: None,
        attachments: vec![],
        allow_remark: true,
        notify: Notify::Push,
        callback_url: None,
        completion: None,
        metadata: serde_json::Map::new(),
        default_outcome: None,
        shape: None,
        approval: None,
        routing: None,
    }
}

pub fn bool_spec(question: &str) -> DecisionSpec {
    spec(
        question,
        KindSpec::Bool {
            yes_label: "Yes".into(),
            no_label: "No".into(),
        },
    )
}

pub fn new_decision(spec: DecisionSpec) -> NewDecision {
    NewDecision {
        spec,
        ttl: Duration::hours(1),
        image: None,
        warnings: vec![],
    }
}

pub async fn inbox(store: &dyn Store, name: &str) -> Uuid {
    store.create_inbox(name, None, T0).await.unwrap().id
}

/// The person `inbox` was made with.
pub async fn own_person(store: &dyn Store, inbox: Uuid) -> sayso::domain::people::Person {
    store
        .person(inbox)
        .await
        .unwrap()
        .expect("every inbox has its own person")
}

/// Inserts `new` into `inbox`, created at `created`, expiring `ttl` later.
pub async fn insert_at(
    store: &dyn Store,
    inbox: Uuid,
    new: &NewDecision,
    created: OffsetDateTime,
    ttl: Duration,
) -> sayso::domain::Decision {
    let row = InsertDecision {
        id: Uuid::now_v7(),
        inbox_id: inbox,
        new,
        created_at: created,
        expires_at: created + ttl,
        idempotency: None,
        notifications: vec![],
        outbox: vec![],
    };
    match store.insert_decision(row).await.unwrap() {
        Inserted::New(d) => d,
        other => panic!("expected a new decision, got {other:?}"),
    }
}

pub async fn insert(store: &dyn Store, inbox: Uuid, question: &str) -> sayso::domain::Decision {
    insert_at(
        store,
        inbox,
        &new_decision(bool_spec(question)),
        T0,
        Duration::hours(1),
    )
    .await
}

pub fn answer(outcome: Value) -> Resolution {
    Resolution {
        status: Status::Answered,
        outcome: Some(outcome),
        outcome_source: Some(OutcomeSource::Human),
        custom: false,
        remark: None,
        detail: json!({ "action": "answer" }),
        by: Some(AnsweredBy::new(AnswerChannel::Feed, None)),
        answer: None,
        expect_answers: None,
        cancel_reason: None,
    }
}

pub fn decline(remark: &str) -> Resolution {
    Resolution {
        status: Status::Declined,
        outcome: None,
        outcome_source: None,
        custom: false,
        remark: Some(remark.to_owned()),
        detail: json!({ "action": "decline" }),
        by: Some(AnsweredBy::new(AnswerChannel::Link, None)),
        answer: None,
        expect_answers: None,
        cancel_reason: None,
    }
}

pub fn won(r: Resolved) -> sayso::domain::Decision {
    match r {
        Resolved::Won(d) => d,
        Resolved::Lost(d) => panic!("expected to win, lost to {d:?}"),
    }
}

pub fn lost(r: Resolved) -> sayso::domain::Decision {
    match r {
        Resolved::Lost(d) => d,
        Resolved::Won(d) => panic!("expected to lose, won {d:?}"),
    }
}

fn option(label: &str) -> ChoiceOption {
    ChoiceOption {
        value: label.to_owned(),
        label: label.to_owned(),
        description: Some(format!("about {label}")),
        preview: Some(format!("```\n{label}\n```")),
    }
}

/// One spec of each kind, with every optional part filled in somewhere.
pub fn specs_of_every_kind() -> Vec<DecisionSpec> {
    let mut metadata = serde_json::Map::new();
    metadata.insert(
        "run".into(),
        json!({"id": 42, "tags": ["a", "b"], "ratio": 0.25}),
    );
    metadata.insert("ünïcødé".into(), json!("✓ \"quoted\" \\ back"));

    let mut b = bool_spec("Deploy to production?");
    b.project = Some("billing".into());
    b.context_md = Some("# Context\n\n* one\n* two".into());
    b.attachments = vec![Attachment {
        name: "diff".into(),
        url: "https://example.com/diff".into(),
    }];
    b.metadata = metadata;
    b.default_outcome = Some(json!(false));
    b.callback_url = Some("https://example.com/hook".into());
    b.completion = Some(Completion {
        url: "https://example.com/waitpoints/tokens/t1/complete".into(),
        wrap_in: Some("data".into()),
    });
    b.notify = Notify::Email;
    b.body = KindSpec::Bool {
        yes_label: "Ship it".into(),
        no_label: "Hold".into(),
    };

    let mut c = spec(
        "Which plan?",
        KindSpec::Choose {
            options: vec![option("A"), option("B"), option("C")],
            multi: true,
            recommended: Some(1),
            allow_other: false,
            placeholder: Some("or something else".into()),
        },
    );
    c.default_outcome = Some(json!(["A", "C"]));
    c.allow_remark = false;

    let t = spec(
        "Release notes?",
        KindSpec::Text {
            placeholder: Some("a line or two".into()),
        },
    );

    let f = spec(
        "Fill in the details",
        KindSpec::Form(FormSpec {
            source: FormSource::Schema,
            fields: vec![
                FormField {
                    name: "email".into(),
                    title: Some("Email".into()),
                    description: Some("where to write".into()),
                    header: None,
                    placeholder: None,
                    required: true,
                    default: Some(json!("a@example.com")),
                    input: FieldInput::Text {
                        min_length: Some(3),
                        max_length: Some(200),
                        format: Some(StringFormat::Email),
                        placeholder: None,
                        multiline: false,
                    },
                },
                FormField {
                    name: "size".into(),
                    title: None,
                    description: None,
                    header: Some("Size".into()),
                    placeholder: None,
                    required: false,
                    default: None,
                    input: FieldInput::Choice {
                        options: vec![option("S"), option("M")],
                        allow_other: true,
                        recommended: None,
                    },
                },
                FormField {
                    name: "colours".into(),
                    title: None,
                    description: None,
                    header: None,
                    placeholder: None,
                    required: false,
                    default: Some(json!(["red"])),
                    input: FieldInput::MultiChoice {
                        options: vec![option("red"), option("blue")],
                        min_items: Some(1),
                        max_items: None,
                        allow_other: false,
                        recommended: Some(0),
                    },
                },
                FormField {
                    name: "count".into(),
                    title: None,
                    description: None,
                    header: None,
                    placeholder: None,
                    required: false,
                    default: Some(json!(2.5)),
                    input: FieldInput::Number {
                        integer: false,
                        minimum: Some(-1.5),
                        maximum: Some(1e6),
                    },
                },
                FormField {
                    name: "ok".into(),
                    title: None,
                    description: None,
                    header: None,
                    placeholder: None,
                    required: true,
                    default: None,
                    input: FieldInput::Boolean,
                },
            ],
        }),
    );

    let mut todo = spec("Rotate the keys", KindSpec::Todo);
    todo.project = Some("ops".into());
    todo.default_outcome = Some(json!("skipped"));
    todo.notify = Notify::None;

    vec![b, c, t, f, todo]
}

/// The ids of what a sweep expired, in its order.
pub fn swept_ids(swept: Vec<Swept>) -> Vec<Uuid> {
    swept.into_iter().map(|s| s.id).collect()
}
