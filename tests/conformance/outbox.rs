//! The outbox: the messages an insert and a resolution leave, and idempotent enqueueing;
//! the message helpers the claim cases share.

use std::time::Duration as StdDuration;

use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use sayso::domain::Resolution;
use sayso::domain::outbox::{
    MessageResult, MessageStatus, NewMessage, OutboxMessage, Purpose, Route,
};
use sayso::storage::{Idempotency, InsertDecision, Inserted, Store, StoreError};

use crate::support::{
    T0, answer, bool_spec, inbox, insert, lost, ms, new_decision, swept_ids, won,
};

pub const LEASE: StdDuration = StdDuration::from_secs(30);

pub fn message(channel: &str, purpose: &str, not_before: OffsetDateTime) -> NewMessage {
    NewMessage {
        route: Route::parse(channel).expect("a route"),
        purpose: Purpose::parse(purpose).expect("a purpose"),
        payload: json!({ "to": channel, "n": [1, 2], "ü": "✓" }),
        not_before,
        give_up_at: not_before + Duration::hours(2),
        person: None,
    }
}

/// The parts of a stored message that come from its `NewMessage`.
pub fn new_parts(m: &OutboxMessage) -> (&str, &str, &Value, OffsetDateTime) {
    (
        m.route.as_str(),
        m.purpose.as_str(),
        &m.payload,
        m.give_up_at,
    )
}

pub fn expected_parts(m: &NewMessage) -> (&str, &str, &Value, OffsetDateTime) {
    (
        m.route.as_str(),
        m.purpose.as_str(),
        &m.payload,
        ms(m.give_up_at),
    )
}

/// Inserts a decision with outbox messages.
pub async fn insert_with_outbox(
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

pub fn result(status: MessageStatus, detail: Option<&str>) -> MessageResult {
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

pub async fn outbox_rows_of_an_insert_come_back(store: &dyn Store) {
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

pub async fn each_resolution_leaves_one_fan_out(store: &dyn Store) {
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

pub async fn enqueue_is_idempotent(store: &dyn Store) {
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

/// A `progress` message already sent is sent again when enqueued again (each counted answer
/// of a rule of several reaches the chats); one still waiting stays as it is, and so does a
/// sent message of any other purpose.
pub async fn a_sent_progress_message_is_sent_again(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert_with_outbox(store, home, vec![]).await;
    let progress = message("telegram", "progress", T0);
    let ask = message("telegram", "ask", T0);
    store
        .enqueue(d.id, &[progress.clone(), ask.clone()], T0)
        .await
        .unwrap();
    let claimed = store.claim_messages(T0, LEASE, 10).await.unwrap();
    assert_eq!(claimed.len(), 2);
    for m in &claimed {
        store
            .finish_message(m, &result(MessageStatus::Sent, None), &[], T0)
            .await
            .unwrap();
    }
    // Enqueued again a minute later, as a follow-up of a second answer.
    let later = T0 + Duration::minutes(1);
    let again = [
        NewMessage {
            not_before: later,
            ..progress.clone()
        },
        NewMessage {
            not_before: later,
            ..ask.clone()
        },
    ];
    store.enqueue(d.id, &again, later).await.unwrap();
    let due = store.claim_messages(later, LEASE, 10).await.unwrap();
    assert_eq!(
        due.iter().map(|m| m.purpose.as_str()).collect::<Vec<_>>(),
        ["progress"]
    );
    assert_eq!(due[0].attempts, 1, "counted afresh");
    // Still pending (claimed, not finished): enqueued again, it is left alone.
    store.enqueue(d.id, &again, later).await.unwrap();
    assert!(
        store
            .claim_messages(later, LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.messages(d.id).await.unwrap().len(), 2);
}
