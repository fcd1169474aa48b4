//! `sayso hook claude` on Claude Code's `Elicitation` event: an MCP server's question put to
//! the person, and their answer (or its absence) printed as the `accept`, `decline` or
//! `cancel` Claude Code hands the server.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::server::send;
use crate::run::{Dir, finish, hook_command, pending_decision, run, server, start};

/// Claude Code 2.1.328's `Elicitation` input, as its hook runner builds it.
fn elicitation(cwd: &str, schema: Value) -> String {
    json!({
        "session_id": "s1", "transcript_path": "/t.jsonl", "cwd": cwd,
        "prompt_id": "p1", "hook_event_name": "Elicitation", "mcp_server_name": "billing",
        "message": "How many seats?", "mode": "form", "requested_schema": schema
    })
    .to_string()
}

fn seats() -> Value {
    json!({"type": "object", "required": ["seats"], "properties": {
        "seats": {"type": "integer", "minimum": 1, "maximum": 9},
        "vat": {"type": "boolean"},
        "note": {"type": "string", "maxLength": 20}}})
}

fn action(out: &Value) -> &Value {
    &out["hookSpecificOutput"]["action"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_persons_form_answer_reaches_the_server_typed() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    let (child, started) = start(cmd, &elicitation("/home/me/shop", seats())).await;
    let d = pending_decision(&srv).await;
    assert_eq!(d["kind"], "form");
    // Filed under the project the folder is in: here none, so the folder's own path.
    assert_eq!(d["project"], "/home/me/shop");
    srv.answer_ok(
        d["web_url"].as_str().unwrap(),
        json!({"value": {"seats": "4", "vat": "true", "note": "  ok "}}),
    )
    .await;
    let out = finish(child, started).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
            "content": {"seats": 4, "vat": true, "note": "ok"}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decline_is_a_decline_and_the_agents_link_answers_nothing() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    let (child, started) = start(cmd, &elicitation("/r", seats())).await;
    let d = pending_decision(&srv).await;
    // The `web_url` is in every API response the key reads: it cannot answer.
    let (status, body) = send(
        srv.client
            .post(d["web_url"].as_str().unwrap())
            .json(&json!({"value": {"seats": 9}})),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    srv.answer_ok(d["web_url"].as_str().unwrap(), json!({"action": "decline"}))
        .await;
    let out = finish(child, started).await;
    assert_eq!(action(&out.stdout), "decline", "{}", out.stderr);
    assert!(out.stdout["hookSpecificOutput"].get("content").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_in_time_cancels_and_closes_the_question() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let mut cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "2");
    let (child, started) = start(cmd, &elicitation("/r", seats())).await;
    let d = pending_decision(&srv).await;
    let out = finish(child, started).await;
    assert_eq!(out.code, 0);
    assert_eq!(action(&out.stdout), "cancel", "{}", out.stderr);
    let now = srv.get(d["decision_id"].as_str().unwrap()).await;
    assert_eq!(now["status"], "cancelled", "{now}");
    // Too late: the server was told "cancel", and the question says so.
    let (status, _) = srv
        .answer(
            d["web_url"].as_str().unwrap(),
            json!({"value": {"seats": 2}}),
        )
        .await;
    assert_eq!(status, 409);

    // With `--fallback ask`, Claude Code's own dialog takes it: nothing printed.
    let mut cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "2")
        .env("SAYSO_HOOK_FALLBACK", "ask");
    let out = run(cmd, &elicitation("/r", seats())).await;
    assert_eq!((out.code, &out.stdout), (0, &Value::Null), "{}", out.stderr);
    assert!(out.stderr.contains("no answer in 2 s"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_be_asked_faithfully_is_cancelled_with_the_reason() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let hostile = [
        json!({"type": "object", "properties": {"pin": {"type": "string", "pattern": "^[0-9]{4}$"}}}),
        json!({"type": "object", "properties": {"n": {"type": "number", "exclusiveMaximum": 3}}}),
        json!({"type": "object", "properties": {"o": {"type": "object"}}}),
        json!({"type": "object", "properties": {}}),
        json!("not a schema"),
    ];
    for schema in hostile {
        let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
        let out = run(cmd, &elicitation("/r", schema.clone())).await;
        assert_eq!(out.code, 0, "{schema}");
        assert_eq!(action(&out.stdout), "cancel", "{schema}: {}", out.stderr);
        assert!(
            out.stderr.starts_with("sayso: ") && out.stderr.contains("requested"),
            "{schema}: {}",
            out.stderr
        );
    }
    let url = json!({"hook_event_name": "Elicitation", "mcp_server_name": "x", "message": "m",
        "mode": "url", "url": "javascript:alert(1)", "elicitation_id": "e1"});
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    let out = run(cmd, &url.to_string()).await;
    assert_eq!(action(&out.stdout), "cancel", "{}", out.stderr);
    assert!(out.stderr.contains("http or https"), "{}", out.stderr);
    let (_, all) = send(srv.req(Method::GET, "/v1/decisions")).await;
    assert_eq!(all["items"], json!([]), "nobody was asked");

    // A server down or a bad key: cancelled too, never an accept.
    let cmd = hook_command(dir.path(), &srv.base, Some("sk_bad"), &["hook", "claude"]);
    let out = run(cmd, &elicitation("/r", seats())).await;
    assert_eq!(action(&out.stdout), "cancel", "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_is_accepted_or_declined_by_the_person() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let input = json!({"hook_event_name": "Elicitation", "mcp_server_name": "gh",
        "message": "Sign in", "mode": "url", "url": "https://example.com/login?s=1",
        "elicitation_id": "el-9", "cwd": "/r"})
    .to_string();
    for (answer, expected) in [("Accept", "accept"), ("Decline", "decline")] {
        let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
        let (child, started) = start(cmd, &input).await;
        let d = pending_decision(&srv).await;
        assert_eq!(d["kind"], "bool");
        srv.answer_ok(d["web_url"].as_str().unwrap(), json!({"value": answer}))
            .await;
        let out = finish(child, started).await;
        assert_eq!(
            out.stdout,
            json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": expected}}),
            "{}",
            out.stderr
        );
        assert!(out.took < Duration::from_secs(60));
    }
}
