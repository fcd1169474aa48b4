//! Timeouts, outages and bad input end in the configured safe fallback, quickly, with one
//! line on stderr; never in an allow.

use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;

use crate::harnesses::claude_input;
use crate::run::{Dir, finish, hook_command, pending_decision, run, server, start};

fn one_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr: {stderr:?}");
    lines[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_in_time_denies_without_a_link_and_a_late_answer_is_still_recorded() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let input = claude_input(
        "PreToolUse",
        &dir.path().display().to_string(),
        "s",
        "make deploy",
    );
    let mut cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "2");
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(&srv).await;
    let out = finish(child, started).await;
    assert!(out.took < Duration::from_secs(8), "took {:?}", out.took);
    let web_url = d["web_url"].as_str().unwrap();
    // The reason reaches the model: it names the feed, never a link.
    let reason = "sayso: no answer in 2 s; still open in the person's sayso feed; denied";
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": reason}})
    );
    assert_eq!(one_line(&out.stderr), reason);
    // The question stays open: a late answer is recorded.
    let (status, body) = srv.answer(web_url, json!({"value": "Allow"})).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ask_fallback_hands_back_to_the_terminal_in_each_harness_words() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let cwd = dir.path().display().to_string();
    let cases = [
        (
            "claude",
            claude_input("PreToolUse", &cwd, "s", "make a"),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}),
        ),
        (
            "gemini",
            json!({"session_id": "g", "cwd": cwd, "hook_event_name": "BeforeTool",
            "timestamp": "2026-11-25T08:00:00Z", "tool_name": "write_file",
            "tool_input": {"file_path": "/r/a.txt", "content": "x"}})
            .to_string(),
            json!({}),
        ),
        (
            "copilot",
            json!({"timestamp": 1, "cwd": cwd, "toolName": "bash",
            "toolArgs": "{\"command\":\"make b\"}"})
            .to_string(),
            json!({"permissionDecision": "ask"}),
        ),
        (
            "cursor",
            json!({"conversation_id": "c", "generation_id": "g", "hook_event_name":
            "beforeShellExecution", "command": "make c", "cwd": cwd, "workspace_roots": [cwd]})
            .to_string(),
            json!({"permission": "ask"}),
        ),
    ];
    for (harness, input, expected) in cases {
        let mut cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", harness]);
        cmd.env("SAYSO_HOOK_TIMEOUT_S", "1")
            .env("SAYSO_HOOK_FALLBACK", "ask");
        let out = run(cmd, &input).await;
        assert_eq!(out.code, 0, "{harness}: {out:?}");
        let mut got = out.stdout.clone();
        // Claude's ask carries the reason; the rest of the shape is exact.
        if harness == "claude" {
            let reason = got["hookSpecificOutput"]
                .as_object_mut()
                .unwrap()
                .remove("permissionDecisionReason")
                .unwrap();
            assert!(
                reason.as_str().unwrap().ends_with("; asking here instead"),
                "{reason}"
            );
        }
        assert_eq!(got, expected, "{harness}");
        assert!(
            one_line(&out.stderr).contains("no answer in 1 s"),
            "{harness}: {}",
            out.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_down_or_hangs_or_refuses_the_key_denies_fast() {
    let dir = Dir::new();
    let cwd = dir.path().display().to_string();
    let input = claude_input("PreToolUse", &cwd, "s", "make deploy");
    // Nothing listens on a port just freed.
    let free = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let down = format!("http://{}", free.local_addr().unwrap());
    drop(free);
    // A server that takes the connection and never answers.
    let hung = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hung_url = format!("http://{}", hung.local_addr().unwrap());
    let _holder = tokio::spawn(async move {
        let mut held = vec![];
        while let Ok((sock, _)) = hung.accept().await {
            held.push(sock);
        }
    });
    let (_db, srv) = server().await;
    let cases = [
        (
            down.as_str(),
            Some("sk_whatever"),
            "cannot reach the sayso server",
        ),
        (
            hung_url.as_str(),
            Some("sk_whatever"),
            "no answer from sayso in 3 s",
        ),
        (srv.base.as_str(), Some("sk_not_a_key"), "401"),
        (srv.base.as_str(), None, "no API key"),
    ];
    for (base, key, why) in cases {
        let mut cmd = hook_command(dir.path(), base, key, &["hook", "claude"]);
        cmd.env("SAYSO_HOOK_TIMEOUT_S", "3");
        let out = run(cmd, &input).await;
        assert!(
            out.took < Duration::from_secs(8),
            "{why}: took {:?}",
            out.took
        );
        assert_eq!(out.code, 0, "{why}: {out:?}");
        let d = &out.stdout["hookSpecificOutput"];
        assert_eq!(d["permissionDecision"], "deny", "{why}: {out:?}");
        let line = one_line(&out.stderr);
        assert!(
            line.contains(why) && line.ends_with("; denied"),
            "{why}: {line}"
        );
        assert_eq!(d["permissionDecisionReason"], line);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_in_the_form_each_harness_reads_as_a_denial() {
    let dir = Dir::new();
    // No server at all: bad input never gets that far.
    let base = "http://127.0.0.1:9";
    for (harness, input) in [
        ("claude", "not json"),
        ("codex", "{\"hook_event_name\": \"PreToolUse\"}"),
        ("gemini", ""),
        (
            "copilot",
            "{\"toolName\": \"bash\", \"toolArgs\": \"{broken\"}",
        ),
        ("cursor", "[1, 2]"),
    ] {
        let cmd = hook_command(dir.path(), base, Some("sk_x"), &["hook", harness]);
        let out = run(cmd, input).await;
        let line = one_line(&out.stderr).to_string();
        assert!(
            line.starts_with(&format!("sayso hook {harness}: ")),
            "{line}"
        );
        assert!(line.ends_with("; denied"), "{line}");
        match harness {
            // Exit 2: the blocking error, stderr is the reason.
            "claude" | "codex" | "gemini" => {
                assert_eq!(
                    (out.code, &out.stdout),
                    (2, &serde_json::Value::Null),
                    "{harness}"
                );
            }
            "copilot" => assert_eq!(
                (out.code, out.stdout),
                (
                    0,
                    json!({"permissionDecision": "deny", "permissionDecisionReason": line})
                )
            ),
            _ => assert_eq!(
                (out.code, out.stdout),
                (
                    0,
                    json!({"permission": "deny", "user_message": line, "agent_message": line})
                )
            ),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_setting_or_flag_is_the_harness_deny_too() {
    let dir = Dir::new();
    let mut cmd = hook_command(
        dir.path(),
        "http://127.0.0.1:9",
        Some("sk_x"),
        &["hook", "copilot"],
    );
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "ten minutes");
    let out = run(cmd, "{}").await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout["permissionDecision"], "deny");
    assert!(
        out.stdout["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("ten minutes")
    );
    let cmd = hook_command(
        dir.path(),
        "http://127.0.0.1:9",
        Some("sk_x"),
        &["hook", "claude", "--fallback", "allow"],
    );
    let out = run(cmd, "{}").await;
    assert_eq!(
        (out.code, &out.stdout),
        (2, &serde_json::Value::Null),
        "{out:?}"
    );
    assert!(one_line(&out.stderr).contains("allow"), "{}", out.stderr);
}
