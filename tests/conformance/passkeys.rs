//! Passkeys per person, their signature counters, spent passkey challenges, and the notices
//! about no decision that a passkey added leaves.

use std::time::Duration as StdDuration;

use serde_json::json;
use time::Duration;
use uuid::Uuid;

use sayso::domain::outbox::{MessageResult, MessageStatus, NewMessage, Purpose, Route};
use sayso::domain::people::Person;
use sayso::storage::{Store, StoreError, StoredPasskey};

use crate::support::{T0, inbox, ms, own_person};

fn passkey(id: &str, count: u32, added: time::OffsetDateTime) -> StoredPasskey {
    StoredPasskey {
        credential_id: id.into(),
        public_key: format!("key-of-{id}"),
        sign_count: count,
        added_at: ms(added),
        last_used_at: None,
        user_agent: Some(format!("browser of {id}")),
    }
}

async fn someone(store: &dyn Store, inbox_id: Uuid, name: &str) -> Person {
    let p = Person::named(Uuid::now_v7(), inbox_id, name, ms(T0));
    store.add_person(&p).await.unwrap();
    p
}

pub async fn passkeys_are_kept_per_person_and_unique(store: &dyn Store) {
    let a = inbox(store, "a").await;
    let b = inbox(store, "b").await;
    let (home, ana) = (own_person(store, a).await, someone(store, a, "ana").await);
    let p1 = passkey("p1", 0, T0);
    let p2 = passkey("p2", 5, T0 + Duration::seconds(1));
    store.add_passkey(&home, &p1).await.unwrap();
    store.add_passkey(&home, &p2).await.unwrap();
    assert_eq!(store.passkeys(home.id).await.unwrap(), [p1.clone(), p2]);
    // Another person of the same inbox has none of them.
    assert!(store.passkeys(ana.id).await.unwrap().is_empty());
    // One credential belongs to one person only, in any inbox.
    for other in [&ana, &own_person(store, b).await] {
        assert!(matches!(
            store.add_passkey(other, &passkey("p1", 0, T0)).await,
            Err(StoreError::Conflict(_))
        ));
    }
    let nobody = Person {
        id: Uuid::now_v7(),
        ..ana.clone()
    };
    assert!(matches!(
        store.add_passkey(&nobody, &passkey("p3", 0, T0)).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn a_passkey_is_removed_only_from_its_person(store: &dyn Store) {
    let a = inbox(store, "a").await;
    let (home, ana) = (own_person(store, a).await, someone(store, a, "ana").await);
    store
        .add_passkey(&ana, &passkey("p1", 0, T0))
        .await
        .unwrap();
    assert!(!store.remove_passkey(home.id, "p1").await.unwrap());
    assert_eq!(store.passkeys(ana.id).await.unwrap().len(), 1);
    assert!(store.remove_passkey(ana.id, "p1").await.unwrap());
    assert!(!store.remove_passkey(ana.id, "p1").await.unwrap());
    assert!(store.passkeys(ana.id).await.unwrap().is_empty());
    // Removing the person takes their passkeys along.
    store
        .add_passkey(&ana, &passkey("p2", 0, T0))
        .await
        .unwrap();
    assert!(store.remove_person(ana.id).await.unwrap());
    assert!(store.passkeys(ana.id).await.unwrap().is_empty());
    store
        .add_passkey(&home, &passkey("p2", 0, T0))
        .await
        .unwrap();
}

pub async fn a_passkey_counter_moves_only_from_where_it_stands(store: &dyn Store) {
    let a = inbox(store, "a").await;
    let home = own_person(store, a).await;
    store
        .add_passkey(&home, &passkey("p1", 3, T0))
        .await
        .unwrap();
    let used = T0 + Duration::minutes(1);
    assert!(store.use_passkey("p1", 3, 4, used).await.unwrap());
    // A second use that read the old counter loses.
    assert!(!store.use_passkey("p1", 3, 4, used).await.unwrap());
    assert!(!store.use_passkey("nope", 0, 1, used).await.unwrap());
    let p = &store.passkeys(home.id).await.unwrap()[0];
    assert_eq!((p.sign_count, p.last_used_at), (4, Some(ms(used))));
}

pub async fn a_challenge_is_spent_once(store: &dyn Store) {
    let expires = T0 + Duration::minutes(5);
    assert!(store.spend_challenge("c1", expires, T0).await.unwrap());
    assert!(!store.spend_challenge("c1", expires, T0).await.unwrap());
    assert!(store.spend_challenge("c2", expires, T0).await.unwrap());
    // Up to its expiry, to the millisecond, the record is kept.
    assert!(!store.spend_challenge("c1", expires, expires).await.unwrap());
    // Past it the record is swept; the challenge itself is refused as expired then.
    let later = expires + Duration::milliseconds(1);
    assert!(store.spend_challenge("c1", later, later).await.unwrap());
}

fn notice(route: Route, person: Uuid, at: time::OffsetDateTime) -> NewMessage {
    NewMessage {
        route,
        purpose: Purpose::PasskeyAdded,
        payload: json!({"passkey": "p1"}),
        not_before: at,
        give_up_at: at + Duration::hours(24),
        person: Some(person),
    }
}

pub async fn a_notice_is_claimed_and_finished_without_a_decision(store: &dyn Store) {
    let a = inbox(store, "a").await;
    let home = own_person(store, a).await;
    let lease = StdDuration::from_secs(30);
    let sent = [
        notice(Route::Push, home.id, T0),
        notice(Route::Email, home.id, T0),
    ];
    store.enqueue_notices(&sent, T0).await.unwrap();
    let claimed = store.claim_messages(T0, lease, 10).await.unwrap();
    assert_eq!(claimed.len(), 2);
    for m in &claimed {
        assert!(m.decision_id.is_nil(), "{m:?}");
        assert_eq!(
            (m.purpose, m.person, &m.payload),
            (
                Purpose::PasskeyAdded,
                Some(home.id),
                &json!({"passkey": "p1"})
            )
        );
        let result = MessageResult {
            status: MessageStatus::Sent,
            retry_at: None,
            detail: Some("pushed".into()),
        };
        store.finish_message(m, &result, &[], T0).await.unwrap();
    }
    let later = T0 + Duration::minutes(1);
    assert!(
        store
            .claim_messages(later, lease, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // A month on, the finished notices are swept as new ones come; the new one is due.
    let month = T0 + Duration::days(31);
    store
        .enqueue_notices(&[notice(Route::Ntfy, home.id, month)], month)
        .await
        .unwrap();
    let claimed = store.claim_messages(month, lease, 10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].route, Route::Ntfy);
}
