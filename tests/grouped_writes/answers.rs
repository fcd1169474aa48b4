//! Answers in a burst: one winner each, every await woken, one event and one outbox row per
//! resolution, no resolution missed by a reader following them; resolutions and votes
//! written together answer as they would alone.

use super::*;

pub(super) const ANSWERED: usize = 120;
pub(super) const CHOICES: [&str; 3] = ["A", "B", "C"];

/// Reads the inbox's resolutions as `GET /v1/events` does, remembering the last event id
/// seen, until `expected` were seen or `deadline` passes: what it saw, in order.
pub(super) async fn follow_resolutions(
    store: std::sync::Arc<dyn sayso::storage::Store>,
    inbox: Uuid,
    expected: usize,
    deadline: std::time::Instant,
) -> Vec<(i64, Uuid)> {
    let mut seen = Vec::new();
    let mut after = 0;
    while seen.len() < expected && std::time::Instant::now() < deadline {
        let page = store.resolutions_since(inbox, after, 50).await.unwrap();
        if let Some(&(last, _)) = page.last() {
            after = last;
        } else {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        seen.extend(page);
    }
    seen
}

/// 120 decisions each answered three ways at once by three callers, while an await waits on
/// each and a reader follows the inbox's resolutions by event id. On PostgreSQL the awaits
/// and the reader are on another replica, which only NOTIFY wakes, and one answer of each
/// decision goes through it.
pub(super) async fn a_burst_of_answers_has_one_winner_each(database_url: &str) {
    let srv = TestServer::start_rate_limited(database_url, RateLimit::OFF).await;
    // A SQLite file has one server; replicas share a PostgreSQL database.
    let replica = if database_url.starts_with("postgres") {
        Some(TestServer::start_replica(database_url, &srv).await)
    } else {
        None
    };
    let waiter = replica.as_ref().unwrap_or(&srv);
    let inbox = srv.svc.authenticate(&srv.key).await.unwrap().id;
    let handles = join_all((0..ANSWERED).map(|i| {
        srv.create(json!({"question": format!("Which {i}?"), "kind": "choose",
                          "options": CHOICES, "notify": "none"}))
    }))
    .await;
    let ids: Vec<String> = handles
        .iter()
        .map(|h| s(h, "decision_id").to_string())
        .collect();

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let follower = tokio::spawn(follow_resolutions(
        waiter.svc.store().clone(),
        inbox,
        ANSWERED,
        deadline,
    ));
    let awaits: Vec<_> = ids
        .iter()
        .map(|id| {
            let req = waiter.req(
                Method::GET,
                &format!("/v1/decisions/{id}/await?timeout_s=60"),
            );
            tokio::spawn(async move {
                let (status, body) = common::server::send(req).await;
                (status, body, std::time::Instant::now())
            })
        })
        .collect();
    // Let the awaits park before anything resolves.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;

    let started = std::time::Instant::now();
    let answers: Vec<_> = handles
        .iter()
        .flat_map(|h| CHOICES.iter().map(move |&choice| (h, choice)))
        .map(|(h, choice)| {
            // With a replica, the second answer of each goes through it: two stores' writers
            // resolve the inbox's decisions side by side.
            let url = match &replica {
                Some(replica) if choice == CHOICES[1] => {
                    s(h, "web_url").replacen(&srv.base, &replica.base, 1)
                }
                _ => s(h, "web_url").to_string(),
            };
            let req = srv.client.post(url).json(&json!({"value": choice}));
            tokio::spawn(async move { common::server::send(req).await })
        })
        .collect();
    let answers: Vec<(StatusCode, Value)> = join_all(answers)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();

    // Exactly one of the three won each; the others were told it is already resolved.
    let mut winners: Vec<&str> = Vec::new();
    for (i, tries) in answers.chunks(CHOICES.len()).enumerate() {
        let mut won = None;
        for ((status, body), choice) in tries.iter().zip(CHOICES) {
            match *status {
                StatusCode::OK => {
                    assert!(won.is_none(), "decision {i} won twice: {tries:?}");
                    assert_eq!(body["outcome"], choice, "decision {i}: {body}");
                    won = Some(choice);
                }
                StatusCode::CONFLICT => {
                    assert_eq!(body["error"]["code"], "already_resolved", "{body}")
                }
                other => panic!("decision {i}: {other}: {body}"),
            }
        }
        winners.push(won.unwrap_or_else(|| panic!("decision {i} has no winner: {tries:?}")));
    }

    // Each await woke with the winning answer, long before its timeout.
    for (i, wait) in awaits.into_iter().enumerate() {
        let (status, body, at) = wait.await.unwrap();
        assert_eq!(status, StatusCode::OK, "await {i}: {body}");
        assert_eq!(body["status"], "answered", "await {i}: {body}");
        assert_eq!(body["outcome"], winners[i], "await {i}: {body}");
        assert!(
            at.duration_since(started) < std::time::Duration::from_secs(30),
            "await {i} was not woken"
        );
    }

    // Each decision holds the winning answer once, one resolution event and one `resolved`
    // outbox row.
    let store = srv.svc.store();
    for (i, id) in ids.iter().enumerate() {
        let id: Uuid = id.parse().unwrap();
        let d = store.decision(Some(inbox), id).await.unwrap().unwrap();
        assert_eq!(d.outcome, Some(json!(winners[i])), "decision {i}");
        assert_eq!(d.answers.len(), 1, "decision {i}: {:?}", d.answers);
        let resolutions: Vec<EventKind> = event_kinds(store, id)
            .await
            .into_iter()
            .filter(|k| {
                matches!(
                    k,
                    EventKind::Answered
                        | EventKind::Declined
                        | EventKind::Cancelled
                        | EventKind::Expired
                )
            })
            .collect();
        assert_eq!(resolutions, [EventKind::Answered], "decision {i}");
        let fan_outs = store
            .messages(id)
            .await
            .unwrap()
            .into_iter()
            .filter(|m| m.purpose == Purpose::Resolved)
            .count();
        assert_eq!(fan_outs, 1, "decision {i}");
    }

    // The reader that followed by event id while they committed missed none and saw each
    // once, in increasing order.
    let followed = follower.await.unwrap();
    assert!(followed.windows(2).all(|w| w[0].0 < w[1].0), "{followed:?}");
    let followed: HashSet<String> = followed.iter().map(|(_, d)| d.to_string()).collect();
    assert_eq!(followed, ids.iter().cloned().collect::<HashSet<_>>());
    assert_eq!(
        store.resolutions_since(inbox, 0, 1000).await.unwrap().len(),
        ANSWERED
    );
    if let Some(replica) = replica {
        replica.stop().await;
    }
    srv.stop().await;
}

/// The store's answer to each of many resolutions and votes at once is what it would be
/// written alone: one winner per decision and the rest `Lost` to it, `NotFound` for no such
/// decision, `Lost` and still pending past its time, a count of answers compared as it is,
/// and a resolution that can never apply refused.
pub(super) async fn resolutions_written_together_answer_as_alone(database_url: &str) {
    let srv = TestServer::start_rate_limited(database_url, RateLimit::OFF).await;
    let store = srv.svc.store().clone();
    let raced = create_bools(&srv, 40, "Raced").await;
    let late = create_bools(&srv, 10, "Late").await;
    let tallied = create_bools(&srv, 10, "Tallied").await;
    let unknown: Vec<Uuid> = (0..10).map(|_| Uuid::now_v7()).collect();
    let mut late_before = Vec::new();
    for &id in &late {
        late_before.push(store.decision(None, id).await.unwrap().unwrap());
    }

    let now = sayso::service::now();
    let yes = |expect: Option<usize>| Resolution {
        status: Status::Answered,
        outcome: Some(json!(true)),
        outcome_source: Some(OutcomeSource::Human),
        custom: false,
        remark: None,
        detail: json!({"action": "answer"}),
        by: Some(AnsweredBy::new(AnswerChannel::Feed, None)),
        answer: expect.map(|_| vote()),
        expect_answers: expect,
        cancel_reason: None,
    };
    let decline = Resolution {
        status: Status::Declined,
        outcome: None,
        outcome_source: None,
        custom: false,
        remark: Some("no".into()),
        detail: json!({"action": "decline"}),
        by: Some(AnsweredBy::new(AnswerChannel::Link, None)),
        answer: None,
        expect_answers: None,
        cancel_reason: None,
    };
    let cancel = Resolution::cancel(Some("changed my mind".into()));
    let never = Resolution {
        status: Status::Expired,
        ..Resolution::cancel(None)
    };

    let mut asked = Vec::new();
    for &id in &raced {
        asked.push(Asked::Resolve(id, Box::new(yes(None)), now));
        asked.push(Asked::Resolve(id, Box::new(decline.clone()), now));
        asked.push(Asked::Resolve(id, Box::new(cancel.clone()), now));
    }
    for d in &late_before {
        asked.push(Asked::Resolve(d.id, Box::new(yes(None)), d.expires_at));
    }
    for &id in &tallied {
        asked.push(Asked::Vote(id));
        asked.push(Asked::Resolve(id, Box::new(yes(Some(0))), now));
        asked.push(Asked::Resolve(id, Box::new(yes(Some(1))), now));
    }
    for &id in &unknown {
        asked.push(Asked::Resolve(id, Box::new(yes(None)), now));
    }
    asked.push(Asked::Resolve(raced[0], Box::new(never), now));

    let got: Vec<Got> = join_all(asked.iter().map(|a| {
        let store = store.clone();
        async move {
            match a {
                Asked::Resolve(id, r, at) => {
                    Got::Resolved(Box::new(store.resolve(*id, r, *at).await))
                }
                Asked::Vote(id) => Got::Voted(Box::new(
                    store.add_answer(*id, 0, &vote(), now).await.unwrap(),
                )),
            }
        }
    }))
    .await;
    // Each kind's answers, in the order asked.
    let mut resolved = std::collections::VecDeque::new();
    let mut votes = std::collections::VecDeque::new();
    for g in got {
        match g {
            Got::Resolved(r) => resolved.push_back(*r),
            Got::Voted(v) => votes.push_back(*v),
        }
    }
    let mut next_resolved = || resolved.pop_front().expect("an answer each");

    for &id in &raced {
        let three = [next_resolved(), next_resolved(), next_resolved()];
        let won: Vec<&Decision> = three
            .iter()
            .filter_map(|r| match r {
                Ok(Resolved::Won(d)) => Some(d),
                _ => None,
            })
            .collect();
        assert_eq!(won.len(), 1, "{id}: {three:?}");
        for r in &three {
            match r {
                Ok(Resolved::Won(_)) => {}
                Ok(Resolved::Lost(d)) => assert_eq!(d, won[0], "a loser sees the winner"),
                Err(e) => panic!("{id}: {e}"),
            }
        }
        assert_eq!(
            store.decision(None, id).await.unwrap().as_ref(),
            Some(won[0])
        );
    }
    for before in &late_before {
        match next_resolved() {
            Ok(Resolved::Lost(d)) => assert_eq!(&d, before, "late, it stays as it was"),
            other => panic!("{}: {other:?}", before.id),
        }
    }
    for &id in &tallied {
        let voted = votes.pop_front().expect("an answer each").is_some();
        let (at_zero, at_one) = (next_resolved().unwrap(), next_resolved().unwrap());
        let won = |r: &Resolved| matches!(r, Resolved::Won(_));
        // The vote and the resolution tallied against no answers both need the count at 0:
        // exactly one of them made it.
        assert!(voted != won(&at_zero), "{id}: {voted} {at_zero:?}");
        assert!(!(won(&at_zero) && won(&at_one)), "{id} resolved twice");
        let d = store.decision(None, id).await.unwrap().unwrap();
        let resolved = usize::from(won(&at_zero)) + usize::from(won(&at_one));
        assert_eq!(
            d.answers.len(),
            usize::from(voted) + resolved,
            "{id}: {d:?}"
        );
        assert_eq!(d.status == Status::Answered, resolved == 1, "{id}");
        let events = store.events(id).await.unwrap();
        let count = |kind| events.iter().filter(|e| e.kind == kind).count();
        assert_eq!(count(EventKind::Voted), usize::from(voted), "{id}");
        assert_eq!(count(EventKind::Answered), resolved, "{id}");
    }
    for _ in &unknown {
        assert!(matches!(next_resolved(), Err(StoreError::NotFound)));
    }
    assert!(matches!(next_resolved(), Err(StoreError::Other(_))));
    srv.stop().await;
}

/// A change asked of the store at once with the others.
pub(super) enum Asked {
    Resolve(Uuid, Box<Resolution>, time::OffsetDateTime),
    Vote(Uuid),
}

/// What the store answered it.
pub(super) enum Got {
    Resolved(Box<Result<Resolved, StoreError>>),
    Voted(Box<Option<Decision>>),
}

/// Creates `n` yes-or-no questions; their ids.
pub(super) async fn create_bools(srv: &TestServer, n: usize, what: &str) -> Vec<Uuid> {
    join_all((0..n).map(|i| {
        srv.create(json!({"question": format!("{what} {i}?"), "kind": "bool", "notify": "none"}))
    }))
    .await
    .iter()
    .map(|h| s(h, "decision_id").parse().unwrap())
    .collect()
}

/// The kinds of a decision's events, in the order they happened.
pub(super) async fn event_kinds(
    store: &std::sync::Arc<dyn sayso::storage::Store>,
    id: Uuid,
) -> Vec<EventKind> {
    store
        .events(id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect()
}

/// A person's answer, as a vote or a tallied resolution appends it.
pub(super) fn vote() -> AnswerRecord {
    AnswerRecord {
        person: Some("ann".into()),
        person_id: None,
        action: AnswerAction::Answer,
        value: Some(json!(true)),
        remark: None,
        edited_command: None,
        at: sayso::service::now(),
        channel: AnswerChannel::Feed,
    }
}
