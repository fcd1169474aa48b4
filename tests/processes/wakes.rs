//! Two replicas on one PostgreSQL database wake each other's waiters.

use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::json;

use crate::common::server::{s, send};
use crate::replica::two_replicas;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_await_on_one_replica_is_woken_by_an_answer_on_another() {
    let Some((_db, a, b, key)) = two_replicas().await else {
        return;
    };
    assert_eq!(b.key, None);
    let client = Client::new();
    let mut latencies = Vec::new();
    for i in 0..5 {
        let (status, h) = send(
            client
                .post(format!("{}/v1/decisions", a.base))
                .bearer_auth(&key)
                .json(&json!({"question": format!("Across replicas {i}?"), "kind": "bool"})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{h}");
        let id = s(&h, "decision_id").to_string();
        let waiting = {
            let req = client
                .get(format!("{}/v1/decisions/{id}/await?timeout_s=60", a.base))
                .bearer_auth(&key);
            tokio::spawn(async move {
                let r = send(req).await;
                (r, Instant::now())
            })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiting.is_finished());
        // The answer goes to the other replica, through the same link path.
        let token = s(&h, "web_url").rsplit('/').next().unwrap().to_string();
        let (status, r) = send(
            client
                .post(format!("{}/d/{token}", b.base))
                .json(&json!({"value": "yes"})),
        )
        .await;
        let answered = Instant::now();
        assert_eq!(status, StatusCode::OK, "{r}");
        let ((status, d), woke) = waiting.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(d["status"], "answered", "{d}");
        latencies.push(woke.saturating_duration_since(answered));
    }
    latencies.sort();
    eprintln!("cross-replica wake latencies: {latencies:?}");
    // Woken by NOTIFY, not by the 60 s timeout or a poll.
    assert!(latencies[latencies.len() - 1] < Duration::from_secs(5));
}
