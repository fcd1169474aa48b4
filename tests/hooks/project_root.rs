//! The project is the folder the call's working directory belongs to, not the directory
//! itself: a `cd` into a subfolder keeps the project's policy (its step-up rule), and an
//! allowance made in one folder named `shop` lets nothing through in another `shop`.

use std::path::{Path, PathBuf};

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::server::{TestServer, send};
use crate::run::claude_input;
use crate::run::{
    Dir, Ended, finish, hook_command, pending_decision, run, run_answered, server, start,
};

/// A step-up rule for pushes, at the project's root.
const POLICY: &str = r#"{"rules": [{"tool": "Bash", "command": "git push*", "decision": "ask", "step_up": "passkey"}]}"#;

/// The hook, run from `top` (also its `HOME`, so no user-wide policy applies).
fn hook(top: &Path, srv: &TestServer) -> tokio::process::Command {
    let mut cmd = hook_command(top, &srv.base, Some(&srv.key), &["hook", "claude"]);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "60");
    cmd
}

fn bash(cwd: &Path, session: &str, command: &str) -> String {
    claude_input("PreToolUse", &cwd.display().to_string(), session, command)
}

fn decision_of(out: &Ended) -> &str {
    out.stdout["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or_default()
}

/// The folder as the hook names it: its real path.
fn real(p: &Path) -> String {
    std::fs::canonicalize(p).unwrap().display().to_string()
}

/// Runs `input`; it must reach the person as a new question, which they deny.
async fn asked(srv: &TestServer, top: &Path, input: &str) -> Value {
    let (child, started) = start(hook(top, srv), input).await;
    let d = pending_decision(srv).await;
    srv.answer_ok(d["web_url"].as_str().unwrap(), json!({"value": "Deny"}))
        .await;
    let out = finish(child, started).await;
    assert_eq!(decision_of(&out), "deny", "{input}: {out:?}");
    d
}

async fn decision_count(srv: &TestServer) -> usize {
    let (_, page) = send(srv.req(Method::GET, "/v1/decisions?limit=200")).await;
    page["items"].as_array().unwrap().len()
}

/// Runs `input`; it must pass on an earlier answer, asking nobody.
async fn passes(srv: &TestServer, top: &Path, input: &str) {
    let before = decision_count(srv).await;
    let out = run(hook(top, srv), input).await;
    assert_eq!(decision_of(&out), "allow", "{out:?}");
    assert_eq!(
        decision_count(srv).await,
        before,
        "nobody was asked: {out:?}"
    );
}

fn mkdir(p: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&p).unwrap();
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_from_a_subfolder_meets_the_roots_step_up_rule() {
    let (_db, srv) = server().await;
    let top = Dir::new();
    top.write("shop/.sayso/policy.json", POLICY);
    mkdir(top.path().join("shop/.git"));
    let sub = mkdir(top.path().join("shop/src/deep"));
    let d = asked(&srv, top.path(), &bash(&sub, "s1", "git push --force")).await;
    assert_eq!(d["step_up"], "passkey", "{d}");
    assert_eq!(d["project"], real(&top.path().join("shop")), "{d}");

    // A repository the agent makes inside the project does not shed the policy around it.
    let nested = mkdir(top.path().join("shop/vendor/lib"));
    mkdir(nested.join(".git"));
    let d = asked(&srv, top.path(), &bash(&nested, "s1", "git push --force")).await;
    assert_eq!(d["step_up"], "passkey", "{d}");
    assert_eq!(d["project"], real(&nested), "{d}");

    // A worktree (its `.git` a file) under the project: the same.
    let wt = mkdir(top.path().join("shop/wt"));
    std::fs::write(wt.join(".git"), "gitdir: /elsewhere/.git/worktrees/wt\n").unwrap();
    let d = asked(
        &srv,
        top.path(),
        &bash(&mkdir(wt.join("a")), "s1", "git push"),
    )
    .await;
    assert_eq!(d["step_up"], "passkey", "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowance_in_one_shop_does_not_pass_a_call_in_another() {
    let (_db, srv) = server().await;
    let top = Dir::new();
    let a = mkdir(top.path().join("a/shop"));
    let b = mkdir(top.path().join("b/shop"));
    mkdir(a.join(".git"));
    mkdir(b.join(".git"));

    // "Allow for 15 min" in /…/a/shop.
    let (out, d) = run_answered(
        &srv,
        hook(top.path(), &srv),
        &bash(&a, "s1", "ls -la"),
        json!({"value": "Allow", "allow_for": "15m"}),
    )
    .await;
    assert_eq!(decision_of(&out), "allow", "{out:?}");
    assert_eq!(d["project"], real(&a));
    let (_, page) = send(srv.req(Method::GET, "/v1/allowances")).await;
    assert_eq!(page["items"][0]["scope"]["project"], real(&a), "{page}");

    // It stands in a/shop, from a subfolder too, and in no other folder named shop.
    passes(
        &srv,
        top.path(),
        &bash(&mkdir(a.join("src")), "s2", "cat x"),
    )
    .await;
    let d = asked(&srv, top.path(), &bash(&b, "s2", "cat x")).await;
    assert_eq!(d["project"], real(&b));

    // "Allow for this session" in a/shop (the standing one revoked first, so the session's
    // answer alone stands): the same session in b/shop is still asked.
    let (status, body) = send(srv.req(Method::DELETE, "/v1/allowances")).await;
    assert!(status.is_success(), "{body}");
    let (out, _) = run_answered(
        &srv,
        hook(top.path(), &srv),
        &bash(&a, "s3", "make deploy"),
        json!({"value": "Allow for this session"}),
    )
    .await;
    assert_eq!(decision_of(&out), "allow", "{out:?}");
    passes(&srv, top.path(), &bash(&a.join("src"), "s3", "make deploy")).await;
    asked(&srv, top.path(), &bash(&b, "s3", "make deploy")).await;
}
