//! MCP against a real server on port 0: rmcp's client over streamable HTTP, the official
//! Python SDK (tests/mcp_client.py), and `sayso mcp` (stdio) as a child process.

#[path = "../common/mod.rs"]
mod common;

mod questions;
mod refusals;
mod waits;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::db::SqliteTestDb;
use common::mcp::{Client, call, connect_with};
use common::mcp_py::{mcp_script, talked};
use common::server::{TestServer, fresh_server, s, send};
use reqwest::{Method, StatusCode};
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientRequest};
use rmcp::service::PeerRequestOptions;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

async fn connect(srv: &TestServer) -> Client {
    connect_with(srv, &srv.key).await.expect("connected")
}

/// A fresh server, and rmcp's client connected to it with its key.
async fn connected() -> (SqliteTestDb, TestServer, Client) {
    let (db, srv) = fresh_server().await;
    let client = connect(&srv).await;
    (db, srv, client)
}

/// The text content of a result, joined.
fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn structured(r: &CallToolResult) -> &Value {
    r.structured_content.as_ref().expect("structured content")
}

fn ok(r: &CallToolResult) -> &Value {
    assert_ne!(r.is_error, Some(true), "tool error: {}", text(r));
    structured(r)
}

/// Asserts `r` is a tool error whose text contains `says`.
fn assert_tool_error(r: &CallToolResult, says: &str) {
    assert_eq!(r.is_error, Some(true), "{}", text(r));
    assert!(text(r).contains(says), "{}", text(r));
}

/// Asks with `ask_user`; the result, and the id of the decision it made.
async fn ask_user(client: &Client, args: Value) -> (CallToolResult, String) {
    let asked = call(client, "ask_user", args).await;
    let id = s(ok(&asked), "decision_id").to_string();
    (asked, id)
}

async fn await_decision(client: &Client, id: &str, timeout_s: u64) -> CallToolResult {
    call(
        client,
        "await_decision",
        json!({"decision_id": id, "timeout_s": timeout_s}),
    )
    .await
}

/// `sayso mcp`, the stdio bridge, as a child process talking to `srv`.
async fn connect_stdio(srv: &TestServer) -> Client {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_sayso"));
    cmd.arg("mcp")
        .env("SAYSO_URL", &srv.base)
        .env("SAYSO_KEY", &srv.key)
        .env("SAYSO_LOG", "warn")
        .stderr(Stdio::inherit());
    let child = TokioChildProcess::new(cmd).expect("sayso mcp starts");
    ().serve(child).await.expect("stdio handshake")
}

/// Answers the page at `web_url` with `body` after `delay`, while the test waits on it;
/// the status the page gave.
fn answer_later(
    srv: &TestServer,
    web_url: String,
    delay: Duration,
    body: Value,
) -> tokio::task::JoinHandle<StatusCode> {
    let client = srv.client.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        client
            .post(&web_url)
            .json(&body)
            .send()
            .await
            .unwrap()
            .status()
    })
}

/// A raw JSON-RPC `initialize` POST to `/mcp`, with no key; the caller adds what it tests.
fn initialize(srv: &TestServer) -> reqwest::RequestBuilder {
    srv.client
        .post(srv.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}
        }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_are_listed_with_schemas_and_descriptions() {
    let (_db, _srv, client) = connected().await;
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "approve",
            "ask_user",
            "ask_user_question",
            "await_decision",
            "cancel_decision",
            "get_decision",
            "list_todos"
        ]
    );
    let ask = tools.iter().find(|t| t.name == "ask_user").unwrap();
    let props = ask.input_schema["properties"].as_object().unwrap();
    for field in [
        "question",
        "kind",
        "project",
        "options",
        "multi",
        "recommended",
        "allow_other",
        "yes_label",
        "no_label",
        "placeholder",
        "schema",
        "questions",
        "context_md",
        "context_image_b64",
        "attachments",
        "ttl_minutes",
        "ttl_seconds",
        "default_outcome",
        "allow_remark",
        "notify",
        "callback_url",
        "metadata",
        "approvers",
        "required",
        "escalate_after_s",
        "escalate_to",
        "urgent",
    ] {
        assert!(props.contains_key(field), "ask_user lacks {field}");
    }
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().unwrap().name, "sayso");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_sends_the_question_to_the_people_it_names() {
    let (_db, srv) = fresh_server().await;
    srv.add_person("ana").await;
    srv.add_person("ben").await;
    assert!(srv.svc.set_key_urgent(&srv.key, true).await.unwrap());
    let client = connect(&srv).await;
    let asked = call(
        &client,
        "ask_user",
        json!({"question": "Ship it?", "kind": "bool", "approvers": ["ana", "ben"],
               "required": 2, "escalate_after_s": 600, "urgent": true}),
    )
    .await;
    let handle = ok(&asked).clone();
    assert!(
        text(&asked).starts_with("Asked ana and ben (decision_id")
            && text(&asked).contains("2 of them must agree")
            && !text(&asked).contains(s(&handle, "web_url")),
        "{}",
        text(&asked)
    );
    let d = srv.get(s(&handle, "decision_id")).await;
    assert_eq!(
        d["routing"],
        json!({"approvers": ["ana", "ben"], "required": 2, "escalate_after_s": 600, "urgent": true})
    );
    // A name the inbox does not have is refused, as over HTTP.
    let refused = call(
        &client,
        "ask_user",
        json!({"question": "Ship it?", "kind": "bool", "approvers": ["zed"]}),
    )
    .await;
    assert_tool_error(&refused, "approvers[0]");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_answered_on_the_page_comes_back_from_await_decision() {
    let (_db, srv, client) = connected().await;
    let asked = call(
        &client,
        "ask_user",
        json!({"question": "Deploy to production?", "kind": "bool", "made_up_field": 1}),
    )
    .await;
    let handle = ok(&asked).clone();
    let id = s(&handle, "decision_id").to_string();
    assert!(text(&asked).contains("await_decision"), "{}", text(&asked));
    assert!(
        text(&asked).contains("made_up_field"),
        "warnings are shown: {}",
        text(&asked)
    );
    assert!(!handle["warnings"].as_array().unwrap().is_empty());

    let answerer = answer_later(
        &srv,
        s(&handle, "web_url").to_string(),
        Duration::from_millis(300),
        json!({"value": "yes", "remark": "after 6pm"}),
    );
    let started = Instant::now();
    let awaited = await_decision(&client, &id, 30).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(answerer.await.unwrap(), StatusCode::OK);
    let d = ok(&awaited);
    assert_eq!(d["status"], "answered");
    assert_eq!(d["outcome"], true);
    assert_eq!(
        text(&awaited),
        r#"The user answered "Deploy to production?" with "yes". Remark: "after 6pm"."#
    );

    let got = call(&client, "get_decision", json!({"decision_id": id})).await;
    assert_eq!(ok(&got)["outcome"], true);
    assert_eq!(
        ok(&got),
        &srv.get(&id).await,
        "the same JSON as the HTTP API"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn await_decision_on_a_pending_decision_says_to_call_again() {
    let (_db, _srv, client) = connected().await;
    let (_, id) = ask_user(
        &client,
        json!({"question": "Name the release?", "kind": "text"}),
    )
    .await;
    let awaited = await_decision(&client, &id, 1).await;
    assert_eq!(ok(&awaited)["status"], "pending");
    assert!(
        text(&awaited).contains(&format!(
            "Call await_decision again with decision_id \"{id}\""
        )),
        "{}",
        text(&awaited)
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_come_back_as_a_tool_error_listing_each_path() {
    let (_db, srv, client) = connected().await;
    let r = call(
        &client,
        "ask_user",
        json!({
            "question": "Pick one",
            "kind": "choose",
            "options": ["a", {"label": ""}, "a"],
            "ttl_minutes": 0
        }),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(t.contains("- options[1].label:"), "{t}");
    assert!(t.contains("- ttl_minutes:"), "{t}");
    let details = structured(&r)["error"]["details"].as_array().unwrap();
    assert!(details.len() >= 2, "{details:?}");
    assert_eq!(structured(&r)["error"]["code"], "validation_failed");
    // The same body over HTTP gives the same problems.
    let (status, api) = send(srv.req(Method::POST, "/v1/decisions").json(&json!({
        "question": "Pick one",
        "kind": "choose",
        "options": ["a", {"label": ""}, "a"],
        "ttl_minutes": 0
    })))
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        &api["error"]["details"],
        &structured(&r)["error"]["details"]
    );

    let r = call(&client, "ask_user_question", json!({"questions": []})).await;
    assert_tool_error(&r, "Provide 1-4 questions");
    assert_eq!(text(&r), "Provide 1-4 questions");

    let r = call(&client, "get_decision", json!({"decision_id": "nope"})).await;
    assert_tool_error(&r, "- decision_id:");
    let r = call(
        &client,
        "get_decision",
        json!({"decision_id": "01890a5d-ac96-774b-bcce-b302099a8057"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(structured(&r)["error"]["code"], "not_found");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_todo_needs_no_await_and_is_listed_until_done() {
    let (_db, srv, client) = connected().await;
    let (r, id) = ask_user(
        &client,
        json!({"question": "Rotate the staging keys", "kind": "todo", "project": "ops"}),
    )
    .await;
    assert!(text(&r).contains("Nothing needs awaiting"), "{}", text(&r));
    call(
        &client,
        "ask_user",
        json!({"question": "Elsewhere", "kind": "todo", "project": "other"}),
    )
    .await;

    let listed = call(&client, "list_todos", json!({"project": "ops"})).await;
    let items = ok(&listed)["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["decision_id"], id.as_str());
    assert!(text(&listed).contains("Rotate the staging keys"));

    let web_url = s(&srv.get(&id).await, "web_url").to_string();
    srv.answer_ok(&web_url, json!({"action": "done"})).await;
    let listed = call(&client, "list_todos", json!({"project": "ops"})).await;
    assert!(ok(&listed)["items"].as_array().unwrap().is_empty());
    assert_eq!(text(&listed), "There are no open to-dos.");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_decision_withdraws_once() {
    let (_db, _srv, client) = connected().await;
    let (_, id) = ask_user(
        &client,
        json!({"question": "Still needed?", "kind": "bool"}),
    )
    .await;
    let cancelled = call(
        &client,
        "cancel_decision",
        json!({"decision_id": id, "reason": "found it myself"}),
    )
    .await;
    assert_eq!(ok(&cancelled)["status"], "cancelled");
    let again = call(&client, "cancel_decision", json!({"decision_id": id})).await;
    assert_tool_error(&again, "already cancelled");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stdio_bridge_serves_the_same_tools() {
    let (_db, srv) = fresh_server().await;
    let client = connect_stdio(&srv).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 7);

    let asked = call(
        &client,
        "ask_user",
        json!({"question": "Which plan?", "kind": "choose", "options": ["Basic", "Pro"]}),
    )
    .await;
    let handle = ok(&asked).clone();
    let id = s(&handle, "decision_id").to_string();
    srv.answer_ok(s(&handle, "web_url"), json!({"value": "Pro"}))
        .await;
    let got = call(&client, "get_decision", json!({"decision_id": id})).await;
    assert_eq!(ok(&got)["outcome"], "Pro");
    assert_eq!(text(&got), r#"The user answered "Which plan?" with "Pro"."#);
    let bad = call(&client, "get_decision", json!({"decision_id": 3})).await;
    assert_tool_error(&bad, "- decision_id: must be a string");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_lists_asks_awaits_and_gets_the_answer() {
    let (_db, srv) = fresh_server().await;
    let Some((child, mut lines)) = mcp_script(&srv, "mcp_client.py") else {
        return;
    };
    let mut steps = Vec::new();
    let run = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let step: Value = serde_json::from_str(&line)
                .unwrap_or_else(|_| panic!("not JSON from the script: {line}"));
            if step["step"] == "asked" {
                // The person answers through the page while the script awaits.
                srv.answer_ok(s(&step, "web_url"), json!({"value": "eu-west"}))
                    .await;
            }
            steps.push(step);
        }
    };
    talked(child, run, "mcp_client.py").await;
    let by_step = |name: &str| {
        steps
            .iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("no {name} step in {steps:?}"))
    };
    let names = by_step("tools")["names"].as_array().unwrap();
    assert_eq!(names.len(), 7);
    assert!(names.contains(&json!("ask_user")));
    assert!(s(by_step("asked"), "text").contains("await_decision"));
    assert_eq!(by_step("awaited")["status"], "answered");
    assert_eq!(by_step("awaited")["outcome"], "eu-west");
    assert_eq!(by_step("got")["outcome"], "eu-west");
    assert_eq!(
        s(by_step("got"), "text"),
        r#"The user answered "Which region should the new cluster run in?" with "eu-west"."#
    );
}
