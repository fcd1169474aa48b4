//! What the browser tests share: a browser and a server, the agent's await, the feed link,
//! a tool approval.

use reqwest::StatusCode;
use serde_json::{Value, json};

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

/// Closes the browser, then stops the server: the end of every test that `setup` began.
pub async fn close(b: Browser, srv: TestServer) {
    b.close().await;
    srv.stop().await;
}

/// The agent's await, which must already have the answer.
pub async fn awaited(srv: &TestServer, handle: &Value) -> Value {
    let (status, d) = srv.await_decision(s(handle, "decision_id"), 10).await;
    assert_eq!(status, StatusCode::OK, "await failed: {d}");
    d
}

/// The feed link of the `default` inbox.
pub async fn feed_url(srv: &TestServer) -> String {
    srv.feed_url().await
}

/// A choice of three options, the second recommended, one with a description and a
/// preview.
pub fn database_choice() -> Value {
    json!({"question": "Which database for the pilot?", "kind": "choose",
        "options": [
            {"label": "PostgreSQL", "description": "shared by all replicas"},
            {"label": "SQLite", "description": "one file, nothing to run",
             "preview": "```toml\n[database]\nurl = \"sqlite://sayso.db\"\n```"},
            {"label": "MySQL"}
        ],
        "recommended": 1})
}

/// A Claude Code tool approval of `tool` with `input`, in session `session`, offering Allow
/// for the session and for a while.
pub fn approval(tool: &str, input: Value, session: &str) -> Value {
    json!({
        "question": format!("Claude Code wants to use {tool}"),
        "kind": "choose",
        "options": ["Allow", "Deny", "Allow for this session"],
        "allow_other": false,
        "project": "shop",
        "approval": {"harness": "claude", "tool_name": tool, "tool_input": input,
            "cwd": "/home/me/shop", "session_id": session, "editable": true,
            "honours_allowances": true}
    })
}

/// A Claude Code approval of the Bash command `command`, in session `session`.
pub fn bash(command: &str, session: &str) -> Value {
    approval(
        "Bash",
        json!({"command": command, "description": "Clean the build before the release"}),
        session,
    )
}
