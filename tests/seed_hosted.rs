//! The hosted `ask` tools (docs/SEEDS.md) at `/mcp`: `ask_user`,
//! `await_decision`, `get_decision`, through the official Python MCP SDK, answered on the page.

mod common;

use std::time::Duration;

use common::mcp_py::{PyMcp, post_page};
use common::server::{TestServer, s};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documents_example_asks_and_awaits_past_the_servers_longest_wait() {
    let db = common::db::fresh_sqlite_url();
    // A one-second longest await: the document's timeout_s=3600 is kept in rounds.
    let srv = TestServer::start_max_await(&db.url, Duration::from_secs(1)).await;
    let Some(mut py) = PyMcp::connect(&srv, "/mcp").await else {
        return;
    };
    let tools = py.tools().await;
    let awaiting = tools
        .iter()
        .find(|t| t["name"] == "await_decision")
        .unwrap();
    assert!(
        s(
            &awaiting["inputSchema"]["properties"]["timeout_s"],
            "description"
        )
        .contains("default 600")
    );
    let handle = py
        .call(
            "ask_user",
            json!({
                "question": "The migration finished cleanly. Deploy to production?",
                "kind": "bool",
                "context_md": "Migration ran in 4m 12s. 0 errors. Staging looks good.",
                "notify": "push"
            }),
        )
        .await;
    assert!(!handle.is_error, "{}", handle.text);
    let h = handle.structured;
    for field in ["decision_id", "web_url", "expires_at"] {
        assert!(h[field].is_string(), "the AskHandle has {field}");
    }
    let id = s(&h, "decision_id").to_string();
    py.start(
        "await_decision",
        json!({"decision_id": id, "timeout_s": 3600}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    post_page(
        &srv,
        s(&h, "web_url"),
        &[("value", "yes"), ("remark", "go after 6pm")],
    )
    .await;
    let d = py.result().await;
    assert!(!d.is_error, "{}", d.text);
    assert_eq!(d.structured["status"], "answered");
    assert_eq!(d.structured["outcome"], true);
    assert_eq!(d.structured["remark"], "go after 6pm");
    assert!(d.structured["answered_at"].is_string());
    let got = py.call("get_decision", json!({"decision_id": id})).await;
    assert_eq!(got.structured, d.structured);
    py.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_todo_returns_at_once_and_await_waits_600_seconds_by_default() {
    let db = common::db::fresh_sqlite_url();
    let srv = TestServer::start_max_await(&db.url, Duration::from_secs(1)).await;
    let Some(mut py) = PyMcp::connect(&srv, "/mcp").await else {
        return;
    };
    let todo = py
        .call(
            "ask_user",
            json!({"question": "Smoke-test checkout before 3 PM", "kind": "todo"}),
        )
        .await;
    assert!(
        todo.text.contains("Nothing needs awaiting"),
        "{}",
        todo.text
    );

    let asked = py
        .call(
            "ask_user",
            json!({"question": "Ship it?", "kind": "bool", "attachments": [{"name": "Build log", "url": "https://ci.example.com/42"}]}),
        )
        .await;
    let web_url = s(&asked.structured, "web_url").to_string();
    let page = srv.page_text(&web_url).await;
    assert!(
        page.contains("https://ci.example.com/42"),
        "attachments are shown"
    );
    // No timeout_s: the default (600 s) outlasts the server's one-second longest await, so
    // an answer after several rounds still comes back in the same call.
    py.start(
        "await_decision",
        json!({"decision_id": s(&asked.structured, "decision_id")}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    post_page(&srv, &web_url, &[("value", "no")]).await;
    let d = py.result().await;
    assert_eq!(d.structured["outcome"], false);
    py.finish().await;
}
