//! Resolving a decision: the first resolution wins, every later one loses.

use std::collections::HashMap;

use futures::future::join_all;
use serde_json::json;
use time::Duration;
use uuid::Uuid;

use sayso::domain::{
    AnswerChannel, AnsweredBy, CancelReason, EventKind, OutcomeSource, Resolution, Status,
};
use sayso::storage::{Resolved, Store, StoreError};

use crate::support::{T0, answer, decline, inbox, insert, lost, ms, won};

pub async fn second_resolution_loses_to_the_first(store: &dyn Store) {
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

pub async fn resolve_after_expiry_loses_and_stays_pending(store: &dyn Store) {
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

pub async fn unknown_decision_is_not_found(store: &dyn Store) {
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

pub async fn concurrent_resolutions_have_one_winner_each(store: &dyn Store) {
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

pub async fn the_channel_and_device_of_an_answer_are_kept(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Deploy?").await;
    let device = Uuid::now_v7();
    let mut yes = answer(json!(true));
    yes.by = Some(AnsweredBy::new(AnswerChannel::Ntfy, Some(device)));
    let at = T0 + Duration::minutes(1);
    let first = won(store.resolve(d.id, &yes, at).await.unwrap());
    assert_eq!(first.answered_by, yes.by);
    assert_eq!(store.decision(None, d.id).await.unwrap(), Some(first));
    let answered = store
        .events(d.id)
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.kind == EventKind::Answered)
        .unwrap();
    assert_eq!(answered.detail["channel"], "ntfy");
    assert_eq!(answered.detail["device_id"], device.to_string());

    // A cancel is the API's; an expiry is nobody's.
    let c = insert(store, home, "Cancel me").await;
    let cancelled = won(store
        .resolve(c.id, &Resolution::cancel(None), at)
        .await
        .unwrap());
    assert_eq!(
        cancelled.answered_by,
        Some(AnsweredBy::new(AnswerChannel::Api, None))
    );
    let e = insert(store, home, "Let me expire").await;
    let expired = won(store.expire(e.id, T0 + Duration::days(1)).await.unwrap());
    assert_eq!(expired.answered_by, None);
}

pub async fn a_cancel_keeps_only_the_reason_the_server_reads(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let at = T0 + Duration::minutes(1);
    // Several at once, so a backend that writes in rounds writes them together.
    let mut ids = Vec::new();
    for i in 0..6 {
        ids.push(insert(store, home, &format!("Abandoned {i}")).await.id);
    }
    let abandoned = Resolution::cancel(Some("abandoned".into()));
    let free = Resolution::cancel(Some("Abandoned: the person allowed it".into()));
    let results = join_all(ids.iter().enumerate().map(|(i, id)| {
        let r = if i % 2 == 0 { &abandoned } else { &free };
        store.resolve(*id, r, at)
    }))
    .await;
    for (i, (id, r)) in ids.iter().zip(results).enumerate() {
        let d = won(r.unwrap());
        let want = (i % 2 == 0).then_some(CancelReason::Abandoned);
        assert_eq!(d.cancel_reason, want, "{i}");
        assert_eq!(store.decision(None, *id).await.unwrap(), Some(d));
        let cancelled = store
            .events(*id)
            .await
            .unwrap()
            .into_iter()
            .find(|e| e.kind == EventKind::Cancelled)
            .unwrap();
        let said = if i % 2 == 0 {
            "abandoned"
        } else {
            "Abandoned: the person allowed it"
        };
        assert_eq!(cancelled.detail["reason"], said);
    }
}
