//! What limits one API key and a flood of asks: which keys may ask urgent questions, their
//! hourly count, and each person's notification budget per channel.

use std::time::Duration as StdDuration;

use futures::future::join_all;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use sayso::domain::inbox::{Inbox, KeyGrant};
use sayso::domain::outbox::{MessageStatus, NewMessage, OutboxMessage};
use sayso::storage::{Budget, BudgetRule, KeyRef, Store, UrgentUse};

use crate::outbox::{LEASE, insert_with_outbox, message, result};
use crate::support::{T0, answer, inbox, ms, won};

const MINUTE: StdDuration = StdDuration::from_secs(60);

pub async fn keys_are_listed_and_allowed_urgent_by_id_or_hash(store: &dyn Store) {
    let home = store.create_inbox("home", None, T0).await.unwrap();
    let work = inbox(store, "work").await;
    let plain = store
        .create_api_key(home.id, "hash-1", false, T0)
        .await
        .unwrap();
    let later = T0 + Duration::seconds(1);
    let urgent = store
        .create_api_key(home.id, "hash-2", true, later)
        .await
        .unwrap();
    store
        .create_api_key(work, "hash-3", false, T0)
        .await
        .unwrap();

    let listed = store.api_keys(home.id).await.unwrap();
    let summary: Vec<(Uuid, bool, bool)> = listed
        .iter()
        .map(|k| (k.id, k.urgent, k.revoked_at.is_some()))
        .collect();
    assert_eq!(summary, [(plain, false, false), (urgent, true, false)]);
    assert_eq!(listed[0].created_at, ms(T0));
    assert_eq!(listed[1].created_at, ms(later));

    // The key comes with the inbox it opens, with what it may do.
    let read = store.inbox_for_key("hash-2").await.unwrap().unwrap();
    assert_eq!(
        read,
        Inbox {
            key: Some(KeyGrant {
                id: urgent,
                urgent: true
            }),
            ..home.clone()
        }
    );

    assert!(store.set_key_urgent(KeyRef::Id(plain), true).await.unwrap());
    assert!(
        store
            .set_key_urgent(KeyRef::Hash("hash-2"), false)
            .await
            .unwrap()
    );
    let key = |hash: &'static str| async move {
        store
            .inbox_for_key(hash)
            .await
            .unwrap()
            .unwrap()
            .key
            .unwrap()
    };
    assert!(key("hash-1").await.urgent);
    assert!(!key("hash-2").await.urgent);
    assert!(
        !store
            .set_key_urgent(KeyRef::Id(Uuid::now_v7()), true)
            .await
            .unwrap()
    );

    // A revoked key is listed, and changes no more.
    store
        .revoke_api_keys(sayso::storage::KeysToRevoke::Hash("hash-1"), later)
        .await
        .unwrap();
    assert!(
        !store
            .set_key_urgent(KeyRef::Id(plain), false)
            .await
            .unwrap()
    );
    let listed = store.api_keys(home.id).await.unwrap();
    assert_eq!(listed[0].revoked_at, Some(ms(later)));
    assert!(listed[0].urgent);
}

pub async fn urgent_questions_are_counted_per_key_and_hour(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let plain = store
        .create_api_key(home, "hash-1", false, T0)
        .await
        .unwrap();
    let urgent = store
        .create_api_key(home, "hash-2", true, T0)
        .await
        .unwrap();
    let other = store
        .create_api_key(home, "hash-3", true, T0)
        .await
        .unwrap();
    let cap = Some(3);

    assert_eq!(
        store.use_urgent(plain, T0, cap).await.unwrap(),
        UrgentUse::NotAllowed
    );
    assert_eq!(
        store.use_urgent(Uuid::now_v7(), T0, cap).await.unwrap(),
        UrgentUse::NotAllowed
    );
    for minute in 0..3 {
        let at = T0 + Duration::minutes(minute);
        assert_eq!(
            store.use_urgent(urgent, at, cap).await.unwrap(),
            UrgentUse::Granted
        );
    }
    // The fourth within the hour is refused until the first is an hour old.
    assert_eq!(
        store
            .use_urgent(urgent, T0 + Duration::minutes(30), cap)
            .await
            .unwrap(),
        UrgentUse::Spent {
            until: ms(T0) + Duration::hours(1)
        }
    );
    // Another key has its own count; no cap is no count.
    assert_eq!(
        store.use_urgent(other, T0, cap).await.unwrap(),
        UrgentUse::Granted
    );
    assert_eq!(
        store
            .use_urgent(urgent, T0 + Duration::minutes(30), None)
            .await
            .unwrap(),
        UrgentUse::Granted
    );
    let after = T0 + Duration::hours(1) + Duration::milliseconds(1);
    assert_eq!(
        store.use_urgent(urgent, after, cap).await.unwrap(),
        UrgentUse::Granted
    );
    assert_eq!(
        store.use_urgent(urgent, after, cap).await.unwrap(),
        UrgentUse::Spent {
            until: ms(T0 + Duration::minutes(1)) + Duration::hours(1)
        }
    );

    // Forbidding it, or revoking the key, stops it at once.
    store
        .set_key_urgent(KeyRef::Id(other), false)
        .await
        .unwrap();
    assert_eq!(
        store.use_urgent(other, T0, cap).await.unwrap(),
        UrgentUse::NotAllowed
    );
}

pub async fn concurrent_urgent_questions_never_pass_the_cap(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let key = store
        .create_api_key(home, "hash-1", true, T0)
        .await
        .unwrap();
    let uses = join_all((0..20).map(|_| store.use_urgent(key, T0, Some(5)))).await;
    let granted = uses
        .into_iter()
        .filter(|u| *u.as_ref().unwrap() == UrgentUse::Granted)
        .count();
    assert_eq!(granted, 5);
}

/// An ask on ntfy to `person`, due at T0, on a decision of its own.
async fn ask_to(store: &dyn Store, inbox: Uuid, person: Option<Uuid>) -> OutboxMessage {
    let m = NewMessage {
        person,
        ..message("ntfy", "ask", T0)
    };
    let d = insert_with_outbox(store, inbox, vec![m]).await;
    store.messages(d.id).await.unwrap().remove(0)
}

/// `m` counted at `at` against a budget of `per_window` a minute.
async fn count(
    store: &dyn Store,
    m: &OutboxMessage,
    at: OffsetDateTime,
    per_window: u32,
) -> Budget {
    store
        .count_notification(m, at, rule(per_window))
        .await
        .unwrap()
}

fn rule(per_window: u32) -> BudgetRule {
    BudgetRule {
        per_window,
        window: MINUTE,
    }
}

pub async fn a_spent_budget_holds_and_the_next_one_gathers_the_held(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let (ana, ben) = (Some(Uuid::now_v7()), Some(Uuid::now_v7()));
    let mut asks = Vec::new();
    for _ in 0..4 {
        asks.push(ask_to(store, home, ana).await);
    }
    let now = T0 + Duration::seconds(1);
    assert_eq!(
        count(store, &asks[0], now, 2).await,
        Budget::Granted { waiting: 0 }
    );
    let second = now + Duration::seconds(1);
    assert_eq!(
        count(store, &asks[1], second, 2).await,
        Budget::Granted { waiting: 0 }
    );
    // Spent until the first of the minute is a minute old.
    let until = ms(now) + Duration::minutes(1);
    for ask in &asks[2..] {
        assert_eq!(count(store, ask, second, 2).await, Budget::Spent { until });
    }
    // Another person, another channel, and a message to no one have budgets of their own.
    let bens = ask_to(store, home, ben).await;
    assert_eq!(
        count(store, &bens, second, 2).await,
        Budget::Granted { waiting: 0 }
    );
    let push = insert_with_outbox(
        store,
        home,
        vec![NewMessage {
            person: ana,
            ..message("push", "ask", T0)
        }],
    )
    .await;
    let push = store.messages(push.id).await.unwrap().remove(0);
    assert_eq!(
        count(store, &push, second, 2).await,
        Budget::Granted { waiting: 0 }
    );
    let nobody = ask_to(store, home, None).await;
    assert_eq!(
        count(store, &nobody, second, 2).await,
        Budget::Granted { waiting: 0 }
    );

    // When a place frees, the first held one to go stands for the other.
    assert_eq!(
        count(store, &asks[2], until, 2).await,
        Budget::Granted { waiting: 1 }
    );
    let stored = store.messages(asks[2].decision_id).await.unwrap().remove(0);
    assert_eq!(stored.payload["waiting"], 1);
    assert_eq!(
        count(store, &asks[3], until, 2).await,
        Budget::Covered { at: until }
    );
    // A retried delivery is counted once, with what it stood for.
    assert_eq!(
        count(store, &asks[2], until + Duration::seconds(1), 2).await,
        Budget::Granted { waiting: 1 }
    );
}

pub async fn held_messages_of_resolved_decisions_are_not_waiting(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let ana = Some(Uuid::now_v7());
    let first = ask_to(store, home, ana).await;
    let held = ask_to(store, home, ana).await;
    let settled = ask_to(store, home, ana).await;
    let now = T0 + Duration::seconds(1);
    assert!(matches!(
        count(store, &first, now, 1).await,
        Budget::Granted { .. }
    ));
    assert!(matches!(
        count(store, &held, now, 1).await,
        Budget::Spent { .. }
    ));
    assert!(matches!(
        count(store, &settled, now, 1).await,
        Budget::Spent { .. }
    ));
    // One held message's decision is answered, and its message finished as skipped.
    won(store
        .resolve(settled.decision_id, &answer(serde_json::json!(true)), now)
        .await
        .unwrap());
    let claimed = store
        .claim_messages(T0 + Duration::minutes(5), LEASE, 10)
        .await
        .unwrap();
    let mine = claimed.iter().find(|m| m.id == settled.id).unwrap();
    store
        .finish_message(mine, &result(MessageStatus::Skipped, None), &[], now)
        .await
        .unwrap();
    let later = now + Duration::minutes(1);
    assert_eq!(
        count(store, &held, later, 1).await,
        Budget::Granted { waiting: 0 }
    );
}

pub async fn concurrent_counts_never_pass_the_budget(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let ana = Some(Uuid::now_v7());
    let mut asks = Vec::new();
    for _ in 0..10 {
        asks.push(ask_to(store, home, ana).await);
    }
    let now = T0 + Duration::seconds(1);
    let counted = join_all(
        asks.iter()
            .map(|m| store.count_notification(m, now, rule(3))),
    )
    .await;
    let granted = counted
        .into_iter()
        .filter(|b| matches!(b.as_ref().unwrap(), Budget::Granted { .. }))
        .count();
    assert_eq!(granted, 3);
}
