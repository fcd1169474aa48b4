//! API keys and decisions read together, each back to its own inbox only.

use super::*;

/// Creates the question "Theirs?" in the inbox of the key `other`; what the service answered.
pub(super) async fn create_theirs(srv: &TestServer, other: &str) -> Value {
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
pub(super) async fn list_with(srv: &TestServer, key: &str) -> (StatusCode, Vec<String>) {
    let (status, body) =
        common::server::send(srv.client.get(srv.url("/v1/decisions")).bearer_auth(key)).await;
    let questions = body["items"]
        .as_array()
        .map(|items| items.iter().map(|d| s(d, "question").to_string()).collect())
        .unwrap_or_default();
    (status, questions)
}

pub(super) async fn keys_read_together_each_get_their_own_inbox(database_url: &str) {
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
pub(super) async fn decisions_read_together_each_get_their_own(database_url: &str) {
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
