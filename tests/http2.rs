//! HTTP/2 beside HTTP/1.1 on the same port (h2c with prior knowledge): many parked awaits
//! as streams of one connection, each woken by its own answer; a connection that stalls in
//! the preface, or sends nothing, is let go at the header timeout.

mod common;

use std::time::Duration;

use common::server::{TestServer, fresh_server_with, init_tls, s};
use reqwest::{Client, StatusCode, Version};
use sayso::app::ServeLimits;
use sayso::http::RateLimit;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A client that speaks HTTP/2 only, over one connection.
fn h2_client() -> Client {
    init_tls();
    Client::builder()
        .http2_prior_knowledge()
        .pool_max_idle_per_host(1)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn awaits_park_as_streams_of_one_connection_and_each_wakes_with_its_answer() {
    let db = common::db::fresh_sqlite_url();
    // The load is deliberate: no rate limit.
    let srv = TestServer::start_rate_limited(&db.url, RateLimit::OFF).await;
    let h2 = h2_client();

    let resp = h2.get(srv.url("/healthz")).send().await.unwrap();
    assert_eq!(resp.version(), Version::HTTP_2);
    assert_eq!(resp.status(), StatusCode::OK);

    // More than hyper's default of 200 streams, fewer than sayso's 1,000.
    const WAITERS: usize = 300;
    let mut handles = Vec::with_capacity(WAITERS);
    for i in 0..WAITERS {
        let resp = h2
            .post(srv.url("/v1/decisions"))
            .bearer_auth(&srv.key)
            .json(&json!({"question": format!("Q{i}?"), "kind": "text", "notify": "none"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.version(), Version::HTTP_2);
        assert_eq!(resp.status(), StatusCode::CREATED);
        handles.push(resp.json::<Value>().await.unwrap());
    }
    let awaits: Vec<_> = handles
        .iter()
        .map(|h| {
            let request = h2
                .get(srv.url(&format!(
                    "/v1/decisions/{}/await?timeout_s=60",
                    s(h, "decision_id")
                )))
                .bearer_auth(&srv.key)
                .send();
            tokio::spawn(async move {
                let resp = request.await.unwrap();
                assert_eq!(resp.version(), Version::HTTP_2);
                resp.json::<Value>().await.unwrap()
            })
        })
        .collect();
    // Every await parked before the answers come.
    let parked = async {
        while srv.svc.waiters().len() < WAITERS {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), parked)
        .await
        .expect("every await parks");
    // Answered over HTTP/1.1: the protocols share one service.
    for (i, h) in handles.iter().enumerate() {
        srv.answer_ok(s(h, "web_url"), json!({"value": format!("answer {i}")}))
            .await;
    }
    for (i, awaited) in awaits.into_iter().enumerate() {
        let d = tokio::time::timeout(Duration::from_secs(30), awaited)
            .await
            .expect("woken")
            .unwrap();
        assert_eq!(d["status"], "answered");
        assert_eq!(d["outcome"], format!("answer {i}"));
        assert_eq!(d["decision_id"], handles[i]["decision_id"]);
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_stops_in_the_preface_or_sends_nothing_is_let_go() {
    let limits = ServeLimits {
        header_read_timeout: Duration::from_secs(1),
        ..ServeLimits::default()
    };
    let (_db, srv) = fresh_server_with(limits).await;
    let addr = srv.addr();

    let mut half = TcpStream::connect(&addr).await.unwrap();
    half.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    let silent = TcpStream::connect(&addr).await.unwrap();
    // Others are served meanwhile, on either protocol.
    let resp = h2_client().get(srv.url("/healthz")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    for mut stalled in [half, silent] {
        let mut buf = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut buf)).await;
        assert!(
            read.is_ok(),
            "a stalled connection must be closed by the server"
        );
    }
    srv.stop().await;
}
