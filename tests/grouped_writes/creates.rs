//! Creates in a burst: each written once with its one `created` event, an idempotency key
//! repeated inside the burst replayed, and the daily quota never overshot.

use super::*;

pub(super) const PLAIN: usize = 240;
pub(super) const KEYS: usize = 20;
pub(super) const REPEATS: usize = 5;

pub(super) async fn create(
    srv: &TestServer,
    body: &Value,
    key: Option<&str>,
) -> (StatusCode, Value) {
    let mut req = srv.req(Method::POST, "/v1/decisions").json(body);
    if let Some(key) = key {
        req = req.header("Idempotency-Key", key);
    }
    common::server::send(req).await
}

pub(super) async fn a_burst_of_creates_is_each_written_once(database_url: &str) {
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

pub(super) async fn a_burst_never_overshoots_the_quota(database_url: &str) {
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
