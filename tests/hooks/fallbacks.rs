//! Timeouts, outages and bad input end in the configured safe fallback, quickly, with one
//! line on stderr; never in an allow.

use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::process::Child;

use crate::common::server::TestServer;
use crate::run::claude_input;
use crate::run::{
    BIN, Dir, abandoned, claude_call, finish, hook_command, pending_decision, run, server, start,
};

fn one_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr: {stderr:?}");
    lines[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_in_time_denies_without_a_link_and_withdraws_the_question() {
    let (_db, srv) = server().await;
    let (_dir, mut cmd, input) = claude_call(&srv, "PreToolUse", "s", "make deploy");
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "2");
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(&srv).await;
    let out = finish(child, started).await;
    assert!(out.took < Duration::from_secs(8), "took {:?}", out.took);
    let web_url = d["web_url"].as_str().unwrap();
    // The reason reaches the model: it says the question is gone, and carries no link.
    let reason = "sayso: no answer in 2 s; the question is withdrawn; denied";
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": reason}})
    );
    assert_eq!(one_line(&out.stderr), reason);
    // Nothing waits for an answer any more: a press after it is refused, and says so.
    abandoned(&srv, d["decision_id"].as_str().unwrap()).await;
    let (status, body) = srv.answer(web_url, json!({"value": "Allow"})).await;
    assert_eq!(status, 409, "{body}");
}

/// Runs `sayso hook claude` until its question is pending, and returns the hook and the
/// decision.
async fn waiting_hook(srv: &TestServer, dir: &Dir, command: &str) -> (Child, Instant, Value) {
    let input = claude_input(
        "PreToolUse",
        &dir.path().display().to_string(),
        "s",
        command,
    );
    let mut cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "600");
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(srv).await;
    (child, started, d)
}

fn signal(child: &Child, sig: Signal) {
    let pid = Pid::from_raw(child.id().expect("running") as i32);
    kill(pid, sig).expect("the signal is sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_harness_stopping_the_hook_withdraws_its_question_and_denies() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    for (sig, name) in [
        (Signal::SIGTERM, "SIGTERM"),
        (Signal::SIGINT, "SIGINT"),
        (Signal::SIGHUP, "SIGHUP"),
    ] {
        let (child, started, d) = waiting_hook(&srv, &dir, &format!("make {name}")).await;
        signal(&child, sig);
        let out = finish(child, started).await;
        let reason = format!(
            "sayso: the harness stopped the hook ({name}); the question is withdrawn; denied"
        );
        assert_eq!(out.code, 0, "{name}: {out:?}");
        assert_eq!(
            out.stdout["hookSpecificOutput"]["permissionDecision"], "deny",
            "{name}: {out:?}"
        );
        assert_eq!(
            out.stdout["hookSpecificOutput"]["permissionDecisionReason"], reason,
            "{name}: {out:?}"
        );
        assert_eq!(one_line(&out.stderr), reason);
        abandoned(&srv, d["decision_id"].as_str().unwrap()).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_killed_outright_has_its_guard_withdraw_the_question() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let (mut child, _, d) = waiting_hook(&srv, &dir, "make kill").await;
    // What Codex does to a hook past its timeout: no code of the hook runs after this.
    signal(&child, Signal::SIGKILL);
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), None, "killed: {status:?}");
    abandoned(&srv, d["decision_id"].as_str().unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_exiting_withdraws_the_question() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let input = claude_input(
        "PreToolUse",
        &dir.path().display().to_string(),
        "s",
        "make orphan",
    );
    dir.write("in.json", &input);
    // The harness: a shell that runs the hook (its reply going to a file, so only its
    // parent's going away can tell it) and is then killed without a word to the hook.
    let mut shell = tokio::process::Command::new("/bin/sh");
    shell
        .args([
            "-c",
            "\"$0\" hook claude < in.json > out.json 2> err.txt & wait",
            BIN,
        ])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("SAYSO_URL", &srv.base)
        .env("SAYSO_KEY", &srv.key)
        .env("SAYSO_HOOK_TIMEOUT_S", "600")
        .env_remove("SAYSO_HOOK_POLICY")
        .env_remove("SAYSO_HOOK_FALLBACK")
        .kill_on_drop(true);
    let mut shell = shell.spawn().unwrap();
    let d = pending_decision(&srv).await;
    signal(&shell, Signal::SIGKILL);
    let _ = shell.wait().await;
    abandoned(&srv, d["decision_id"].as_str().unwrap()).await;
    // The hook still gives its harness's deny, to nobody.
    let deadline = Instant::now() + Duration::from_secs(20);
    let reply = || std::fs::read_to_string(dir.path().join("out.json")).unwrap_or_default();
    while reply().is_empty() {
        assert!(Instant::now() < deadline, "the hook never replied");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out: Value = serde_json::from_str(reply().trim()).unwrap();
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(out.to_string().contains("the harness exited"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_no_longer_reading_the_reply_withdraws_the_question() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let (mut child, _, d) = waiting_hook(&srv, &dir, "make unread").await;
    // stdin was closed long ago, as every harness does: that alone is no reason. A closed
    // stdout is: nobody will read the answer.
    drop(child.stdout.take());
    abandoned(&srv, d["decision_id"].as_str().unwrap()).await;
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the hook exits")
        .unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
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
