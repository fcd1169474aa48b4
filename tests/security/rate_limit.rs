//! Guessing is rate-limited per address.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::{Client, StatusCode};
use sayso::http::RateLimit;
use serde_json::Value;

use crate::common::db::fresh_sqlite_url;
use crate::common::server::TestServer;
use crate::support::{MakeGuess, random_api_key, random_token, retry_after};

/// Sends `requests` from the address `from` (a loopback address of its own), 16 at a time,
/// and returns how many were refused with 429 and how many were not, and how long it took.
async fn burst(
    from: IpAddr,
    requests: Vec<(String, Option<String>)>,
) -> (usize, usize, Duration, Vec<reqwest::Response>) {
    let client = Client::builder()
        .local_address(from)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let start = Instant::now();
    let responses: Vec<reqwest::Response> = futures::stream::iter(requests)
        .map(|(url, key)| {
            let mut req = client.get(url);
            if let Some(k) = key {
                req = req.bearer_auth(k);
            }
            async move { req.send().await.expect("request sent") }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let elapsed = start.elapsed();
    let refused: Vec<_> = responses
        .into_iter()
        .filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS)
        .collect();
    let refused_count = refused.len();
    (refused_count, 1000 - refused_count, elapsed, refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_wrong_links_or_keys_from_one_address_are_rate_limited() {
    let limit = RateLimit::DEFAULT;
    let scenarios: [(&str, MakeGuess); 3] = [
        (
            "GET /d/<wrong>",
            Box::new(|srv| (srv.url(&format!("/d/{}", random_token())), None)),
        ),
        (
            "GET /inbox/<wrong>",
            Box::new(|srv| (srv.url(&format!("/inbox/{}", random_token())), None)),
        ),
        (
            "GET /v1/decisions with a new wrong key each time",
            Box::new(|srv| (srv.url("/v1/decisions"), Some(random_api_key()))),
        ),
    ];
    let guesser = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
    let neighbour = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    for (what, make) in &scenarios {
        let db = fresh_sqlite_url();
        let srv = TestServer::start_rate_limited(&db.url, limit).await;
        let requests = (0..1000).map(|_| make(&srv)).collect();
        let (refused, passed, elapsed, refusals) = burst(guesser, requests).await;
        eprintln!("{what}: {passed} passed, {refused} refused with 429 in {elapsed:?}");
        // No more got through than the burst and what the rate earns back over the run.
        let allowed = f64::from(limit.burst) + f64::from(limit.per_second) * elapsed.as_secs_f64();
        assert!(
            passed as f64 <= allowed + 32.0,
            "{what}: {passed} of 1000 passed in {elapsed:?}; the limit allows {allowed:.0}"
        );
        // A thousand requests in under 5 s exceed the 900 the limit allows in that time.
        if elapsed < Duration::from_secs(5) {
            assert!(refused > 0, "{what}: none refused in {elapsed:?}");
        }
        let resp = refusals.into_iter().next().expect("a refusal to look at");
        retry_after(&resp);
        let err: Value = resp.json().await.unwrap();
        assert_eq!(err["error"]["code"], "rate_limited");

        // Another address is not held back, and with the right key gets its answer.
        let other = Client::builder().local_address(neighbour).build().unwrap();
        let resp = other
            .get(srv.url("/v1/decisions"))
            .bearer_auth(&srv.key)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{what}");
        let resp = other
            .get(srv.url(&format!("/d/{}", random_token())))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{what}");
        srv.stop().await;
    }
}
