//! What time does to decisions: expiry with and without a default, and retention.

use serde_json::json;
use time::Duration;

use sayso::domain::{EventKind, OutcomeSource, Status};
use sayso::storage::Store;

use crate::support::{
    T0, answer, bool_spec, decline, inbox, insert, insert_at, lost, new_decision, swept_ids, won,
};

pub async fn expire_before_its_time_loses(store: &dyn Store) {
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

pub async fn expiry_applies_the_default_outcome(store: &dyn Store) {
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

pub async fn expiry_without_default_has_no_outcome(store: &dyn Store) {
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

pub async fn expire_due_expires_each_due_decision_once(store: &dyn Store) {
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

pub async fn old_resolved_decisions_are_deleted_oldest_first_with_their_trails(store: &dyn Store) {
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
