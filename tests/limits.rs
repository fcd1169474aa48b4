//! Usage, the daily quota and the rate limit: the request past a limit gets 429 with
//! `Retry-After` in the JSON error shape; other inboxes, keys and addresses are unaffected.

mod common;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use common::db::fresh_sqlite_url;
use common::server::{TestServer, fresh_server, send};
use sayso::http::RateLimit;

fn body(question: &str) -> Value {
    json!({"question": question, "kind": "bool", "notify": "none"})
}

async fn create(server: &TestServer, key: &str, question: &str) -> reqwest::Response {
    server
        .client
        .post(server.url("/v1/decisions"))
        .bearer_auth(key)
        .json(&body(question))
        .send()
        .await
        .unwrap()
}

fn retry_after(resp: &reqwest::Response) -> u64 {
    resp.headers()
        .get("retry-after")
        .expect("Retry-After")
        .to_str()
        .unwrap()
        .parse()
        .expect("whole seconds")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_create_past_the_daily_quota_gets_429_and_others_are_unaffected() {
    let (_db, server) = fresh_server().await;
    let key = server.key.clone();
    let other = server.other_inbox_key("other").await;
    server
        .svc
        .set_daily_quota("default", Some(6))
        .await
        .unwrap();

    let (status, usage) = send(server.req(Method::GET, "/v1/usage")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        usage,
        json!({
            "today": {"actions": 0, "creates": 0},
            "month": {"actions": 0, "creates": 0},
            "quota": {"daily_actions": 6, "remaining_today": 6}
        })
    );

    let (status, first) = send(
        server
            .req(Method::POST, "/v1/decisions")
            .header("Idempotency-Key", "once")
            .json(&body("first")),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    for q in ["second", "third"] {
        assert_eq!(create(&server, &key, q).await.status(), StatusCode::CREATED);
    }
    let refused = create(&server, &key, "fourth").await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait = retry_after(&refused);
    assert!((1..=86_400).contains(&wait), "{wait}");
    let err: Value = refused.json().await.unwrap();
    assert_eq!(err["error"]["code"], "quota_exceeded");
    assert!(err["error"]["message"].is_string());

    // Replaying an earlier create costs nothing, so it still works.
    let (status, again) = send(
        server
            .req(Method::POST, "/v1/decisions")
            .header("Idempotency-Key", "once")
            .json(&body("first")),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["decision_id"], first["decision_id"]);

    // Another inbox has its own count and no quota.
    assert_eq!(
        create(&server, &other, "theirs").await.status(),
        StatusCode::CREATED
    );

    let (_, usage) = send(server.req(Method::GET, "/v1/usage")).await;
    assert_eq!(usage["today"], json!({"actions": 6, "creates": 3}));
    assert_eq!(usage["month"], json!({"actions": 6, "creates": 3}));
    assert_eq!(
        usage["quota"],
        json!({"daily_actions": 6, "remaining_today": 0})
    );
    let (_, theirs) = send(
        server
            .client
            .get(server.url("/v1/usage"))
            .bearer_auth(&other),
    )
    .await;
    assert_eq!(theirs["today"], json!({"actions": 2, "creates": 1}));
    assert_eq!(
        theirs["quota"],
        json!({"daily_actions": null, "remaining_today": null})
    );

    // Lifting the quota lets creates through again.
    server.svc.set_daily_quota("default", None).await.unwrap();
    assert_eq!(
        create(&server, &key, "fifth").await.status(),
        StatusCode::CREATED
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_past_the_rate_limit_gets_429_and_others_are_unaffected() {
    let db = fresh_sqlite_url();
    // Three at once, then one a second: the fourth in a row is refused.
    let limit = RateLimit {
        per_second: 1,
        burst: 3,
    };
    let server = TestServer::start_rate_limited(&db.url, limit).await;
    let other = server.other_inbox_key("other").await;

    for _ in 0..3 {
        let (status, _) = send(server.req(Method::GET, "/v1/usage")).await;
        assert_eq!(status, StatusCode::OK);
    }
    let refused = server.req(Method::GET, "/v1/usage").send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!((1..=2).contains(&retry_after(&refused)));
    let err: Value = refused.json().await.unwrap();
    assert_eq!(err["error"]["code"], "rate_limited");
    assert!(err["error"]["message"].is_string());

    // Another key from the same address has its own budget, and so have the address's
    // requests outside /v1.
    for _ in 0..3 {
        let (status, _) = send(
            server
                .client
                .get(server.url("/v1/usage"))
                .bearer_auth(&other),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    for _ in 0..3 {
        let resp = server
            .client
            .get(server.url("/healthz"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    }
    let page = server
        .client
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(page.headers().contains_key("retry-after"));

    // A second later the key has earned one request back.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (status, _) = send(server.req(Method::GET, "/v1/usage")).await;
    assert_eq!(status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_rate_turns_the_limit_off() {
    let db = fresh_sqlite_url();
    let server = TestServer::start_rate_limited(&db.url, RateLimit::OFF).await;
    for _ in 0..50 {
        let (status, _) = send(server.req(Method::GET, "/v1/usage")).await;
        assert_eq!(status, StatusCode::OK);
    }
    server.stop().await;
}

/// The status of `GET /healthz` sent with `X-Forwarded-For: forwarded_for`.
async fn health_as(server: &TestServer, forwarded_for: &str) -> StatusCode {
    server
        .client
        .get(server.url("/healthz"))
        .header("x-forwarded-for", forwarded_for)
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_addresses_count_only_from_a_trusted_proxy() {
    let limit = RateLimit {
        per_second: 1,
        burst: 1,
    };
    // The test's requests come from 127.0.0.1: here that is a trusted proxy, so each
    // forwarded client has its own budget.
    let db = fresh_sqlite_url();
    let behind = TestServer::start_behind_proxies(&db.url, limit, &["127.0.0.0/8"]).await;
    assert_eq!(health_as(&behind, "203.0.113.7").await, StatusCode::OK);
    assert_eq!(health_as(&behind, "203.0.113.8").await, StatusCode::OK);
    assert_eq!(
        health_as(&behind, "203.0.113.7").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // What the client itself wrote on the left of the chain changes nothing.
    assert_eq!(
        health_as(&behind, "6.6.6.6, 203.0.113.8").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    behind.stop().await;

    // Trusting nobody (the default), spoofed headers change nothing: one budget for the peer.
    let db = fresh_sqlite_url();
    let direct = TestServer::start_behind_proxies(&db.url, limit, &[]).await;
    assert_eq!(health_as(&direct, "203.0.113.7").await, StatusCode::OK);
    assert_eq!(
        health_as(&direct, "203.0.113.8").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    direct.stop().await;
    // Nor when the peer is not among the trusted ones.
    let db = fresh_sqlite_url();
    let elsewhere = TestServer::start_behind_proxies(&db.url, limit, &["10.0.0.0/8"]).await;
    assert_eq!(health_as(&elsewhere, "203.0.113.7").await, StatusCode::OK);
    assert_eq!(
        health_as(&elsewhere, "203.0.113.8").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    elsewhere.stop().await;
}
