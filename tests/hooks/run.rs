//! Running `sayso hook` as a harness does, and answering its question as the person does.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};
use uuid::Uuid;

use crate::common::server::{TestServer, send};

pub const BIN: &str = env!("CARGO_BIN_EXE_sayso");

// A server on a fresh database.
pub use crate::common::server::fresh_server as server;

/// A directory of its own, removed on drop: the harness's project (and `HOME`).
pub struct Dir(pub PathBuf);

impl Dir {
    pub fn new() -> Dir {
        let path = std::env::temp_dir().join(format!("sayso-hook-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&path).unwrap();
        Dir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.0.join(rel)).unwrap()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `sayso ARGS` with only the settings given, in `home` (also its `HOME`, so no policy of
/// the machine's user applies).
pub fn hook_command(home: &Path, base: &str, key: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("SAYSO_URL", base)
        .env_remove("SAYSO_KEY")
        .env_remove("SAYSO_HOOK_POLICY")
        .env_remove("SAYSO_HOOK_FALLBACK")
        .env_remove("SAYSO_HOOK_TIMEOUT_S")
        .env_remove("SAYSO_DATABASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(key) = key {
        cmd.env("SAYSO_KEY", key);
    }
    cmd
}

/// `sayso hook claude --explain` run in `dir` with the policy file `policy`: what the hook
/// would do, with no server to ask.
pub fn explain_command(dir: &Dir, policy: &Path) -> Command {
    let mut cmd = hook_command(
        dir.path(),
        "http://127.0.0.1:9",
        None,
        &["hook", "claude", "--explain"],
    );
    cmd.env("SAYSO_HOOK_POLICY", policy);
    cmd
}

/// A project folder with its `.sayso/policy.json`, and Claude Code's hook run in it.
pub struct Project {
    pub dir: Dir,
    pub cwd: String,
}

impl Project {
    pub fn with_policy(policy: &str) -> Project {
        let dir = Dir::new();
        dir.write(".sayso/policy.json", policy);
        let cwd = dir.path().display().to_string();
        Project { dir, cwd }
    }

    /// `sayso hook claude` here against `srv`, waiting up to a minute for the person.
    pub fn hook(&self, srv: &TestServer) -> Command {
        let mut cmd = hook_command(
            self.dir.path(),
            &srv.base,
            Some(&srv.key),
            &["hook", "claude"],
        );
        cmd.env("SAYSO_HOOK_TIMEOUT_S", "60");
        cmd
    }

    /// Claude Code's input for the Bash `command` of `session`, here.
    pub fn bash(&self, session: &str, command: &str) -> String {
        claude_input("PreToolUse", &self.cwd, session, command)
    }
}

/// Claude Code's documented `PreToolUse` / `PermissionRequest` input.
pub fn claude_input(event: &str, cwd: &str, session: &str, command: &str) -> String {
    json!({
        "session_id": session,
        "transcript_path": "/home/me/.claude/projects/shop/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Remove the build output",
                       "timeout": 120000, "run_in_background": false},
        "tool_use_id": format!("toolu_{}", uuid::Uuid::new_v4().simple()),
    })
    .to_string()
}

/// Claude Code calling its hook for a Bash `command`: a project of its own (also `HOME`),
/// `sayso hook claude` to run in it against `srv`, and the event's JSON for its stdin.
pub fn claude_call(
    srv: &TestServer,
    event: &str,
    session: &str,
    command: &str,
) -> (Dir, Command, String) {
    let dir = Dir::new();
    let input = claude_input(event, &dir.path().display().to_string(), session, command);
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    (dir, cmd, input)
}

/// What a hook run ended with.
#[derive(Debug)]
pub struct Ended {
    pub code: i32,
    /// The JSON on stdout, `Null` when stdout was empty.
    pub stdout: Value,
    pub stderr: String,
    pub took: Duration,
}

/// Starts the hook and hands it `input` on stdin.
pub async fn start(mut cmd: Command, input: &str) -> (Child, Instant) {
    let started = Instant::now();
    let mut child = cmd.spawn().expect("sayso runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    (child, started)
}

/// Waits (at most 60 s) for the hook to exit.
pub async fn finish(child: Child, started: Instant) -> Ended {
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the hook exits within 60 s")
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let stdout = if text.trim().is_empty() {
        Value::Null
    } else {
        assert_eq!(text.lines().count(), 1, "one line of JSON: {text:?}");
        serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {text:?}; stderr {stderr}"))
    };
    Ended {
        code: out.status.code().expect("exited, not killed"),
        stdout,
        stderr,
        took: started.elapsed(),
    }
}

/// Runs the hook to its end with `input` on stdin.
pub async fn run(cmd: Command, input: &str) -> Ended {
    let (child, started) = start(cmd, input).await;
    finish(child, started).await
}

/// The pending decision the hook created (waits up to 60 s for it to appear: a harness that
/// runs the hook can take longer than 20 s to start on a busy machine).
pub async fn pending_decision(srv: &TestServer) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, page) = send(srv.req(Method::GET, "/v1/decisions?status=pending")).await;
        assert_eq!(status, 200, "{page}");
        if let Some(d) = page["items"].as_array().and_then(|i| i.first()) {
            return d.clone();
        }
        assert!(Instant::now() < deadline, "the hook created no decision");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Answers the next pending decision on the page with `answer` (JSON POST); returns the
/// decision as it was asked.
pub async fn answer_next(srv: &TestServer, answer: Value) -> Value {
    let d = pending_decision(srv).await;
    srv.answer_ok(d["web_url"].as_str().unwrap(), answer).await;
    d
}

/// Runs the hook, and answers its question on the page with `answer` (JSON POST).
pub async fn run_answered(
    srv: &TestServer,
    cmd: Command,
    input: &str,
    answer: Value,
) -> (Ended, Value) {
    let (child, started) = start(cmd, input).await;
    let d = answer_next(srv, answer).await;
    (finish(child, started).await, d)
}

/// Runs the hook and returns its stdout as text (for `--explain`), checking it exits 0.
pub async fn finish_text(cmd: Command, input: &str) -> String {
    let (child, _) = start(cmd, input).await;
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the hook exits within 30 s")
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits (at most 20 s) for decision `id` to leave `pending`, and checks it was withdrawn
/// as abandoned: `cancelled`, its `cancelled` event giving the reason `abandoned`, and its
/// `answer_text` saying the agent stopped waiting. Returns the decision.
pub async fn abandoned(srv: &TestServer, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    let d = loop {
        let d = srv.get(id).await;
        if d["status"] != "pending" {
            break d;
        }
        assert!(Instant::now() < deadline, "decision {id} is still pending");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(d["status"], "cancelled", "{d}");
    assert!(
        d["answer_text"]
            .as_str()
            .unwrap()
            .starts_with("The agent stopped waiting for "),
        "{d}"
    );
    let (status, events) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/events"))).await;
    assert_eq!(status, 200, "{events}");
    let cancelled: Vec<&Value> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "cancelled")
        .collect();
    assert_eq!(cancelled.len(), 1, "{events}");
    assert_eq!(cancelled[0]["detail"]["reason"], "abandoned", "{events}");
    d
}
