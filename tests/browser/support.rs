//! What the browser tests share: a browser and a server, the agent's await, the feed link.

use reqwest::StatusCode;
use serde_json::Value;

use crate::common::browser::Browser;
use crate::common::db::{SqliteTestDb, fresh_sqlite_url};
use crate::common::server::{TestServer, s};

/// A browser and a server on a fresh SQLite file; `None` when the browser is skipped.
pub async fn setup() -> Option<(Browser, TestServer, SqliteTestDb)> {
    let browser = Browser::start().await?;
    let db = fresh_sqlite_url();
    let srv = TestServer::start(&db.url).await;
    Some((browser, srv, db))
}

/// The agent's await, which must already have the answer.
pub async fn awaited(srv: &TestServer, handle: &Value) -> Value {
    let (status, d) = srv.await_decision(s(handle, "decision_id"), 10).await;
    assert_eq!(status, StatusCode::OK, "await failed: {d}");
    d
}

/// The feed link of the `default` inbox.
pub async fn feed_url(srv: &TestServer) -> String {
    let inbox = srv
        .svc
        .store()
        .inbox_by_name("default")
        .await
        .unwrap()
        .expect("the default inbox");
    srv.svc.feed_url(&inbox)
}
