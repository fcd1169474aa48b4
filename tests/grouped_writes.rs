//! Creates that arrive together are written together (group commit), and grouping changes
//! nothing a client can tell: every acknowledged create is there exactly once with its one
//! `created` event, an idempotency key repeated inside one burst makes one decision and
//! replays it to the rest, notifications and their outbox rows come with each, and the
//! daily quota is never overshot. API keys looked up together (PostgreSQL reads them in
//! batches) each get their own inbox, and a revoked key is refused from the moment its revoke
//! returns; decisions read together (PostgreSQL reads them by id in batches) each come back
//! to their own inbox only. Answers that arrive together are written together too, and still one wins each
//! decision, every await wakes with it, each resolution has one event and one outbox row, and
//! a reader following an inbox's resolutions by event id misses none; the store answers each
//! of many resolutions and votes at once as it would answer it alone. On SQLite and
//! PostgreSQL, over HTTP.

mod common;

use std::collections::{HashMap, HashSet};

use common::server::{TestServer, s};
use futures::future::join_all;
use reqwest::{Method, StatusCode};
use sayso::domain::outbox::Purpose;
use sayso::domain::people::AnswerRecord;
use sayso::domain::{
    AnswerAction, AnswerChannel, AnsweredBy, Decision, EventKind, OutcomeSource, Resolution, Status,
};
use sayso::http::RateLimit;
use sayso::storage::{Resolved, StoreError};
use serde_json::{Value, json};
use uuid::Uuid;

/// Each case as two tests: one on a fresh SQLite file, one on a fresh PostgreSQL database
/// (skipped, loudly, when none is running).
macro_rules! on_both_stores {
    ($($sqlite:ident, $postgres:ident => $case:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            let db = common::db::fresh_sqlite_url();
            $case(&db.url).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            let Some(db) = common::db::fresh_pg_url().await else {
                return;
            };
            $case(&db.url).await;
        }
    )*};
}

on_both_stores! {
    sqlite_a_burst_of_creates_is_each_written_once,
    postgres_a_burst_of_creates_is_each_written_once => a_burst_of_creates_is_each_written_once;
    sqlite_a_burst_never_overshoots_the_quota,
    postgres_a_burst_never_overshoots_the_quota => a_burst_never_overshoots_the_quota;
    sqlite_keys_read_together_each_get_their_own_inbox,
    postgres_keys_read_together_each_get_their_own_inbox => keys_read_together_each_get_their_own_inbox;
    sqlite_decisions_read_together_each_get_their_own,
    postgres_decisions_read_together_each_get_their_own => decisions_read_together_each_get_their_own;
    sqlite_a_burst_of_answers_has_one_winner_each,
    postgres_a_burst_of_answers_has_one_winner_each => a_burst_of_answers_has_one_winner_each;
    sqlite_resolutions_written_together_answer_as_alone,
    postgres_resolutions_written_together_answer_as_alone => resolutions_written_together_answer_as_alone;
}

const PLAIN: usize = 240;
const KEYS: usize = 20;
const REPEATS: usize = 5;

async fn create(srv: &TestServer, body: &Value, key: Option<&str>) -> (StatusCode, Value) {
    let mut req = srv.req(Method::POST, "/v1/decisions").json(body);
    if let Some(key) = key {
        req = req.header("Idempotency-Key", key);
    }
    common::server::send(req).await
}

async fn a_burst_of_creates_is_each_written_once(database_url: &str) {
    let srv = TestServer::start_rate_limited(database_url, RateLimit::OFF).await;
    let inbox = srv.svc.authenticate(&srv.key).await.unwrap().id;

    // Plain creates, some with notifications and so outbox rows, and repeats of a few
    // idempotency keys, all at once.
    let mut burst: Vec<(Value, Option<String>)> = (0..PLAIN)
        .map(|i| {
            let notify = if i.is_multiple_of(3) { "push" } else { "none" };
            (
                json!({"question": format!("Plain {i}?"), "kind": "bool", "notify": notify}),
                None,
            )
        })
        .collect();
    for k in 0..KEYS {
        for _ in 0..REPEATS {
            burst.push((
                json!({"question": format!("Keyed {k}?"), "kind": "bool", "notify": "none"}),
                Some(format!("key-{k}")),
            ));
        }
    }
    // Interleave, so repeats of one key land in one group and in different ones.
    burst.sort_by_key(|(body, _)| body["question"].as_str().unwrap().len() % 7);
    let results = join_all(
        burst
            .iter()
            .map(|(body, key)| create(&srv, body, key.as_deref())),
    )
    .await;

    let mut acknowledged: HashSet<String> = HashSet::new();
    let mut by_key: HashMap<String, Vec<(StatusCode, String)>> = HashMap::new();
    for ((_, key), (status, handle)) in burst.iter().zip(&results) {
        assert!(
            status == &StatusCode::CREATED || status == &StatusCode::OK,
            "{status}: {handle}"
        );
        let id = s(handle, "decision_id").to_string();
        match key {
            Some(key) => by_key
                .entry(key.clone())
                .or_default()
                .push((*status, id.clone())),
            None => assert_eq!(*status, StatusCode::CREATED),
        }
        acknowledged.insert(id);
    }
    assert_eq!(by_key.len(), KEYS);
    for (key, answers) in &by_key {
        let made = answers
            .iter()
            .filter(|(st, _)| *st == StatusCode::CREATED)
            .count();
        assert_eq!(made, 1, "{key}: {answers:?}");
        let ids: HashSet<&String> = answers.iter().map(|(_, id)| id).collect();
        assert_eq!(ids.len(), 1, "{key} gave several decisions: {answers:?}");
    }
    assert_eq!(acknowledged.len(), PLAIN + KEYS);

    // Each is stored once, with one `created` event; those with push have their outbox row.
    let store = srv.svc.store();
    for (i, id) in acknowledged.iter().enumerate() {
        let id: Uuid = id.parse().unwrap();
        let d = store
            .decision(Some(inbox), id)
            .await
            .unwrap()
            .expect("an acknowledged create is stored");
        let created = event_kinds(store, id)
            .await
            .into_iter()
            .filter(|&k| k == EventKind::Created)
            .count();
        assert_eq!(created, 1, "decision {i}");
        if d.spec.question.starts_with("Plain") {
            let n: usize = d.spec.question[6..d.spec.question.len() - 1]
                .parse()
                .unwrap();
            let messages = store.messages(id).await.unwrap();
            assert_eq!(
                !messages.is_empty(),
                n.is_multiple_of(3),
                "{}",
                d.spec.question
            );
        }
    }
    let usage = store
        .usage(inbox, sayso::service::now().date())
        .await
        .unwrap();
    assert_eq!(usage.today.creates, (PLAIN + KEYS) as i64);

    // A key replayed with another body afterwards is still refused.
    let (status, err) = create(
        &srv,
        &json!({"question": "Something else?", "kind": "bool"}),
        Some("key-0"),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert_eq!(err["error"]["code"], "idempotency_mismatch");
    srv.stop().await;
}

async fn a_burst_never_overshoots_the_quota(database_url: &str) {
    let srv = TestServer::start_rate_limited(database_url, RateLimit::OFF).await;
    let inbox = srv.svc.authenticate(&srv.key).await.unwrap().id;
    // 2 actions a create: room for 25.
    srv.svc
        .store()
        .set_daily_quota(inbox, Some(50))
        .await
        .unwrap();
    let body = json!({"question": "Within the quota?", "kind": "bool", "notify": "none"});
    let results = join_all((0..120).map(|_| create(&srv, &body, None))).await;
    let made = results
        .iter()
        .filter(|(st, _)| *st == StatusCode::CREATED)
        .count();
    let refused: Vec<&Value> = results
        .iter()
        .filter(|(st, _)| *st == StatusCode::TOO_MANY_REQUESTS)
        .map(|(_, body)| body)
        .collect();
    assert_eq!((made, refused.len()), (25, 95));
    assert!(
        refused
            .iter()
            .all(|e| e["error"]["code"] == "quota_exceeded")
    );
    let usage = srv
        .svc
        .store()
        .usage(inbox, sayso::service::now().date())
        .await
        .unwrap();
    assert_eq!((usage.today.actions, usage.today.creates), (50, 25));
    srv.stop().await;
}

/// Creates the question "Theirs?" in the inbox of the key `other`; what the service answered.
async fn create_theirs(srv: &TestServer, other: &str) -> Value {
    let (st, theirs) = common::server::send(
        srv.client
            .post(srv.url("/v1/decisions"))
            .bearer_auth(other)
            .json(&json!({"question": "Theirs?", "kind": "bool", "notify": "none"})),
    )
    .await;
    assert_eq!(st, StatusCode::CREATED, "{theirs}");
    theirs
}

/// Lists the decisions with `key`: the status and the questions seen.
async fn list_with(srv: &TestServer, key: &str) -> (StatusCode, Vec<String>) {
    let (status, body) =
        common::server::send(srv.client.get(srv.url("/v1/decisions")).bearer_auth(key)).await;
    let questions = body["items"]
        .as_array()
        .map(|items| items.iter().map(|d| s(d, "question").to_string()).collect())
        .unwrap_or_default();
    (status, questions)
}

async fn keys_read_together_each_get_their_own_inbox(database_url: &str) {
    let srv = TestServer::start_rate_limited(database_url, RateLimit::OFF).await;
    let other = srv.other_inbox_key("other").await;
    let revoked = srv.svc.create_api_key("default").await.unwrap();
    assert!(srv.svc.revoke_api_key(&revoked).await.unwrap());
    let unknown = format!("sk_{}", "A".repeat(43));
    srv.create(json!({"question": "Mine?", "kind": "bool", "notify": "none"}))
        .await;
    create_theirs(&srv, &other).await;

    let keys = [
        srv.key.as_str(),
        other.as_str(),
        revoked.as_str(),
        unknown.as_str(),
    ];
    let asked: Vec<usize> = (0..400).map(|i| (i * 7) % keys.len()).collect();
    let results = join_all(asked.iter().map(|&k| list_with(&srv, keys[k]))).await;
    for (&k, (status, questions)) in asked.iter().zip(&results) {
        let expected = match k {
            0 => (StatusCode::OK, vec!["Mine?".to_string()]),
            1 => (StatusCode::OK, vec!["Theirs?".to_string()]),
            _ => (StatusCode::UNAUTHORIZED, vec![]),
        };
        assert_eq!((*status, questions.clone()), expected, "key {k}");
    }

    // A key revoked while others are being looked up is refused from the moment its revoke
    // returns, in every batch after.
    let doomed = srv.svc.create_api_key("default").await.unwrap();
    let before = join_all((0..100).map(|_| list_with(&srv, &doomed))).await;
    assert!(before.iter().all(|(st, _)| *st == StatusCode::OK));
    let busy = join_all((0..200).map(|_| list_with(&srv, &srv.key)));
    let revoke = async {
        assert!(srv.svc.revoke_api_key(&doomed).await.unwrap());
        join_all((0..100).map(|_| list_with(&srv, &doomed))).await
    };
    let (busy, after) = futures::join!(busy, revoke);
    assert!(busy.iter().all(|(st, _)| *st == StatusCode::OK));
    assert!(after.iter().all(|(st, _)| *st == StatusCode::UNAUTHORIZED));
    srv.stop().await;
}

/// Awaits of many decisions at once, with `timeout_s=0` (PostgreSQL reads decisions by id in
/// batches): each returns its own decision as it stands, one of another inbox or none at all
/// is a 404, and reads of one decision in the same batch each get it.
async fn decisions_read_together_each_get_their_own(database_url: &str) {
    let srv = TestServer::start_rate_limited(database_url, RateLimit::OFF).await;
    let other = srv.other_inbox_key("other").await;
    let mut mine = Vec::new();
    for i in 0..20 {
        let h = srv
            .create(json!({"question": format!("Mine {i}?"), "kind": "bool", "notify": "none"}))
            .await;
        if i % 2 == 0 {
            let (st, _) = srv.answer(s(&h, "web_url"), json!({"value": "yes"})).await;
            assert_eq!(st, StatusCode::OK);
        }
        mine.push(s(&h, "decision_id").to_string());
    }
    let theirs = s(&create_theirs(&srv, &other).await, "decision_id").to_string();
    let unknown = Uuid::now_v7().to_string();

    // 22 targets, asked 400 times in all, so each is asked many times in one burst.
    let asked: Vec<usize> = (0..400).map(|i| (i * 7) % (mine.len() + 2)).collect();
    let ids: Vec<&str> = mine
        .iter()
        .map(String::as_str)
        .chain([theirs.as_str(), unknown.as_str()])
        .collect();
    let results = join_all(asked.iter().map(|&t| srv.await_decision(ids[t], 0))).await;
    for (&t, (status, body)) in asked.iter().zip(&results) {
        if t < mine.len() {
            assert_eq!(*status, StatusCode::OK, "{body}");
            assert_eq!(s(body, "decision_id"), ids[t]);
            assert_eq!(s(body, "question"), format!("Mine {t}?"));
            let expected = if t % 2 == 0 { "answered" } else { "pending" };
            assert_eq!(s(body, "status"), expected, "{body}");
        } else {
            assert_eq!(*status, StatusCode::NOT_FOUND, "target {t}: {body}");
        }
    }
    srv.stop().await;
}

const ANSWERED: usize = 120;
const CHOICES: [&str; 3] = ["A", "B", "C"];

/// Reads the inbox's resolutions as `GET /v1/events` does, remembering the last event id
/// seen, until `expected` were seen or `deadline` passes: what it saw, in order.
async fn follow_resolutions(
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
async fn a_burst_of_answers_has_one_winner_each(database_url: &str) {
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
async fn resolutions_written_together_answer_as_alone(database_url: &str) {
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
enum Asked {
    Resolve(Uuid, Box<Resolution>, time::OffsetDateTime),
    Vote(Uuid),
}

/// What the store answered it.
enum Got {
    Resolved(Box<Result<Resolved, StoreError>>),
    Voted(Box<Option<Decision>>),
}

/// Creates `n` yes-or-no questions; their ids.
async fn create_bools(srv: &TestServer, n: usize, what: &str) -> Vec<Uuid> {
    join_all((0..n).map(|i| {
        srv.create(json!({"question": format!("{what} {i}?"), "kind": "bool", "notify": "none"}))
    }))
    .await
    .iter()
    .map(|h| s(h, "decision_id").parse().unwrap())
    .collect()
}

/// The kinds of a decision's events, in the order they happened.
async fn event_kinds(
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
fn vote() -> AnswerRecord {
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
