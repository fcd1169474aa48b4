//! Races: answers and cancels at once, answers racing expiry.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::common::server::{TestServer, s, send};

pub async fn concurrent_answers_and_cancels_have_one_winner(srv: &TestServer) {
    let mut handles = Vec::new();
    for i in 0..25 {
        handles.push(
            srv.create(json!({"question": format!("race {i}"), "kind": "bool"}))
                .await,
        );
    }
    let mut tasks = Vec::new();
    for h in &handles {
        for attempt in 0..8 {
            let client = srv.client.clone();
            let web_url = s(h, "web_url").to_string();
            let cancel_url = srv.url(&format!("/v1/decisions/{}/cancel", s(h, "decision_id")));
            let key = srv.key.clone();
            tasks.push(tokio::spawn(async move {
                let req = if attempt % 3 == 0 {
                    client.post(cancel_url).bearer_auth(key)
                } else {
                    client
                        .post(web_url)
                        .json(&json!({"value": attempt % 2 == 0}))
                };
                let (status, body) = send(req).await;
                (status, body)
            }));
        }
    }
    let mut wins = std::collections::HashMap::<String, usize>::new();
    for (i, t) in tasks.into_iter().enumerate() {
        let (status, body) = t.await.unwrap();
        let id = s(&handles[i / 8], "decision_id").to_string();
        match status {
            StatusCode::OK => *wins.entry(id).or_default() += 1,
            StatusCode::CONFLICT => assert_eq!(body["error"]["code"], "already_resolved"),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    for h in &handles {
        let id = s(h, "decision_id");
        assert_eq!(wins.get(id), Some(&1), "exactly one winner for {id}");
        let d = srv.get(id).await;
        assert!(d["status"] == "answered" || d["status"] == "cancelled");
    }
}

pub async fn answers_racing_expiry_have_one_outcome(srv: &TestServer) {
    let mut handles = Vec::new();
    for i in 0..6 {
        handles.push(
            srv.create(
                json!({"question": format!("expiry race {i}"), "kind": "bool", "ttl_seconds": 10}),
            )
            .await,
        );
    }
    let mut awaits = Vec::new();
    let mut answers = Vec::new();
    for (i, h) in handles.iter().enumerate() {
        let id = s(h, "decision_id").to_string();
        let req = srv.req(
            Method::GET,
            &format!("/v1/decisions/{id}/await?timeout_s=60"),
        );
        awaits.push(tokio::spawn(async move { send(req).await }));
        let expires_at = time::OffsetDateTime::parse(
            s(h, "expires_at"),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        // Nine answers each: on even decisions from expiry to 40 ms after it (expiry must
        // win), on odd ones from 40 ms before to 40 ms after (the first answer must win).
        let offsets: Vec<i64> = if i % 2 == 0 {
            (0..=40).step_by(5).collect()
        } else {
            (-40..=40).step_by(10).collect()
        };
        for offset_ms in offsets {
            let at = expires_at + time::Duration::milliseconds(offset_ms);
            let client = srv.client.clone();
            let url = s(h, "web_url").to_string();
            answers.push(tokio::spawn(async move {
                let wait = (at - time::OffsetDateTime::now_utc()).max(time::Duration::ZERO);
                tokio::time::sleep(wait.try_into().unwrap()).await;
                let (status, _) = send(client.post(url).json(&json!({"value": "yes"}))).await;
                status
            }));
        }
    }
    for (i, h) in handles.iter().enumerate() {
        let statuses: Vec<StatusCode> = {
            let mut v = Vec::new();
            for t in answers.drain(..9) {
                v.push(t.await.unwrap());
            }
            v
        };
        let oks = statuses.iter().filter(|s| **s == StatusCode::OK).count();
        assert!(
            statuses
                .iter()
                .all(|s| [StatusCode::OK, StatusCode::CONFLICT, StatusCode::GONE].contains(s)),
            "{statuses:?}"
        );
        let d = srv.get(s(h, "decision_id")).await;
        match d["status"].as_str().unwrap() {
            "answered" => {
                assert_eq!(oks, 1, "one answer won: {statuses:?}");
                assert_eq!(d["outcome"], true);
            }
            "expired" => {
                assert_eq!(oks, 0, "no answer may win after expiry: {statuses:?}");
                assert!(d["outcome"].is_null());
                assert!(statuses.iter().all(|s| *s == StatusCode::GONE));
            }
            other => panic!("unexpected status {other}"),
        }
        let (_, awaited) = (&mut awaits[i]).await.unwrap();
        assert_eq!(
            awaited["status"], d["status"],
            "the await saw the final state"
        );
    }
}
