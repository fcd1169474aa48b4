//! "Answered elsewhere": when the harness settles a call itself (the person answered at its
//! terminal, the tool ran, it refused the call), the event it sends for that call withdraws
//! the hook's question from the page and every channel, and a late press runs nothing. And a
//! hook stopped while its create was still on its way leaves no question open.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::faulty_proxy::{Fault, FaultyProxy};
use crate::common::server::{TestServer, fresh_notifying_server, send};
use crate::run::claude_input;
use crate::run::{
    Dir, abandoned, claude_call, finish, hook_command, pending_decision, run, server, start,
};
use sayso::domain::PersonChannel;

/// The event `event` of the same call as `input` (a `PreToolUse` or `PermissionRequest`).
fn settled_event(input: &str, event: &str) -> String {
    let mut v: Value = serde_json::from_str(input).unwrap();
    v["hook_event_name"] = json!(event);
    match event {
        "PostToolUse" => {
            v["tool_response"] = json!({"stdout": "", "stderr": "", "interrupted": false})
        }
        "PostToolUseFailure" => {
            v["error"] = json!("Exit code 1");
            v["is_interrupt"] = json!(false);
        }
        "PermissionDenied" => v["reason"] = json!("The user denied this at the terminal"),
        _ => {}
    }
    v.to_string()
}

/// Runs the hook with the settled event: it prints nothing, exits 0, says nothing on stderr,
/// and has withdrawn the question by the time it ends, within 2 s.
async fn send_settled(srv: &TestServer, dir: &Dir, harness: &str, input: &str, event: &str) {
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", harness]);
    let out = run(cmd, &settled_event(input, event)).await;
    assert_eq!(out.code, 0, "{event}: {out:?}");
    assert_eq!(out.stdout, Value::Null, "{event}: nothing printed: {out:?}");
    assert_eq!(out.stderr, "", "{event}: {out:?}");
    assert!(
        out.took < Duration::from_secs(2),
        "{event}: took {:?}",
        out.took
    );
}

/// Presses `answer` as the person would from the page, and through the links ntfy and Web
/// Push carry: each is refused, and the decision stays withdrawn.
async fn late_presses_run_nothing(srv: &TestServer, d: &Value) {
    let web_url = d["web_url"].as_str().unwrap();
    let (status, body) = srv.answer(web_url, json!({"value": "Allow"})).await;
    assert_eq!(status, 409, "the page: {body}");
    for channel in [PersonChannel::Ntfy, PersonChannel::Push] {
        let url = srv.person_url_via(web_url, channel).await;
        let resp = srv
            .client
            .post(&url)
            .header("content-type", "application/json")
            .body(json!({"value": "Allow"}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 409, "{channel:?}");
    }
    let after = srv.get(d["decision_id"].as_str().unwrap()).await;
    assert_eq!(after["status"], "cancelled", "{after}");
    assert_eq!(after["outcome"], Value::Null, "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_tool_use_withdraws_the_question_from_every_channel_and_a_late_allow_runs_nothing() {
    let (_db, srv) = fresh_notifying_server().await;
    let ntfy = srv.ntfy_phone().await;
    // Claude Code's PermissionRequest hook, racing its own dialog at the terminal.
    let (dir, mut cmd, input) = claude_call(&srv, "PermissionRequest", "s-e", "make deploy");
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "600");
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(&srv).await;
    let id = d["decision_id"].as_str().unwrap();
    let asked = tokio::time::timeout(Duration::from_secs(20), async {
        while ntfy.requests().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    asked.await.expect("ntfy was told");

    // The person allows at the terminal; the tool runs, and Claude Code sends PostToolUse.
    send_settled(&srv, &dir, "claude", &input, "PostToolUse").await;
    assert_eq!(srv.get(id).await["status"], "cancelled");
    abandoned(&srv, id).await;

    // The hook that was waiting sees its question settled and ends; it allows nothing.
    let out = finish(child, started).await;
    assert_eq!(out.code, 0, "{out:?}");
    let decision = &out.stdout["hookSpecificOutput"]["decision"];
    assert_ne!(decision["behavior"], "allow", "{out:?}");

    // The ntfy notification is replaced by one saying the agent stopped waiting.
    let replaced = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let sent: Vec<Value> = ntfy.requests().iter().map(|r| r.json()).collect();
            if let Some(r) = sent.iter().skip(1).find(|m| m["tags"] == json!(["x"])) {
                return (sent[0].clone(), r.clone());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let (ask, withdrawn) = replaced.await.expect("ntfy was told of the withdrawal");
    assert_eq!(withdrawn["sequence_id"], ask["sequence_id"], "{withdrawn}");
    assert!(
        withdrawn["message"]
            .as_str()
            .unwrap()
            .starts_with("The agent stopped waiting for "),
        "{withdrawn}"
    );
    assert!(
        withdrawn.get("actions").is_none(),
        "no buttons: {withdrawn}"
    );
    late_presses_run_nothing(&srv, &d).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_denied_a_failed_tool_and_codex_post_tool_use_withdraw_it_too() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let cwd = dir.path().display().to_string();
    for (harness, asked_in, event) in [
        ("claude", "PermissionRequest", "PermissionDenied"),
        ("claude", "PreToolUse", "PostToolUseFailure"),
        ("codex", "PreToolUse", "PostToolUse"),
    ] {
        let input = claude_input(asked_in, &cwd, "s-d", &format!("make {event}"));
        let mut cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", harness]);
        cmd.env("SAYSO_HOOK_TIMEOUT_S", "600");
        let (child, started) = start(cmd, &input).await;
        let d = pending_decision(&srv).await;
        // Another call's event withdraws nothing.
        let other = claude_input(asked_in, &cwd, "s-d", "ls");
        send_settled(&srv, &dir, harness, &other, event).await;
        assert_eq!(
            srv.get(d["decision_id"].as_str().unwrap()).await["status"],
            "pending"
        );

        send_settled(&srv, &dir, harness, &input, event).await;
        abandoned(&srv, d["decision_id"].as_str().unwrap()).await;
        let out = finish(child, started).await;
        assert_eq!(out.code, 0, "{harness} {event}: {out:?}");
        assert!(
            !out.stdout.to_string().contains("\"allow\""),
            "{harness} {event}: {out:?}"
        );
        late_presses_run_nothing(&srv, &d).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigterm_while_the_create_is_held_leaves_no_question_open() {
    let (_db, srv) = server().await;
    let upstream: SocketAddr = srv.base.trim_start_matches("http://").parse().unwrap();
    let proxy = FaultyProxy::start(upstream).await;
    proxy.set(Fault::HoldPosts);
    let dir = Dir::new();
    let input = claude_input(
        "PreToolUse",
        &dir.path().display().to_string(),
        "s-t",
        "make release",
    );
    let base = format!("http://{}", proxy.addr);
    let mut cmd = hook_command(dir.path(), &base, Some(&srv.key), &["hook", "claude"]);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "600");
    let (child, started) = start(cmd, &input).await;
    // The hook's create is on its way, held by the proxy.
    let held = tokio::time::timeout(Duration::from_secs(30), async {
        while proxy.held() == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    held.await.expect("the hook sent its create");
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = finish(child, started).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "deny",
        "{out:?}"
    );
    // The create arrives after the hook is gone (and so does its guard's).
    proxy.set(Fault::None);
    let deadline = Instant::now() + Duration::from_secs(20);
    let d = loop {
        let (status, page) = send(srv.req(Method::GET, "/v1/decisions")).await;
        assert_eq!(status, 200, "{page}");
        let items = page["items"].as_array().unwrap().clone();
        let open = items.iter().filter(|d| d["status"] == "pending").count();
        if !items.is_empty() && open == 0 {
            assert_eq!(items.len(), 1, "one question, made once: {page}");
            break items[0].clone();
        }
        assert!(
            Instant::now() < deadline,
            "a question is left open with no hook waiting: {page}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    abandoned(&srv, d["decision_id"].as_str().unwrap()).await;
    let (status, body) = srv
        .answer(d["web_url"].as_str().unwrap(), json!({"value": "Allow"}))
        .await;
    assert_eq!(status, 409, "{body}");
}
