//! Behind a fault-injecting proxy, a refused and a hung PostgreSQL; a SQLite file another
//! process has locked.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use sqlx::Connection;

use crate::common;
use crate::common::server::{fresh_server, s, send};

/// How a request to `path` ends, and how long it took.
async fn timed_status(srv: &common::server::TestServer, path: &str) -> (StatusCode, Duration) {
    let started = Instant::now();
    let resp = srv
        .req(reqwest::Method::GET, path)
        .send()
        .await
        .expect("the server answers");
    (resp.status(), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_or_hung_database_gives_503_and_the_service_recovers_by_itself() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let mut url = url::Url::parse(&db.url).unwrap();
    let upstream = tokio::net::lookup_host((
        url.host_str().unwrap().to_string(),
        url.port().unwrap_or(5432),
    ))
    .await
    .unwrap()
    .next()
    .unwrap();
    let proxy = common::faulty_proxy::FaultyProxy::start(upstream).await;
    url.set_port(Some(proxy.addr.port())).unwrap();
    url.set_host(Some("127.0.0.1")).unwrap();
    let srv = common::server::TestServer::start(url.as_str()).await;
    let h = srv
        .create(json!({"question": "Still there?", "kind": "bool", "notify": "none"}))
        .await;
    let path = format!("/v1/decisions/{}", s(&h, "decision_id"));
    assert_eq!(timed_status(&srv, &path).await.0, StatusCode::OK);

    // Refused: 503 at once, for the API and for readiness.
    proxy.set(common::faulty_proxy::Fault::Refuse);
    let (status, took) = timed_status(&srv, &path).await;
    eprintln!("refused database: {status} after {took:?}");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        took < Duration::from_secs(10),
        "a refused database held a request {took:?}"
    );
    assert_eq!(
        timed_status(&srv, "/readyz").await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );

    // Hung (connections accepted, nothing answers): 503 after the connect timeout, not never.
    proxy.set(common::faulty_proxy::Fault::BlackHole);
    let (status, took) = timed_status(&srv, &path).await;
    eprintln!("hung database: {status} after {took:?}");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        took < Duration::from_secs(30),
        "a hung database held a request {took:?}"
    );

    // Restored: the service comes back by itself, with the decision intact.
    proxy.set(common::faulty_proxy::Fault::None);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, _) = timed_status(&srv, &path).await;
        if status == StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "no recovery: still {status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(timed_status(&srv, "/readyz").await.0, StatusCode::OK);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_sqlite_database_gives_503_to_writes_and_recovers() {
    use sqlx::SqliteConnection;
    let (db, srv) = fresh_server().await;
    let h = srv
        .create(json!({"question": "Locked out?", "kind": "bool", "notify": "none"}))
        .await;
    let path = format!("/v1/decisions/{}", s(&h, "decision_id"));
    // Another process takes the write lock and keeps it (a stuck backup script, say).
    let mut other = SqliteConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut other)
        .await
        .unwrap();
    let started = Instant::now();
    let (status, body) = send(
        srv.req(reqwest::Method::POST, "/v1/decisions")
            .json(&json!({"question": "Q", "kind": "bool", "notify": "none"})),
    )
    .await;
    eprintln!("locked database: {status} after {:?}", started.elapsed());
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "unavailable", "{body}");
    // Reads go on meanwhile (WAL).
    assert_eq!(timed_status(&srv, &path).await.0, StatusCode::OK);
    sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
    srv.create(json!({"question": "Back?", "kind": "bool", "notify": "none"}))
        .await;
    srv.stop().await;
}
