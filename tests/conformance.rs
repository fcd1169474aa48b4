//! The storage conformance suite: every case runs against SQLite and PostgreSQL, each on a
//! fresh database. PostgreSQL comes from `SAYSO_TEST_PG_URL` (see `common::db`).

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use futures::future::join_all;
use serde_json::{Value, json};
use sqlx::Connection;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use sayso::domain::inbox::{InboxChannels, PushSubscription};
use sayso::domain::outbox::{
    Channel, MessageResult, MessageStatus, NewMessage, OutboxMessage, Purpose, Route,
};
use sayso::domain::spec::{
    Attachment, ChoiceOption, FieldInput, FormField, FormSource, FormSpec, Image, KindSpec,
    StringFormat,
};
use sayso::domain::{
    DecisionSpec, EventKind, Kind, NewDecision, NotificationState, Notify, OutcomeSource,
    Resolution, Status,
};
use sayso::storage::{
    CREATE_ACTIONS, Idempotency, InsertDecision, Inserted, ListFilter, PgStore, Resolved, Signal,
    SqliteStore, Store, StoreError, Swept,
};

/// A store and the database under it, which is removed after the store is dropped.
struct TestStore {
    store: Box<dyn Store>,
    _db: Box<dyn std::any::Any>,
}

async fn sqlite_store() -> Option<TestStore> {
    let db = common::db::fresh_sqlite_url();
    let store = SqliteStore::connect(&db.url).await.expect("sqlite store");
    Some(TestStore {
        store: Box::new(store),
        _db: Box::new(db),
    })
}

async fn pg_store() -> Option<TestStore> {
    let db = common::db::fresh_pg_url().await?;
    let store = PgStore::connect(&db.url).await.expect("postgres store");
    Some(TestStore {
        store: Box::new(store),
        _db: Box::new(db),
    })
}

/// Instantiates every case for one backend, as `$backend::case_name`.
macro_rules! conformance_tests {
    ($backend:ident, $setup:ident) => {
        conformance_tests!(@cases $backend, $setup;
            ping_answers,
            settings_keep_their_first_value,
            inbox_names_are_unique,
            keys_find_their_inbox,
            decisions_of_every_kind_read_back_exactly,
            idempotent_insert_returns_the_first_decision,
            concurrent_inserts_with_one_key_make_one_decision,
            decision_of_another_inbox_is_not_found,
            list_is_newest_first_filtered_and_paged,
            second_resolution_loses_to_the_first,
            resolve_after_expiry_loses_and_stays_pending,
            unknown_decision_is_not_found,
            expire_before_its_time_loses,
            expiry_applies_the_default_outcome,
            expiry_without_default_has_no_outcome,
            expire_due_expires_each_due_decision_once,
            concurrent_resolutions_have_one_winner_each,
            events_are_kept_in_order,
            notifications_read_back,
            outbox_rows_of_an_insert_come_back,
            each_resolution_leaves_one_fan_out,
            enqueue_is_idempotent,
            claim_respects_due_times_and_leases,
            concurrent_claims_hand_out_each_message_once,
            a_retried_message_is_rescheduled,
            a_finished_message_is_final_with_its_side_effects,
            a_fan_out_leaves_notifications_alone,
            inbox_channels_round_trip,
            push_subscriptions_are_upserted_listed_and_removed,
            resolutions_are_listed_per_inbox_in_event_order,
            creates_count_on_their_utc_day_and_month,
            a_daily_quota_refuses_the_create_past_it,
            concurrent_creates_never_overshoot_the_quota,
            old_resolved_decisions_are_deleted_oldest_first_with_their_trails,
        );
    };
    (@cases $backend:ident, $setup:ident; $($case:ident),* $(,)?) => {
        mod $backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(t) = super::$setup().await else { return };
                    super::$case(&*t.store).await;
                }
            )*
        }
    };
}

conformance_tests!(sqlite, sqlite_store);
conformance_tests!(postgres, pg_store);

// ---- helpers ----

/// A moment with sub-millisecond digits, which the stores drop.
const T0: OffsetDateTime = datetime!(2030-01-02 03:04:05.678_912_345 UTC);

fn ms(t: OffsetDateTime) -> OffsetDateTime {
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
        metadata: serde_json::Map::new(),
        default_outcome: None,
        approval: None,
    }
}

fn bool_spec(question: &str) -> DecisionSpec {
    spec(
        question,
        KindSpec::Bool {
            yes_label: "Yes".into(),
            no_label: "No".into(),
        },
    )
}

fn new_decision(spec: DecisionSpec) -> NewDecision {
    NewDecision {
        spec,
        ttl: Duration::hours(1),
        image: None,
        warnings: vec![],
    }
}

async fn inbox(store: &dyn Store, name: &str) -> Uuid {
    store.create_inbox(name, None, T0).await.unwrap().id
}

/// Inserts `new` into `inbox`, created at `created`, expiring `ttl` later.
async fn insert_at(
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

async fn insert(store: &dyn Store, inbox: Uuid, question: &str) -> sayso::domain::Decision {
    insert_at(
        store,
        inbox,
        &new_decision(bool_spec(question)),
        T0,
        Duration::hours(1),
    )
    .await
}

fn answer(outcome: Value) -> Resolution {
    Resolution {
        status: Status::Answered,
        outcome: Some(outcome),
        outcome_source: Some(OutcomeSource::Human),
        custom: false,
        remark: None,
        detail: json!({ "action": "answer" }),
    }
}

fn decline(remark: &str) -> Resolution {
    Resolution {
        status: Status::Declined,
        outcome: None,
        outcome_source: None,
        custom: false,
        remark: Some(remark.to_owned()),
        detail: json!({ "action": "decline" }),
    }
}

fn won(r: Resolved) -> sayso::domain::Decision {
    match r {
        Resolved::Won(d) => d,
        Resolved::Lost(d) => panic!("expected to win, lost to {d:?}"),
    }
}

fn lost(r: Resolved) -> sayso::domain::Decision {
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
fn specs_of_every_kind() -> Vec<DecisionSpec> {
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

// ---- cases ----

async fn ping_answers(store: &dyn Store) {
    store.ping().await.unwrap();
}

async fn settings_keep_their_first_value(store: &dyn Store) {
    assert_eq!(store.setting_or_init("secret", "one").await.unwrap(), "one");
    assert_eq!(store.setting_or_init("secret", "two").await.unwrap(), "one");
    assert_eq!(
        store.setting_or_init("other", "three").await.unwrap(),
        "three"
    );
    assert_eq!(
        store.setting_or_init("secret", "four").await.unwrap(),
        "one"
    );
}

async fn inbox_names_are_unique(store: &dyn Store) {
    assert_eq!(store.count_inboxes().await.unwrap(), 0);
    let home = store
        .create_inbox("home", Some("me@example.com"), T0)
        .await
        .unwrap();
    assert_eq!(home.name, "home");
    assert_eq!(home.channels.email.as_deref(), Some("me@example.com"));
    assert_eq!(home.created_at, ms(T0));

    let again = store.create_inbox("home", None, T0).await;
    assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");
    let work = store.create_inbox("work", None, T0).await.unwrap();
    assert_ne!(work.id, home.id);

    assert_eq!(
        store.inbox_by_name("home").await.unwrap(),
        Some(home.clone())
    );
    assert_eq!(store.inbox_by_id(home.id).await.unwrap(), Some(home));
    assert_eq!(store.inbox_by_name("Home").await.unwrap(), None);
    assert_eq!(store.inbox_by_id(Uuid::now_v7()).await.unwrap(), None);
    assert_eq!(store.count_inboxes().await.unwrap(), 2);
}

async fn keys_find_their_inbox(store: &dyn Store) {
    let home = store.create_inbox("home", None, T0).await.unwrap();
    let work = store.create_inbox("work", None, T0).await.unwrap();
    store.create_api_key(home.id, "hash-1", T0).await.unwrap();
    store.create_api_key(home.id, "hash-2", T0).await.unwrap();
    store.create_api_key(work.id, "hash-3", T0).await.unwrap();

    assert_eq!(
        store.inbox_for_key("hash-1").await.unwrap(),
        Some(home.clone())
    );
    assert_eq!(
        store.inbox_for_key("hash-2").await.unwrap(),
        Some(home.clone())
    );
    assert_eq!(store.inbox_for_key("hash-3").await.unwrap(), Some(work));
    assert_eq!(store.inbox_for_key("hash-4").await.unwrap(), None);

    let taken = store.create_api_key(home.id, "hash-3", T0).await;
    assert!(matches!(taken, Err(StoreError::Conflict(_))), "{taken:?}");
    let orphan = store.create_api_key(Uuid::now_v7(), "hash-5", T0).await;
    assert!(matches!(orphan, Err(StoreError::NotFound)), "{orphan:?}");
}

async fn decisions_of_every_kind_read_back_exactly(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let specs = specs_of_every_kind();
    let kinds: Vec<Kind> = specs.iter().map(DecisionSpec::kind).collect();
    assert_eq!(kinds, Kind::ALL);
    for (i, spec) in specs.into_iter().enumerate() {
        let mut new = new_decision(spec);
        if i == 0 {
            new.image = Some(Image {
                content_type: "image/png",
                bytes: vec![0x89, b'P', b'N', b'G', 0, 1, 2, 255],
            });
        }
        let expires = T0 + Duration::seconds(90) + Duration::nanoseconds(999_999);
        let row = InsertDecision {
            id: Uuid::now_v7(),
            inbox_id: home,
            new: &new,
            created_at: T0,
            expires_at: expires,
            idempotency: None,
            notifications: vec![],
            outbox: vec![],
        };
        let id = row.id;
        let Inserted::New(inserted) = store.insert_decision(row).await.unwrap() else {
            panic!("expected a new decision");
        };
        assert_eq!(inserted.id, id);
        assert_eq!(inserted.inbox_id, home);
        assert_eq!(inserted.spec, new.spec);
        assert_eq!(inserted.status, Status::Pending);
        assert_eq!(inserted.outcome, None);
        assert_eq!(inserted.outcome_source, None);
        assert!(!inserted.custom);
        assert_eq!(inserted.remark, None);
        assert_eq!(inserted.created_at, ms(T0));
        assert_eq!(inserted.expires_at, ms(expires));
        assert_eq!(inserted.resolved_at, None);
        assert_eq!(inserted.has_image, i == 0);

        let read = store.decision(None, id).await.unwrap().expect("stored");
        assert_eq!(read, inserted);
        assert_eq!(
            store.decision(Some(home), id).await.unwrap(),
            Some(inserted)
        );

        let image = store.image(id).await.unwrap();
        match &new.image {
            Some(img) => {
                assert_eq!(
                    image,
                    Some((img.content_type.to_owned(), img.bytes.clone()))
                )
            }
            None => assert_eq!(image, None),
        }
    }
}

async fn idempotent_insert_returns_the_first_decision(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let work = inbox(store, "work").await;
    let first_new = new_decision(bool_spec("first"));
    let second_new = new_decision(bool_spec("second"));
    let key = |hash| {
        Some(Idempotency {
            key: "key-1",
            request_hash: hash,
        })
    };
    let row = |inbox, new, hash, notify: &str| InsertDecision {
        id: Uuid::now_v7(),
        inbox_id: inbox,
        new,
        created_at: T0,
        expires_at: T0 + Duration::hours(1),
        idempotency: key(hash),
        notifications: vec![NotificationState {
            channel: Channel::parse(notify).expect("a channel"),
            status: MessageStatus::Pending,
            detail: None,
        }],
        outbox: vec![],
    };

    let Inserted::New(first) = store
        .insert_decision(row(home, &first_new, "hash-a", "email"))
        .await
        .unwrap()
    else {
        panic!("first insert is new");
    };
    let again = store
        .insert_decision(row(home, &second_new, "hash-b", "push"))
        .await
        .unwrap();
    match again {
        Inserted::Existing {
            decision,
            request_hash,
        } => {
            assert_eq!(decision, first);
            assert_eq!(request_hash, "hash-a");
        }
        other => panic!("expected the existing decision, got {other:?}"),
    }
    // Nothing of the second request was written.
    let all = store
        .list_decisions(
            home,
            &ListFilter {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all, vec![first.clone()]);
    let notifications = store.notifications(first.id).await.unwrap();
    assert_eq!(notifications.len(), 1);
    assert_eq!(notifications[0].channel, Channel::Email);
    let events = store.events(first.id).await.unwrap();
    assert_eq!(events.len(), 1);

    // The key is scoped to the inbox.
    let other = store
        .insert_decision(row(work, &second_new, "hash-b", "push"))
        .await
        .unwrap();
    assert!(matches!(other, Inserted::New(_)), "{other:?}");
}

async fn concurrent_inserts_with_one_key_make_one_decision(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let new = new_decision(bool_spec("once"));
    let results = join_all((0..8).map(|_| {
        store.insert_decision(InsertDecision {
            id: Uuid::now_v7(),
            inbox_id: home,
            new: &new,
            created_at: T0,
            expires_at: T0 + Duration::hours(1),
            idempotency: Some(Idempotency {
                key: "same",
                request_hash: "h",
            }),
            notifications: vec![],
            outbox: vec![],
        })
    }))
    .await;
    let mut new_ids = vec![];
    let mut existing_ids = vec![];
    for r in results {
        match r.unwrap() {
            Inserted::New(d) => new_ids.push(d.id),
            Inserted::Existing {
                decision,
                request_hash,
            } => {
                assert_eq!(request_hash, "h");
                existing_ids.push(decision.id);
            }
            Inserted::QuotaExceeded => panic!("no quota was set"),
        }
    }
    assert_eq!(new_ids.len(), 1, "exactly one insert is new");
    assert!(existing_ids.iter().all(|id| *id == new_ids[0]));
    let all = store
        .list_decisions(
            home,
            &ListFilter {
                limit: 100,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
}

async fn decision_of_another_inbox_is_not_found(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let work = inbox(store, "work").await;
    let d = insert(store, home, "mine").await;
    assert_eq!(store.decision(Some(work), d.id).await.unwrap(), None);
    assert_eq!(
        store.decision(Some(home), d.id).await.unwrap(),
        Some(d.clone())
    );
    assert_eq!(store.decision(None, d.id).await.unwrap(), Some(d));
    assert_eq!(store.decision(None, Uuid::now_v7()).await.unwrap(), None);
    let new = new_decision(bool_spec("nobody's"));
    let orphan = store
        .insert_decision(InsertDecision {
            id: Uuid::now_v7(),
            inbox_id: Uuid::now_v7(),
            new: &new,
            created_at: T0,
            expires_at: T0 + Duration::hours(1),
            idempotency: None,
            notifications: vec![],
            outbox: vec![],
        })
        .await;
    assert!(matches!(orphan, Err(StoreError::NotFound)), "{orphan:?}");
    let listed = store
        .list_decisions(
            work,
            &ListFilter {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(listed.is_empty());
}

async fn list_is_newest_first_filtered_and_paged(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let work = inbox(store, "work").await;
    let specs = specs_of_every_kind();
    let mut all = vec![];
    for i in 0..23 {
        let mut s = specs[i % specs.len()].clone();
        s.project = Some(if i % 3 == 0 { "alpha" } else { "beta" }.into());
        let d = insert_at(
            store,
            home,
            &new_decision(s),
            T0 + Duration::seconds(i as i64),
            Duration::hours(1),
        )
        .await;
        all.push(d);
    }
    insert(store, work, "elsewhere").await;
    // Answer every fourth bool-or-todo-or-… decision: status filters need a mix.
    for d in all.iter_mut().step_by(4) {
        let r = if d.kind() == Kind::Todo {
            answer(json!("done"))
        } else {
            decline("no")
        };
        *d = won(store.resolve(d.id, &r, T0).await.unwrap());
    }
    all.reverse(); // newest first

    let page = |filter: ListFilter| async move {
        let mut seen = vec![];
        let mut before = None;
        loop {
            let items = store
                .list_decisions(
                    home,
                    &ListFilter {
                        before,
                        limit: 4,
                        ..filter.clone()
                    },
                )
                .await
                .unwrap();
            assert!(items.len() <= 4);
            let Some(last) = items.last() else { break };
            before = Some(last.id);
            seen.extend(items);
        }
        seen
    };

    assert_eq!(page(ListFilter::default()).await, all);
    let pending: Vec<_> = all
        .iter()
        .filter(|d| d.status == Status::Pending)
        .cloned()
        .collect();
    assert_eq!(
        page(ListFilter {
            status: Some(Status::Pending),
            ..Default::default()
        })
        .await,
        pending
    );
    let todos: Vec<_> = all
        .iter()
        .filter(|d| d.kind() == Kind::Todo)
        .cloned()
        .collect();
    assert_eq!(todos.len(), 4);
    assert_eq!(
        page(ListFilter {
            kind: Some(Kind::Todo),
            ..Default::default()
        })
        .await,
        todos
    );
    let alpha_declined: Vec<_> = all
        .iter()
        .filter(|d| d.spec.project.as_deref() == Some("alpha") && d.status == Status::Declined)
        .cloned()
        .collect();
    assert!(!alpha_declined.is_empty());
    assert_eq!(
        page(ListFilter {
            project: Some("alpha".into()),
            status: Some(Status::Declined),
            ..Default::default()
        })
        .await,
        alpha_declined
    );
    assert!(
        page(ListFilter {
            project: Some("gamma".into()),
            ..Default::default()
        })
        .await
        .is_empty()
    );

    let first_three = store
        .list_decisions(
            home,
            &ListFilter {
                limit: 3,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(first_three, all[..3]);
}

async fn second_resolution_loses_to_the_first(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Deploy?").await;
    let at = T0 + Duration::minutes(5) + Duration::nanoseconds(123_456);
    let mut yes = answer(json!(true));
    yes.remark = Some("after 6pm".into());
    yes.custom = true;
    let first = won(store.resolve(d.id, &yes, at).await.unwrap());
    assert_eq!(first.status, Status::Answered);
    assert_eq!(first.outcome, Some(json!(true)));
    assert_eq!(first.outcome_source, Some(OutcomeSource::Human));
    assert!(first.custom);
    assert_eq!(first.remark.as_deref(), Some("after 6pm"));
    assert_eq!(first.resolved_at, Some(ms(at)));
    assert_eq!(first.created_at, d.created_at);
    assert_eq!(
        store.decision(None, d.id).await.unwrap(),
        Some(first.clone())
    );

    let later = at + Duration::seconds(1);
    let second = lost(
        store
            .resolve(d.id, &answer(json!(false)), later)
            .await
            .unwrap(),
    );
    assert_eq!(second, first);
    let cancel = lost(
        store
            .resolve(
                d.id,
                &Resolution::cancel(Some("changed my mind".into())),
                later,
            )
            .await
            .unwrap(),
    );
    assert_eq!(cancel, first);
    // Expiry cannot overwrite it either.
    let expiry = lost(store.expire(d.id, T0 + Duration::days(1)).await.unwrap());
    assert_eq!(expiry, first);
}

async fn resolve_after_expiry_loses_and_stays_pending(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Too late?").await;
    let at_expiry = lost(
        store
            .resolve(d.id, &answer(json!(true)), d.expires_at)
            .await
            .unwrap(),
    );
    assert_eq!(at_expiry, d);
    let after = lost(
        store
            .resolve(
                d.id,
                &Resolution::cancel(None),
                d.expires_at + Duration::minutes(1),
            )
            .await
            .unwrap(),
    );
    assert_eq!(after.status, Status::Pending);
    // A moment before the end still counts.
    let just_in_time = won(store
        .resolve(
            d.id,
            &answer(json!(false)),
            d.expires_at - Duration::milliseconds(1),
        )
        .await
        .unwrap());
    assert_eq!(just_in_time.outcome, Some(json!(false)));
}

async fn unknown_decision_is_not_found(store: &dyn Store) {
    let missing = Uuid::now_v7();
    let r = store.resolve(missing, &answer(json!(true)), T0).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
    let r = store.expire(missing, T0).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
    let r = store
        .record_event(missing, EventKind::Viewed, &json!({}), T0)
        .await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
    assert!(store.events(missing).await.unwrap().is_empty());
    assert!(store.notifications(missing).await.unwrap().is_empty());
    assert_eq!(store.image(missing).await.unwrap(), None);
}

async fn expire_before_its_time_loses(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Not yet").await;
    let early = lost(
        store
            .expire(d.id, d.expires_at - Duration::milliseconds(1))
            .await
            .unwrap(),
    );
    assert_eq!(early, d);
}

async fn expiry_applies_the_default_outcome(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let mut s = bool_spec("Proceed?");
    s.default_outcome = Some(json!({"proceed": false, "why": ["nobody answered"]}));
    let d = insert_at(store, home, &new_decision(s), T0, Duration::minutes(10)).await;
    let expired = won(store
        .expire(d.id, d.expires_at + Duration::minutes(3))
        .await
        .unwrap());
    assert_eq!(expired.status, Status::Expired);
    assert_eq!(expired.outcome, d.spec.default_outcome);
    assert_eq!(expired.outcome_source, Some(OutcomeSource::Default));
    assert!(!expired.custom);
    assert_eq!(expired.remark, None);
    assert_eq!(expired.resolved_at, Some(d.expires_at));
    assert_eq!(
        store.decision(None, d.id).await.unwrap(),
        Some(expired.clone())
    );

    let events = store.events(d.id).await.unwrap();
    let last = events.last().unwrap();
    assert_eq!(last.kind, EventKind::Expired);
    assert_eq!(last.at, d.expires_at);
    assert_eq!(last.detail["outcome_source"], "default");
    assert_eq!(
        last.detail["outcome"],
        d.spec.default_outcome.clone().unwrap()
    );

    let answer_late = lost(
        store
            .resolve(
                d.id,
                &answer(json!(true)),
                d.expires_at - Duration::seconds(1),
            )
            .await
            .unwrap(),
    );
    assert_eq!(answer_late, expired);
}

async fn expiry_without_default_has_no_outcome(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Anyone?").await;
    let expired = won(store.expire(d.id, d.expires_at).await.unwrap());
    assert_eq!(expired.status, Status::Expired);
    assert_eq!(expired.outcome, None);
    assert_eq!(expired.outcome_source, None);
    assert_eq!(expired.resolved_at, Some(d.expires_at));
    let again = lost(store.expire(d.id, d.expires_at).await.unwrap());
    assert_eq!(again, expired);
}

/// The ids of what a sweep expired, in its order.
fn swept_ids(swept: Vec<Swept>) -> Vec<Uuid> {
    swept.into_iter().map(|s| s.id).collect()
}

async fn expire_due_expires_each_due_decision_once(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let new = new_decision(bool_spec("due?"));
    let mut with_default = bool_spec("due with default?");
    with_default.default_outcome = Some(json!(true));
    let with_default = new_decision(with_default);
    let a = insert_at(store, home, &new, T0, Duration::minutes(2)).await;
    let b = insert_at(store, home, &with_default, T0, Duration::minutes(1)).await;
    let c = insert_at(store, home, &new, T0, Duration::minutes(3)).await;
    let later = insert_at(store, home, &new, T0, Duration::minutes(30)).await;
    let answered = insert_at(store, home, &new, T0, Duration::minutes(1)).await;
    won(store
        .resolve(answered.id, &answer(json!(true)), T0)
        .await
        .unwrap());

    let now = T0 + Duration::minutes(5);
    assert!(store.expire_due(T0, 10).await.unwrap().is_empty());
    // The limit takes the ones that expired first.
    assert_eq!(
        swept_ids(store.expire_due(now, 2).await.unwrap()),
        vec![b.id, a.id]
    );
    assert_eq!(
        swept_ids(store.expire_due(now, 10).await.unwrap()),
        vec![c.id]
    );
    assert!(store.expire_due(now, 10).await.unwrap().is_empty());

    let b = store.decision(None, b.id).await.unwrap().unwrap();
    assert_eq!(b.status, Status::Expired);
    assert_eq!(b.outcome, Some(json!(true)));
    assert_eq!(b.outcome_source, Some(OutcomeSource::Default));
    assert_eq!(b.resolved_at, Some(b.expires_at));
    let a = store.decision(None, a.id).await.unwrap().unwrap();
    assert_eq!(
        (a.status, a.outcome, a.outcome_source),
        (Status::Expired, None, None)
    );
    assert_eq!(a.resolved_at, Some(a.expires_at));
    for id in [a.id, b.id, c.id] {
        let kinds: Vec<EventKind> = store
            .events(id)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(kinds, [EventKind::Created, EventKind::Expired]);
    }
    let later = store.decision(None, later.id).await.unwrap().unwrap();
    assert_eq!(later.status, Status::Pending);
    let answered = store.decision(None, answered.id).await.unwrap().unwrap();
    assert_eq!(answered.status, Status::Answered);
}

async fn concurrent_resolutions_have_one_winner_each(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let mut ids = vec![];
    for i in 0..20 {
        ids.push(insert(store, home, &format!("race {i}")).await.id);
    }
    let resolutions: Vec<Resolution> = (0..8)
        .map(|task| match task % 3 {
            0 => answer(json!(task % 2 == 0)),
            1 => decline(&format!("task {task}")),
            _ => Resolution::cancel(Some(format!("task {task}"))),
        })
        .collect();
    let attempts = ids.iter().flat_map(|id| {
        resolutions
            .iter()
            .map(move |r| async move { (*id, store.resolve(*id, r, T0).await.unwrap()) })
    });
    let results = join_all(attempts).await;

    let mut winners: HashMap<Uuid, sayso::domain::Decision> = HashMap::new();
    let mut losers: Vec<sayso::domain::Decision> = vec![];
    for (id, r) in results {
        match r {
            Resolved::Won(d) => {
                assert!(winners.insert(id, d).is_none(), "two winners for {id}");
            }
            Resolved::Lost(d) => losers.push(d),
        }
    }
    assert_eq!(winners.len(), ids.len());
    assert_eq!(losers.len(), ids.len() * 7);
    for l in &losers {
        assert_eq!(
            Some(l),
            winners.get(&l.id),
            "a loser sees the winner's state"
        );
    }
    for id in &ids {
        let events = store.events(*id).await.unwrap();
        let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["created", winners[id].status.as_str()]);
    }
}

async fn events_are_kept_in_order(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Audit me").await;
    store
        .record_event(
            d.id,
            EventKind::Notified,
            &json!({"channel": "email"}),
            T0 + Duration::seconds(1),
        )
        .await
        .unwrap();
    store
        .record_event(
            d.id,
            EventKind::Viewed,
            &json!({}),
            T0 + Duration::seconds(2),
        )
        .await
        .unwrap();
    let mut r = answer(json!(true));
    r.remark = Some("fine".into());
    won(store
        .resolve(d.id, &r, T0 + Duration::seconds(3))
        .await
        .unwrap());
    store
        .record_event(
            d.id,
            EventKind::Notified,
            &json!({"status": 200}),
            T0 + Duration::seconds(4),
        )
        .await
        .unwrap();

    let events = store.events(d.id).await.unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["created", "notified", "viewed", "answered", "notified"]
    );
    let times: Vec<OffsetDateTime> = events.iter().map(|e| e.at).collect();
    let expected: Vec<OffsetDateTime> = (0..5).map(|s| ms(T0 + Duration::seconds(s))).collect();
    assert_eq!(times, expected);
    assert_eq!(events[1].detail, json!({"channel": "email"}));
    assert_eq!(events[3].detail["action"], "answer");
    assert_eq!(events[3].detail["outcome"], true);
    assert_eq!(events[3].detail["remark"], "fine");
    assert_eq!(events[4].detail, json!({"status": 200}));
}

async fn notifications_read_back(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let new = new_decision(bool_spec("Tell me"));
    let states = vec![
        NotificationState {
            channel: Channel::Email,
            status: MessageStatus::Pending,
            detail: None,
        },
        NotificationState {
            channel: Channel::Ntfy,
            status: MessageStatus::Skipped,
            detail: Some("no topic configured".into()),
        },
        NotificationState {
            channel: Channel::Push,
            status: MessageStatus::Failed,
            detail: Some("no subscription".into()),
        },
    ];
    let row = InsertDecision {
        id: Uuid::now_v7(),
        inbox_id: home,
        new: &new,
        created_at: T0,
        expires_at: T0 + Duration::hours(1),
        idempotency: None,
        notifications: states.clone(),
        outbox: vec![],
    };
    let id = row.id;
    store.insert_decision(row).await.unwrap();
    assert_eq!(store.notifications(id).await.unwrap(), states);
}

// ---- outbox ----

const LEASE: StdDuration = StdDuration::from_secs(30);

fn message(channel: &str, purpose: &str, not_before: OffsetDateTime) -> NewMessage {
    NewMessage {
        route: Route::parse(channel).expect("a route"),
        purpose: Purpose::parse(purpose).expect("a purpose"),
        payload: json!({ "to": channel, "n": [1, 2], "ü": "✓" }),
        not_before,
        give_up_at: not_before + Duration::hours(2),
    }
}

/// The parts of a stored message that come from its `NewMessage`.
fn new_parts(m: &OutboxMessage) -> (&str, &str, &Value, OffsetDateTime) {
    (
        m.route.as_str(),
        m.purpose.as_str(),
        &m.payload,
        m.give_up_at,
    )
}

fn expected_parts(m: &NewMessage) -> (&str, &str, &Value, OffsetDateTime) {
    (
        m.route.as_str(),
        m.purpose.as_str(),
        &m.payload,
        ms(m.give_up_at),
    )
}

/// Inserts a decision with outbox messages.
async fn insert_with_outbox(
    store: &dyn Store,
    inbox: Uuid,
    outbox: Vec<NewMessage>,
) -> sayso::domain::Decision {
    let new = new_decision(bool_spec("Tell me"));
    let row = InsertDecision {
        id: Uuid::now_v7(),
        inbox_id: inbox,
        new: &new,
        created_at: T0,
        expires_at: T0 + Duration::hours(1),
        idempotency: None,
        notifications: vec![],
        outbox,
    };
    match store.insert_decision(row).await.unwrap() {
        Inserted::New(d) => d,
        other => panic!("expected a new decision, got {other:?}"),
    }
}

fn result(status: MessageStatus, detail: Option<&str>) -> MessageResult {
    MessageResult {
        status,
        retry_at: None,
        detail: detail.map(str::to_owned),
    }
}

/// The one `resolved` fan-out a resolution at `at` leaves.
fn assert_one_fan_out(messages: &[OutboxMessage], at: OffsetDateTime) {
    assert_eq!(messages.len(), 1, "{messages:?}");
    let m = &messages[0];
    assert_eq!(
        (m.route.as_str(), m.purpose.as_str(), &m.payload),
        ("*", "resolved", &json!({}))
    );
    assert_eq!((m.status, m.attempts), (MessageStatus::Pending, 0));
    assert_eq!(m.created_at, ms(at));
    assert_eq!(m.give_up_at, ms(at) + Duration::hours(24));
    assert_eq!(m.last_error, None);
}

async fn outbox_rows_of_an_insert_come_back(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let outbox = vec![
        message("email", "ask", T0),
        message("push", "ask", T0),
        message("email", "reminder", T0 + Duration::minutes(30)),
    ];
    let d = insert_with_outbox(store, home, outbox.clone()).await;
    let stored = store.messages(d.id).await.unwrap();
    assert_eq!(
        stored.iter().map(new_parts).collect::<Vec<_>>(),
        outbox.iter().map(expected_parts).collect::<Vec<_>>()
    );
    for m in &stored {
        assert_eq!(m.decision_id, d.id);
        assert_eq!((m.status, m.attempts), (MessageStatus::Pending, 0));
        assert_eq!(m.created_at, d.created_at);
        assert_eq!(m.last_error, None);
    }
    assert_eq!(stored[0].id.get_version_num(), 7);
    assert!(stored[0].id != stored[1].id && stored[1].id != stored[2].id);

    // A repeated insert under the same idempotency key writes no messages.
    let new = new_decision(bool_spec("Keyed"));
    let key = Idempotency {
        key: "k-1",
        request_hash: "h",
    };
    let row = |outbox: Vec<NewMessage>| InsertDecision {
        id: Uuid::now_v7(),
        inbox_id: home,
        new: &new,
        created_at: T0,
        expires_at: T0 + Duration::hours(1),
        idempotency: Some(key),
        notifications: vec![],
        outbox,
    };
    let Inserted::New(first) = store
        .insert_decision(row(vec![message("email", "ask", T0)]))
        .await
        .unwrap()
    else {
        panic!("expected a new decision");
    };
    let again = store
        .insert_decision(row(vec![message("ntfy", "ask", T0)]))
        .await
        .unwrap();
    assert!(matches!(again, Inserted::Existing { .. }), "{again:?}");
    let kept = store.messages(first.id).await.unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].route, Route::Email);
    assert!(store.messages(Uuid::now_v7()).await.unwrap().is_empty());
}

async fn each_resolution_leaves_one_fan_out(store: &dyn Store) {
    let home = inbox(store, "home").await;

    // An answer, and the losers after it.
    let answered = insert_with_outbox(store, home, vec![message("email", "ask", T0)]).await;
    let at = T0 + Duration::minutes(5) + Duration::nanoseconds(7_654_321);
    won(store
        .resolve(answered.id, &answer(json!(true)), at)
        .await
        .unwrap());
    lost(
        store
            .resolve(answered.id, &Resolution::cancel(None), at)
            .await
            .unwrap(),
    );
    lost(
        store
            .expire(answered.id, answered.expires_at)
            .await
            .unwrap(),
    );
    let messages = store.messages(answered.id).await.unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].route, Route::Email);
    assert_one_fan_out(&messages[1..], at);

    // A resolution that loses to the clock writes nothing.
    let late = insert(store, home, "Late").await;
    lost(
        store
            .resolve(late.id, &answer(json!(true)), late.expires_at)
            .await
            .unwrap(),
    );
    assert!(store.messages(late.id).await.unwrap().is_empty());

    // An expiry.
    let expiring = insert(store, home, "Expiring").await;
    let now = expiring.expires_at + Duration::minutes(2) + Duration::microseconds(5);
    won(store.expire(expiring.id, now).await.unwrap());
    lost(store.expire(expiring.id, now).await.unwrap());
    assert_one_fan_out(&store.messages(expiring.id).await.unwrap(), now);

    // The sweep, on each decision it expires.
    let due: Vec<Uuid> = [
        insert(store, home, "due 1").await.id,
        insert(store, home, "due 2").await.id,
        insert(store, home, "due 3").await.id,
    ]
    .into();
    let now = T0 + Duration::hours(2) + Duration::nanoseconds(999_999);
    let mut swept = swept_ids(store.expire_due(now, 10).await.unwrap());
    assert!(store.expire_due(now, 10).await.unwrap().is_empty());
    swept.sort();
    let mut due_too: Vec<Uuid> = due.clone();
    due_too.push(late.id);
    due_too.sort();
    assert_eq!(swept, due_too);
    for id in &swept {
        assert_one_fan_out(&store.messages(*id).await.unwrap(), now);
    }

    // The fan-outs are due at once.
    let claimed = store.claim_messages(now, LEASE, 100).await.unwrap();
    let mut claimed_for: Vec<Uuid> = claimed
        .iter()
        .filter(|m| m.route == Route::FanOut)
        .map(|m| m.decision_id)
        .collect();
    claimed_for.sort();
    let mut resolved = swept.clone();
    resolved.extend([answered.id, expiring.id]);
    resolved.sort();
    assert_eq!(claimed_for, resolved);
}

async fn enqueue_is_idempotent(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert_with_outbox(store, home, vec![message("email", "ask", T0)]).await;
    let later = T0 + Duration::minutes(1);
    let first = vec![
        message("webhook", "resolved", later),
        message("ntfy", "ask", later),
    ];
    store.enqueue(d.id, &first, later).await.unwrap();
    let mut changed = first.clone();
    for m in &mut changed {
        m.payload = json!("changed");
        m.not_before = later + Duration::hours(1);
    }
    changed.push(message("email", "ask", later));
    store
        .enqueue(d.id, &changed, later + Duration::seconds(1))
        .await
        .unwrap();
    store.enqueue(d.id, &[], later).await.unwrap();

    let stored = store.messages(d.id).await.unwrap();
    let mut expected = vec![message("email", "ask", T0)];
    expected.extend(first);
    assert_eq!(
        stored.iter().map(new_parts).collect::<Vec<_>>(),
        expected.iter().map(expected_parts).collect::<Vec<_>>()
    );
    assert_eq!(stored[1].created_at, ms(later));
    // Kept as enqueued first: due at `later`, not an hour after.
    let claimed = store.claim_messages(later, LEASE, 10).await.unwrap();
    assert_eq!(claimed.len(), 3);

    let r = store
        .enqueue(Uuid::now_v7(), &[message("email", "ask", T0)], T0)
        .await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
}

async fn claim_respects_due_times_and_leases(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert_with_outbox(
        store,
        home,
        vec![
            message("email", "ask", T0 + Duration::seconds(2)),
            message("push", "ask", T0 + Duration::seconds(1)),
            message("email", "reminder", T0 + Duration::minutes(10)),
            message("ntfy", "ask", T0 + Duration::seconds(3)),
        ],
    )
    .await;
    assert!(
        store
            .claim_messages(T0, LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // Due ones only, soonest first, up to the limit, with the attempt counted.
    let now = T0 + Duration::seconds(3);
    let first = store.claim_messages(now, LEASE, 2).await.unwrap();
    let channels: Vec<&str> = first.iter().map(|m| m.route.as_str()).collect();
    assert_eq!(channels, ["push", "email"]);
    assert!(first.iter().all(|m| m.attempts == 1));
    assert!(first.iter().all(|m| m.status == MessageStatus::Pending));
    assert!(first.iter().all(|m| m.decision_id == d.id));
    let stored = store.messages(d.id).await.unwrap();
    assert_eq!(stored.iter().find(|m| m.id == first[0].id), Some(&first[0]));
    let rest = store.claim_messages(now, LEASE, 10).await.unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].route, Route::Ntfy);

    // Not again while the lease runs.
    let just_before = now + Duration::seconds(30) - Duration::milliseconds(1);
    assert!(
        store
            .claim_messages(just_before, LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // Once it ran out (a worker that died), again, with the next attempt.
    let again = store
        .claim_messages(now + Duration::seconds(30), LEASE, 10)
        .await
        .unwrap();
    let mut ids: Vec<(Uuid, u32)> = again.iter().map(|m| (m.id, m.attempts)).collect();
    ids.sort();
    let mut expected: Vec<(Uuid, u32)> = first.iter().chain(&rest).map(|m| (m.id, 2)).collect();
    expected.sort();
    assert_eq!(ids, expected);

    // A zero limit claims nothing.
    assert!(
        store
            .claim_messages(T0 + Duration::hours(1), LEASE, 0)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn concurrent_claims_hand_out_each_message_once(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let mut all = vec![];
    for i in 0..10 {
        let outbox = ["email", "push", "ntfy", "webhook", "*"]
            .iter()
            .map(|c| message(c, "ask", T0 + Duration::milliseconds(i)))
            .collect();
        let d = insert_with_outbox(store, home, outbox).await;
        all.extend(
            store
                .messages(d.id)
                .await
                .unwrap()
                .into_iter()
                .map(|m| m.id),
        );
    }
    assert_eq!(all.len(), 50);
    let now = T0 + Duration::seconds(1);
    let worker = || async {
        let mut mine = vec![];
        loop {
            let claimed = store.claim_messages(now, LEASE, 3).await.unwrap();
            if claimed.is_empty() {
                return mine;
            }
            for m in claimed {
                assert_eq!(m.attempts, 1, "{m:?} claimed twice");
                mine.push(m.id);
            }
            tokio::task::yield_now().await;
        }
    };
    let handed_out: Vec<Vec<Uuid>> = join_all((0..4).map(|_| worker())).await;
    let mut claimed: Vec<Uuid> = handed_out.into_iter().flatten().collect();
    claimed.sort();
    all.sort();
    assert_eq!(claimed, all);
}

async fn a_retried_message_is_rescheduled(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert_with_outbox(store, home, vec![message("email", "ask", T0)]).await;
    let now = T0 + Duration::seconds(1);
    let claimed = store.claim_messages(now, LEASE, 10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let retry_at = now + Duration::minutes(1) + Duration::nanoseconds(1_234_567);
    let retry = MessageResult {
        status: MessageStatus::Pending,
        retry_at: Some(retry_at),
        detail: Some("421 try later".into()),
    };
    store
        .finish_message(&claimed[0], &retry, &[], now)
        .await
        .unwrap();

    let stored = store.messages(d.id).await.unwrap();
    assert_eq!(stored[0].status, MessageStatus::Pending);
    assert_eq!(stored[0].attempts, 1);
    assert_eq!(stored[0].last_error.as_deref(), Some("421 try later"));
    assert_eq!(
        store.notifications(d.id).await.unwrap(),
        vec![NotificationState {
            channel: Channel::Email,
            status: MessageStatus::Pending,
            detail: Some("421 try later".into()),
        }]
    );
    let events = store.events(d.id).await.unwrap();
    let last = events.last().unwrap();
    assert_eq!((last.kind.as_str(), last.at), ("notified", ms(now)));
    assert_eq!(
        last.detail,
        json!({"channel": "email", "purpose": "ask", "attempt": 1,
               "status": "pending", "detail": "421 try later"})
    );

    // Free of its lease, but not due before the retry time.
    assert!(
        store
            .claim_messages(ms(retry_at) - Duration::milliseconds(1), LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let second = store.claim_messages(retry_at, LEASE, 10).await.unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!((second[0].id, second[0].attempts), (claimed[0].id, 2));
    assert_eq!(second[0].last_error.as_deref(), Some("421 try later"));
}

async fn a_finished_message_is_final_with_its_side_effects(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert_with_outbox(
        store,
        home,
        vec![
            message("email", "ask", T0),
            message("ntfy", "ask", T0),
            message("push", "ask", T0),
        ],
    )
    .await;
    let now = T0 + Duration::seconds(1);
    let claimed = store.claim_messages(now, LEASE, 10).await.unwrap();
    assert_eq!(claimed.len(), 3);
    let by_channel = |c: &str| {
        claimed
            .iter()
            .find(|m| m.route.as_str() == c)
            .unwrap()
            .clone()
    };
    let (email, ntfy, push) = (by_channel("email"), by_channel("ntfy"), by_channel("push"));

    let reminder = message("email", "reminder", T0 + Duration::minutes(30));
    let done = T0 + Duration::seconds(2);
    store
        .finish_message(
            &email,
            &result(MessageStatus::Sent, None),
            std::slice::from_ref(&reminder),
            done,
        )
        .await
        .unwrap();
    store
        .finish_message(
            &ntfy,
            &result(MessageStatus::Failed, Some("403 forbidden")),
            &[],
            done,
        )
        .await
        .unwrap();
    store
        .finish_message(
            &push,
            &result(MessageStatus::Skipped, Some("no subscription")),
            &[],
            done,
        )
        .await
        .unwrap();

    let stored = store.messages(d.id).await.unwrap();
    let status_of = |c: &str, p: &str| {
        stored
            .iter()
            .find(|m| m.route.as_str() == c && m.purpose.as_str() == p)
            .map(|m| (m.status, m.attempts, m.last_error.clone()))
            .unwrap()
    };
    assert_eq!(status_of("email", "ask"), (MessageStatus::Sent, 1, None));
    assert_eq!(
        status_of("ntfy", "ask"),
        (MessageStatus::Failed, 1, Some("403 forbidden".into()))
    );
    assert_eq!(
        status_of("push", "ask"),
        (MessageStatus::Skipped, 1, Some("no subscription".into()))
    );
    // The follow-up, created now, due when it said.
    let follow_up = stored.last().unwrap();
    assert_eq!(new_parts(follow_up), expected_parts(&reminder));
    assert_eq!(
        (follow_up.status, follow_up.attempts, follow_up.created_at),
        (MessageStatus::Pending, 0, ms(done))
    );
    let notifications = store.notifications(d.id).await.unwrap();
    let expected_notifications = vec![
        NotificationState {
            channel: Channel::Email,
            status: MessageStatus::Sent,
            detail: None,
        },
        NotificationState {
            channel: Channel::Ntfy,
            status: MessageStatus::Failed,
            detail: Some("403 forbidden".into()),
        },
        NotificationState {
            channel: Channel::Push,
            status: MessageStatus::Skipped,
            detail: Some("no subscription".into()),
        },
    ];
    assert_eq!(notifications, expected_notifications);
    let events = store.events(d.id).await.unwrap();
    let notified: Vec<&Value> = events
        .iter()
        .filter(|e| e.kind == EventKind::Notified)
        .map(|e| &e.detail)
        .collect();
    assert_eq!(notified.len(), 3);
    assert!(
        notified.contains(&&json!({"channel": "ntfy", "purpose": "ask", "attempt": 1,
                                       "status": "failed", "detail": "403 forbidden"}))
    );
    assert!(
        notified.contains(&&json!({"channel": "email", "purpose": "ask", "attempt": 1,
                                       "status": "sent", "detail": null}))
    );

    // Nothing final is claimed again, and the follow-up only when due.
    let later = T0 + Duration::minutes(10);
    assert!(
        store
            .claim_messages(later, LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // A late duplicate finish changes nothing, and writes nothing.
    let late = T0 + Duration::minutes(20);
    for r in [
        result(MessageStatus::Failed, Some("timed out")),
        MessageResult {
            status: MessageStatus::Pending,
            retry_at: Some(late),
            detail: Some("again".into()),
        },
    ] {
        store
            .finish_message(&email, &r, &[message("webhook", "ask", late)], late)
            .await
            .unwrap();
    }
    assert_eq!(store.messages(d.id).await.unwrap(), stored);
    assert_eq!(
        store.notifications(d.id).await.unwrap(),
        expected_notifications
    );
    assert_eq!(store.events(d.id).await.unwrap(), events);
}

async fn a_fan_out_leaves_notifications_alone(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Fan out").await;
    won(store.resolve(d.id, &answer(json!(true)), T0).await.unwrap());
    let claimed = store.claim_messages(T0, LEASE, 10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let per_channel = vec![
        message("email", "resolved", T0),
        message("webhook", "resolved", T0),
    ];
    store
        .finish_message(
            &claimed[0],
            &result(MessageStatus::Sent, None),
            &per_channel,
            T0,
        )
        .await
        .unwrap();
    assert!(store.notifications(d.id).await.unwrap().is_empty());
    let stored = store.messages(d.id).await.unwrap();
    assert_eq!(stored[0].status, MessageStatus::Sent);
    let expanded: Vec<&str> = stored[1..].iter().map(|m| m.route.as_str()).collect();
    assert_eq!(expanded, ["email", "webhook"]);
    let last = store.events(d.id).await.unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Notified);
    assert_eq!(last.detail["channel"], "*");
    assert_eq!(last.detail["purpose"], "resolved");
}

async fn inbox_channels_round_trip(store: &dyn Store) {
    let home = store
        .create_inbox("home", Some("me@example.com"), T0)
        .await
        .unwrap()
        .id;
    assert_eq!(
        store.inbox_channels(home).await.unwrap(),
        InboxChannels {
            email: Some("me@example.com".into()),
            ..InboxChannels::default()
        }
    );
    let channels = InboxChannels {
        email: Some("other@example.com".into()),
        ntfy_url: Some("https://ntfy.sh/my-topic".into()),
        ntfy_token: Some("tk_secret".into()),
        webhook_secret: Some("whsec_c2VjcmV0".into()),
    };
    store.set_inbox_channels(home, &channels).await.unwrap();
    assert_eq!(store.inbox_channels(home).await.unwrap(), channels);
    let inbox = store.inbox_by_id(home).await.unwrap().unwrap();
    assert_eq!(
        inbox,
        sayso::domain::inbox::Inbox {
            channels: channels.clone(),
            ..inbox.clone()
        }
    );
    assert_eq!(inbox.channels.email.as_deref(), Some("other@example.com"));
    store
        .set_inbox_channels(home, &InboxChannels::default())
        .await
        .unwrap();
    assert_eq!(
        store.inbox_channels(home).await.unwrap(),
        InboxChannels::default()
    );

    let missing = Uuid::now_v7();
    let r = store.inbox_channels(missing).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
    let r = store.set_inbox_channels(missing, &channels).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
}

async fn push_subscriptions_are_upserted_listed_and_removed(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let work = inbox(store, "work").await;
    let sub = |endpoint: &str, key: &str| PushSubscription {
        endpoint: format!("https://push.example.com/{endpoint}"),
        p256dh: format!("BP256-{key}"),
        auth: format!("auth-{key}"),
    };
    let (a, b, c) = (sub("a", "1"), sub("b", "2"), sub("c", "3"));
    store.add_push_subscription(home, &b, T0).await.unwrap();
    store
        .add_push_subscription(home, &a, T0 + Duration::seconds(1))
        .await
        .unwrap();
    store
        .add_push_subscription(work, &c, T0 + Duration::seconds(2))
        .await
        .unwrap();
    assert_eq!(
        store.push_subscriptions(home).await.unwrap(),
        vec![b.clone(), a.clone()]
    );

    // Subscribing again with new keys, and from another inbox, moves the subscription.
    let b2 = sub("b", "2-new");
    store
        .add_push_subscription(work, &b2, T0 + Duration::seconds(3))
        .await
        .unwrap();
    assert_eq!(
        store.push_subscriptions(home).await.unwrap(),
        vec![a.clone()]
    );
    assert_eq!(
        store.push_subscriptions(work).await.unwrap(),
        vec![c.clone(), b2]
    );

    store.remove_push_subscription(&a.endpoint).await.unwrap();
    store.remove_push_subscription(&a.endpoint).await.unwrap();
    store
        .remove_push_subscription("https://push.example.com/never")
        .await
        .unwrap();
    assert!(store.push_subscriptions(home).await.unwrap().is_empty());
    assert!(
        store
            .push_subscriptions(Uuid::now_v7())
            .await
            .unwrap()
            .is_empty()
    );
    let r = store.add_push_subscription(Uuid::now_v7(), &a, T0).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
}

// ---- backend-specific ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_listener_hears_resolutions_from_another_store() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let listening = PgStore::connect(&db.url).await.unwrap();
    let other = PgStore::connect(&db.url).await.unwrap();
    let heard = Arc::new(Mutex::new(Vec::<Signal>::new()));
    let sink = {
        let heard = heard.clone();
        Arc::new(move |s: Signal| heard.lock().unwrap().push(s))
    };
    let task = listening.listen(sink).expect("PostgreSQL listens");
    let home = inbox(&other, "home").await;

    let heard_of = |id: Uuid| {
        let heard = heard.clone();
        async move {
            for _ in 0..50 {
                if heard.lock().unwrap().contains(&Signal::Resolved(id)) {
                    return true;
                }
                tokio::time::sleep(StdDuration::from_millis(20)).await;
            }
            false
        }
    };

    // The listener subscribes in the background: resolve until it hears one.
    let mut subscribed = false;
    for _ in 0..10 {
        let d = insert(&other, home, "Heard?").await;
        won(other.resolve(d.id, &answer(json!(true)), T0).await.unwrap());
        if heard_of(d.id).await {
            subscribed = true;
            break;
        }
    }
    assert!(subscribed, "the listener never heard a resolution");

    let cancelled = insert(&other, home, "Cancelled?").await;
    won(other
        .resolve(cancelled.id, &Resolution::cancel(None), T0)
        .await
        .unwrap());
    assert!(heard_of(cancelled.id).await, "cancel was not heard");

    let expiring = insert(&other, home, "Expired?").await;
    won(other
        .expire(expiring.id, expiring.expires_at)
        .await
        .unwrap());
    assert!(heard_of(expiring.id).await, "expire was not heard");

    let due = insert(&other, home, "Due?").await;
    assert_eq!(
        swept_ids(other.expire_due(due.expires_at, 10).await.unwrap()),
        vec![due.id]
    );
    assert!(heard_of(due.id).await, "expire_due was not heard");

    // A lost resolution says nothing.
    lost(
        other
            .resolve(due.id, &answer(json!(true)), T0)
            .await
            .unwrap(),
    );
    assert!(!task.is_finished());
    // The first subscription is announced once (waiters parked before it re-read), and
    // nothing since.
    let reconnects = |heard: &Mutex<Vec<Signal>>| {
        heard
            .lock()
            .unwrap()
            .iter()
            .filter(|s| **s == Signal::Reconnected)
            .count()
    };
    assert_eq!(reconnects(&heard), 1);

    // Losing the connection is announced, and the listener carries on.
    let mut admin = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let killed: Vec<(bool,)> = sqlx::query_as(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    )
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert_eq!(killed, vec![(true,)]);
    let mut reconnected = false;
    for _ in 0..100 {
        if reconnects(&heard) > 1 {
            reconnected = true;
            break;
        }
        tokio::time::sleep(StdDuration::from_millis(50)).await;
    }
    assert!(
        reconnected,
        "no Reconnected signal after the connection was killed"
    );
    let after = insert(&other, home, "Still listening?").await;
    won(other
        .resolve(after.id, &answer(json!(true)), T0)
        .await
        .unwrap());
    assert!(heard_of(after.id).await, "nothing heard after reconnecting");
    assert!(!task.is_finished());
    task.abort();
}

#[tokio::test]
async fn postgres_unreachable_is_unavailable() {
    let started = std::time::Instant::now();
    let r = PgStore::connect("postgres://postgres@127.0.0.1:1/sayso").await;
    assert!(
        matches!(r, Err(StoreError::Unavailable(_))),
        "{:?}",
        r.err()
    );
    assert!(started.elapsed() < StdDuration::from_secs(10));
}

#[tokio::test]
async fn sqlite_listens_to_nobody() {
    let t = sqlite_store().await.unwrap();
    assert!(t.store.listen(Arc::new(|_| {})).is_none());
}

#[tokio::test]
async fn sqlite_in_memory_works() {
    let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
    let home = inbox(&store, "home").await;
    let d = insert(&store, home, "memory?").await;
    assert_eq!(store.decision(None, d.id).await.unwrap(), Some(d));
}

#[tokio::test]
async fn unknown_scheme_is_refused() {
    let r = sayso::storage::connect("mysql://localhost/sayso").await;
    let Err(StoreError::Other(message)) = r else {
        panic!("expected a refusal");
    };
    assert!(message.contains("mysql"), "{message}");
}

// ---- the event stream's reads, usage and the daily quota ----

async fn resolutions_are_listed_per_inbox_in_event_order(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let work = inbox(store, "work").await;
    let a1 = insert(store, home, "a1").await;
    let a2 = insert(store, home, "a2").await;
    let a3 = insert_at(
        store,
        home,
        &new_decision(bool_spec("a3")),
        T0,
        Duration::minutes(1),
    )
    .await;
    let pending = insert(store, home, "still pending").await;
    let b1 = insert(store, work, "b1").await;
    assert!(
        store
            .resolutions_since(home, 0, 100)
            .await
            .unwrap()
            .is_empty()
    );

    let at = T0 + Duration::seconds(1);
    store
        .resolve(a2.id, &answer(json!(true)), at)
        .await
        .unwrap();
    store
        .resolve(b1.id, &answer(json!(false)), at)
        .await
        .unwrap();
    store
        .resolve(a1.id, &Resolution::cancel(None), at)
        .await
        .unwrap();
    store
        .record_event(a1.id, EventKind::Viewed, &json!({}), at)
        .await
        .unwrap();
    store
        .expire_due(T0 + Duration::minutes(2), 10)
        .await
        .unwrap();

    let all = store.resolutions_since(home, 0, 100).await.unwrap();
    let ids: Vec<Uuid> = all.iter().map(|(_, d)| *d).collect();
    assert_eq!(ids, [a2.id, a1.id, a3.id], "in the order they resolved");
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0), "ids increase");
    assert!(!ids.contains(&pending.id));

    let after_first = store.resolutions_since(home, all[0].0, 100).await.unwrap();
    assert_eq!(after_first, all[1..]);
    assert_eq!(store.resolutions_since(home, 0, 1).await.unwrap(), all[..1]);
    assert!(
        store
            .resolutions_since(home, all[2].0, 100)
            .await
            .unwrap()
            .is_empty()
    );
    let theirs = store.resolutions_since(work, 0, 100).await.unwrap();
    assert_eq!(theirs.iter().map(|(_, d)| *d).collect::<Vec<_>>(), [b1.id]);
}

/// Inserts with an optional idempotency key, returning what the store said.
async fn try_insert(
    store: &dyn Store,
    inbox: Uuid,
    created: OffsetDateTime,
    key: Option<&str>,
) -> Inserted {
    let new = new_decision(bool_spec("counted?"));
    store
        .insert_decision(InsertDecision {
            id: Uuid::now_v7(),
            inbox_id: inbox,
            new: &new,
            created_at: created,
            expires_at: created + Duration::hours(1),
            idempotency: key.map(|key| Idempotency {
                key,
                request_hash: "h",
            }),
            notifications: vec![],
            outbox: vec![],
        })
        .await
        .unwrap()
}

async fn creates_count_on_their_utc_day_and_month(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let work = inbox(store, "work").await;
    for _ in 0..3 {
        insert_at(
            store,
            home,
            &new_decision(bool_spec("q")),
            T0,
            Duration::hours(1),
        )
        .await;
    }
    // The same key again is a replay, which costs nothing.
    assert!(matches!(
        try_insert(store, home, T0, Some("k")).await,
        Inserted::New(_)
    ));
    assert!(matches!(
        try_insert(store, home, T0, Some("k")).await,
        Inserted::Existing { .. }
    ));
    // Yesterday, the same month (T0 is 2 January).
    try_insert(store, home, T0 - Duration::days(1), None).await;
    // Last month, and late at night in another time zone that is already today in UTC.
    try_insert(store, home, T0 - Duration::days(5), None).await;
    let late = ms(T0)
        .to_offset(time::macros::offset!(-5))
        .replace_date(datetime!(2030-01-01 0:00).date())
        .replace_hour(22)
        .unwrap();
    assert_eq!(late.to_offset(time::UtcOffset::UTC).date(), T0.date());
    try_insert(store, home, late, None).await;
    try_insert(store, work, T0, None).await;

    let usage = store.usage(home, T0.date()).await.unwrap();
    assert_eq!(usage.today.creates, 5);
    assert_eq!(usage.today.actions, 5 * CREATE_ACTIONS);
    assert_eq!(usage.month.creates, 6);
    assert_eq!(usage.month.actions, 6 * CREATE_ACTIONS);
    assert_eq!(usage.daily_quota, None);
    let theirs = store.usage(work, T0.date()).await.unwrap();
    assert_eq!((theirs.today.creates, theirs.month.creates), (1, 1));
}

async fn a_daily_quota_refuses_the_create_past_it(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let work = inbox(store, "work").await;
    store.set_daily_quota(home, Some(5)).await.unwrap();
    assert!(matches!(
        try_insert(store, home, T0, Some("k")).await,
        Inserted::New(_)
    ));
    assert!(matches!(
        try_insert(store, home, T0, None).await,
        Inserted::New(_)
    ));
    assert!(matches!(
        try_insert(store, home, T0, None).await,
        Inserted::QuotaExceeded
    ));
    // A replay is free, also past the quota.
    assert!(matches!(
        try_insert(store, home, T0, Some("k")).await,
        Inserted::Existing { .. }
    ));
    let listed = store
        .list_decisions(
            home,
            &ListFilter {
                limit: 10,
                ..ListFilter::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(listed.len(), 2, "the refused create left nothing behind");
    let usage = store.usage(home, T0.date()).await.unwrap();
    assert_eq!((usage.today.actions, usage.today.creates), (4, 2));
    assert_eq!(usage.daily_quota, Some(5));

    // Other inboxes and the next day are not affected.
    assert!(matches!(
        try_insert(store, work, T0, None).await,
        Inserted::New(_)
    ));
    let tomorrow = T0 + Duration::days(1);
    assert!(matches!(
        try_insert(store, home, tomorrow, None).await,
        Inserted::New(_)
    ));

    store.set_daily_quota(home, None).await.unwrap();
    assert!(matches!(
        try_insert(store, home, T0, None).await,
        Inserted::New(_)
    ));
    assert_eq!(
        store.usage(home, T0.date()).await.unwrap().daily_quota,
        None
    );
    assert!(matches!(
        store.set_daily_quota(Uuid::now_v7(), Some(1)).await,
        Err(StoreError::NotFound)
    ));
}

async fn concurrent_creates_never_overshoot_the_quota(store: &dyn Store) {
    let home = inbox(store, "home").await;
    // Some usage from before the quota was set (on PostgreSQL, on other counter rows).
    for _ in 0..3 {
        try_insert(store, home, T0, None).await;
    }
    store.set_daily_quota(home, Some(20)).await.unwrap();
    let results = join_all((0..12).map(|_| try_insert(store, home, T0, None))).await;
    let new = results
        .iter()
        .filter(|r| matches!(r, Inserted::New(_)))
        .count();
    let refused = results
        .iter()
        .filter(|r| matches!(r, Inserted::QuotaExceeded))
        .count();
    assert_eq!((new, refused), (7, 5));
    let usage = store.usage(home, T0.date()).await.unwrap();
    assert_eq!((usage.today.actions, usage.today.creates), (20, 10));
}

// ---- retention and backup ----

async fn old_resolved_decisions_are_deleted_oldest_first_with_their_trails(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let first = insert(store, home, "First").await;
    let second = insert(store, home, "Second").await;
    let open = insert(store, home, "Still open").await;
    won(store
        .resolve(first.id, &answer(json!(true)), T0 + Duration::seconds(1))
        .await
        .unwrap());
    won(store
        .resolve(second.id, &decline("no"), T0 + Duration::seconds(2))
        .await
        .unwrap());
    // Nothing was resolved before the cutoff: nothing goes.
    assert_eq!(store.delete_resolved_before(T0, 10).await.unwrap(), 0);
    let cutoff = T0 + Duration::seconds(10);
    assert_eq!(store.delete_resolved_before(cutoff, 1).await.unwrap(), 1);
    assert!(
        store.decision(None, first.id).await.unwrap().is_none(),
        "oldest first"
    );
    assert!(store.decision(None, second.id).await.unwrap().is_some());
    assert_eq!(store.delete_resolved_before(cutoff, 1).await.unwrap(), 1);
    assert_eq!(store.delete_resolved_before(cutoff, 1).await.unwrap(), 0);
    for gone in [first.id, second.id] {
        assert!(store.decision(None, gone).await.unwrap().is_none());
        assert!(
            store.events(gone).await.unwrap().is_empty(),
            "its audit trail goes too"
        );
        assert!(
            store.messages(gone).await.unwrap().is_empty(),
            "and its outbox messages"
        );
    }
    let kept = store.decision(None, open.id).await.unwrap().unwrap();
    assert_eq!(kept.status, Status::Pending);
    assert_eq!(store.events(open.id).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_backup_is_a_working_copy_and_never_overwrites() {
    let t = sqlite_store().await.unwrap();
    let store = &*t.store;
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Back me up").await;
    let copy = common::db::fresh_sqlite_url();
    store.backup_to(&copy.path).await.unwrap();
    let again = store.backup_to(&copy.path).await.unwrap_err();
    assert!(matches!(again, StoreError::Conflict(_)), "{again:?}");
    let restored = SqliteStore::connect(&copy.url).await.unwrap();
    let read = restored.decision(None, d.id).await.unwrap().unwrap();
    assert_eq!(read.spec.question, "Back me up");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&copy.path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_backup_says_to_use_pg_dump() {
    let Some(t) = pg_store().await else { return };
    let path = std::env::temp_dir().join(format!("sayso-backup-{}.db", Uuid::new_v4().simple()));
    let err = t.store.backup_to(&path).await.unwrap_err();
    assert!(err.to_string().contains("pg_dump"), "{err}");
    assert!(!path.exists());
}
