//! Decisions: read back exactly, idempotent inserts, per-inbox visibility and the list.

use futures::future::join_all;
use serde_json::json;
use time::Duration;
use uuid::Uuid;

use sayso::domain::outbox::{Channel, MessageStatus};
use sayso::domain::spec::Image;
use sayso::domain::{DecisionSpec, Kind, NotificationState, Status};
use sayso::storage::{Idempotency, InsertDecision, Inserted, ListFilter, Store, StoreError};

use crate::support::{
    T0, answer, bool_spec, decline, inbox, insert, insert_at, ms, new_decision,
    specs_of_every_kind, won,
};

pub async fn decisions_of_every_kind_read_back_exactly(store: &dyn Store) {
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

pub async fn idempotent_insert_returns_the_first_decision(store: &dyn Store) {
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

pub async fn concurrent_inserts_with_one_key_make_one_decision(store: &dyn Store) {
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

/// Creates that arrive together are written together; one that fails (its inbox is gone)
/// fails alone, and an idempotency key repeated among them still makes one decision.
pub async fn a_failing_create_fails_alone_among_concurrent_ones(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let new = new_decision(bool_spec("together"));
    for round in 0..3 {
        let key = format!("same-{round}");
        let results = join_all((0..48).map(|i| {
            let (inbox_id, idempotency) = match i % 8 {
                3 => (Uuid::now_v7(), None),
                5 | 6 => (
                    home,
                    Some(Idempotency {
                        key: &key,
                        request_hash: "h",
                    }),
                ),
                _ => (home, None),
            };
            store.insert_decision(InsertDecision {
                id: Uuid::now_v7(),
                inbox_id,
                new: &new,
                created_at: T0,
                expires_at: T0 + Duration::hours(1),
                idempotency,
                notifications: vec![],
                outbox: vec![],
            })
        }))
        .await;
        let mut keyed = vec![];
        for (i, result) in results.into_iter().enumerate() {
            match (i % 8, result) {
                (3, Err(StoreError::NotFound)) => {}
                (5 | 6, Ok(Inserted::New(d))) => keyed.push((true, d.id)),
                (5 | 6, Ok(Inserted::Existing { decision, .. })) => {
                    keyed.push((false, decision.id))
                }
                (0..=2 | 4 | 7, Ok(Inserted::New(_))) => {}
                (_, other) => panic!("round {round}, create {i}: {other:?}"),
            }
        }
        let made: Vec<Uuid> = keyed.iter().filter(|(new, _)| *new).map(|k| k.1).collect();
        assert_eq!(made.len(), 1, "round {round}: {keyed:?}");
        assert!(keyed.iter().all(|(_, id)| *id == made[0]), "{keyed:?}");
    }
    let all = store
        .list_decisions(
            home,
            &ListFilter {
                limit: 500,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    // Each round: 30 plain creates and one keyed.
    assert_eq!(all.len(), 3 * 31);
}

pub async fn decision_of_another_inbox_is_not_found(store: &dyn Store) {
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

pub async fn list_is_newest_first_filtered_and_paged(store: &dyn Store) {
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
