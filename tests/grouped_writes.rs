//! Creates that arrive together are written together (group commit), and grouping changes
//! nothing a client can tell: every acknowledged create is there exactly once with its one
//! `created` event, an idempotency key repeated inside one burst makes one decision and
//! replays it to the rest, notifications and their outbox rows come with each, and the
//! daily quota is never overshot. API keys looked up together (PostgreSQL reads them in
//! batches) each get their own inbox, and a revoked key is refused from the moment its revoke
//! returns. On SQLite and PostgreSQL, over HTTP.

mod common;

use std::collections::{HashMap, HashSet};

use common::server::{TestServer, s};
use futures::future::join_all;
use reqwest::{Method, StatusCode};
use sayso::domain::EventKind;
use sayso::http::RateLimit;
use serde_json::{Value, json};
use uuid::Uuid;

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
        let created = store
            .events(id)
            .await
            .unwrap()
            .iter()
            .filter(|e| e.kind == EventKind::Created)
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
    let (st, _) = common::server::send(
        srv.client
            .post(srv.url("/v1/decisions"))
            .bearer_auth(&other)
            .json(&json!({"question": "Theirs?", "kind": "bool", "notify": "none"})),
    )
    .await;
    assert_eq!(st, StatusCode::CREATED);

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keys_read_together_each_get_their_own_inbox() {
    let db = common::db::fresh_sqlite_url();
    keys_read_together_each_get_their_own_inbox(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keys_read_together_each_get_their_own_inbox() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    keys_read_together_each_get_their_own_inbox(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_burst_of_creates_is_each_written_once() {
    let db = common::db::fresh_sqlite_url();
    a_burst_of_creates_is_each_written_once(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_burst_of_creates_is_each_written_once() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    a_burst_of_creates_is_each_written_once(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_burst_never_overshoots_the_quota() {
    let db = common::db::fresh_sqlite_url();
    a_burst_never_overshoots_the_quota(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_burst_never_overshoots_the_quota() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    a_burst_never_overshoots_the_quota(&db.url).await;
}
