//! Claiming outbox messages: due times, leases, one claimant each, retries and results.

use futures::future::join_all;
use serde_json::{Value, json};
use time::Duration;
use uuid::Uuid;

use sayso::domain::outbox::{Channel, MessageResult, MessageStatus, Route};
use sayso::domain::{EventKind, NotificationState};
use sayso::storage::Store;

use crate::outbox::{LEASE, expected_parts, insert_with_outbox, message, new_parts, result};
use crate::support::{T0, answer, inbox, insert, ms, won};

pub async fn claim_respects_due_times_and_leases(store: &dyn Store) {
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

pub async fn concurrent_claims_hand_out_each_message_once(store: &dyn Store) {
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

pub async fn a_retried_message_is_rescheduled(store: &dyn Store) {
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

pub async fn a_finished_message_is_final_with_its_side_effects(store: &dyn Store) {
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

pub async fn a_fan_out_leaves_notifications_alone(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Fan out").await;
    won(store.resolve(d.id, &answer(json!(true)), T0).await.unwrap());
    let claimed = store.claim_messages(T0, LEASE, 10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let per_channel = vec![
        message("email", "resolved", T0),
        message("webhook", "resolved", T0),
        message("completion", "resolved", T0),
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
    assert_eq!(expanded, ["email", "webhook", "completion"]);
    let last = store.events(d.id).await.unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Notified);
    assert_eq!(last.detail["channel"], "*");
    assert_eq!(last.detail["purpose"], "resolved");
}

/// A completion callback is a channel of its own beside the webhook: each is claimed, kept in
/// the audit trail and given its own notification state.
pub async fn a_completion_is_recorded_beside_the_webhook(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert_with_outbox(
        store,
        home,
        vec![
            message("webhook", "resolved", T0),
            message("completion", "resolved", T0),
        ],
    )
    .await;
    let claimed = store.claim_messages(T0, LEASE, 10).await.unwrap();
    let routes: Vec<Route> = claimed.iter().map(|m| m.route).collect();
    assert_eq!(routes, [Route::Webhook, Route::Completion]);
    for (m, status) in claimed
        .iter()
        .zip([MessageStatus::Sent, MessageStatus::Failed])
    {
        store
            .finish_message(m, &result(status, Some("answered 200")), &[], T0)
            .await
            .unwrap();
    }
    let mut states: Vec<(Channel, MessageStatus)> = store
        .notifications(d.id)
        .await
        .unwrap()
        .into_iter()
        .map(|n| (n.channel, n.status))
        .collect();
    states.sort_by_key(|(channel, _)| *channel);
    assert_eq!(
        states,
        [
            (Channel::Webhook, MessageStatus::Sent),
            (Channel::Completion, MessageStatus::Failed)
        ]
    );
    let notified: Vec<Value> = store
        .events(d.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == EventKind::Notified)
        .map(|e| e.detail["channel"].clone())
        .collect();
    assert_eq!(notified, [json!("webhook"), json!("completion")]);
}
