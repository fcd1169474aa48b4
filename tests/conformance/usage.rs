//! Usage counting and the daily quota.

use futures::future::join_all;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use sayso::storage::{
    CREATE_ACTIONS, Idempotency, InsertDecision, Inserted, ListFilter, Store, StoreError,
};

use crate::support::{T0, bool_spec, inbox, insert_at, ms, new_decision};

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

pub async fn creates_count_on_their_utc_day_and_month(store: &dyn Store) {
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

pub async fn a_daily_quota_refuses_the_create_past_it(store: &dyn Store) {
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

pub async fn concurrent_creates_never_overshoot_the_quota(store: &dyn Store) {
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
