//! Passkeys per inbox, their signature counters, and spent passkey challenges.

use time::Duration;

use sayso::storage::{Store, StoreError, StoredPasskey};

use crate::support::{T0, inbox};

fn passkey(id: &str, count: u32) -> StoredPasskey {
    StoredPasskey {
        credential_id: id.into(),
        public_key: format!("key-of-{id}"),
        sign_count: count,
    }
}

pub async fn passkeys_are_kept_per_inbox_and_unique(store: &dyn Store) {
    let a = inbox(store, "a").await;
    let b = inbox(store, "b").await;
    store.add_passkey(a, &passkey("p1", 0), T0).await.unwrap();
    store
        .add_passkey(a, &passkey("p2", 5), T0 + Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(
        store.passkeys(a).await.unwrap(),
        [passkey("p1", 0), passkey("p2", 5)]
    );
    assert!(store.passkeys(b).await.unwrap().is_empty());
    // One credential belongs to one inbox only.
    assert!(matches!(
        store.add_passkey(b, &passkey("p1", 0), T0).await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .add_passkey(uuid::Uuid::now_v7(), &passkey("p3", 0), T0)
            .await,
        Err(StoreError::NotFound)
    ));
}

pub async fn a_passkey_counter_moves_only_from_where_it_stands(store: &dyn Store) {
    let a = inbox(store, "a").await;
    store.add_passkey(a, &passkey("p1", 3), T0).await.unwrap();
    assert!(store.use_passkey("p1", 3, 4, T0).await.unwrap());
    // A second use that read the old counter loses.
    assert!(!store.use_passkey("p1", 3, 4, T0).await.unwrap());
    assert!(!store.use_passkey("nope", 0, 1, T0).await.unwrap());
    assert_eq!(store.passkeys(a).await.unwrap()[0].sign_count, 4);
}

pub async fn a_challenge_is_spent_once(store: &dyn Store) {
    let expires = T0 + Duration::minutes(5);
    assert!(store.spend_challenge("c1", expires, T0).await.unwrap());
    assert!(!store.spend_challenge("c1", expires, T0).await.unwrap());
    assert!(store.spend_challenge("c2", expires, T0).await.unwrap());
    // Past its expiry the record is swept; the challenge itself is refused as expired then.
    let later = expires + Duration::seconds(1);
    assert!(store.spend_challenge("c1", later, later).await.unwrap());
}
