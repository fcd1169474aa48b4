//! The audit trail, the notification states and the event stream's reads.

use serde_json::json;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use sayso::domain::outbox::{Channel, MessageStatus};
use sayso::domain::{EventKind, NotificationState, Resolution};
use sayso::storage::{InsertDecision, Store};

use crate::support::{T0, answer, bool_spec, inbox, insert, insert_at, ms, new_decision, won};

pub async fn events_are_kept_in_order(store: &dyn Store) {
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

pub async fn notifications_read_back(store: &dyn Store) {
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

pub async fn resolutions_are_listed_per_inbox_in_event_order(store: &dyn Store) {
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
