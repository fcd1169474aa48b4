//! Each harness's documented hook input, answered on the page: the exact stdout and exit code.

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::server::{TestServer, send};
use crate::run::{
    Dir, claude_call, claude_input, finish, hook_command, pending_decision, run, run_answered,
    server, start,
};

async fn decisions(srv: &TestServer) -> Vec<Value> {
    let (_, page) = send(srv.req(Method::GET, "/v1/decisions")).await;
    page["items"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_pre_tool_use_denied_on_the_page_carries_the_remark() {
    let (_db, srv) = server().await;
    let (dir, cmd, input) = claude_call(&srv, "PreToolUse", "abc123", "rm -rf build/");
    let (out, d) = run_answered(
        &srv,
        cmd,
        &input,
        json!({"value": "Deny", "remark": "use make clean"}),
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "The person denied this on sayso: use make clean"}})
    );
    // What the person was shown.
    assert_eq!(d["question"], "Claude Code wants to run: rm -rf build/");
    assert_eq!(d["kind"], "choose");
    // Filed under the folder's real path (it is in no project), so same-named folders differ.
    let project = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(d["project"], project.display().to_string());
    assert_eq!(d["metadata"]["hook"]["session_id"], "abc123");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_permission_request_allowed_on_the_page() {
    let (_db, srv) = server().await;
    let (_dir, cmd, input) = claude_call(&srv, "PermissionRequest", "s2", "cargo publish");
    let (out, _) = run_answered(&srv, cmd, &input, json!({"value": "Allow"})).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_for_this_session_is_remembered_for_that_session_only() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let cwd = dir.path().display().to_string();
    let cmd = || hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    let first = claude_input("PreToolUse", &cwd, "sess-1", "make build");
    let (out, _) = run_answered(
        &srv,
        cmd(),
        &first,
        json!({"value": "Allow for this session"}),
    )
    .await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out:?}"
    );

    // The next Bash call of the session is allowed without asking anyone.
    let second = claude_input("PreToolUse", &cwd, "sess-1", "make test");
    let out = run(cmd(), &second).await;
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": "The person allowed Bash for this session on sayso."}})
    );
    assert_eq!(decisions(&srv).await.len(), 1, "nobody was asked again");

    // Another session is asked.
    let other = claude_input("PreToolUse", &cwd, "sess-2", "make test");
    let (child, started) = start(cmd(), &other).await;
    let d = pending_decision(&srv).await;
    assert_eq!(d["metadata"]["hook"]["session_id"], "sess-2");
    srv.answer(d["web_url"].as_str().unwrap(), json!({"value": "Deny"}))
        .await;
    let out = finish(child, started).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_pre_tool_use_allowed_on_the_page() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    // Codex sends Claude's fields plus turn_id and model.
    let input = json!({
        "session_id": "019a-codex", "turn_id": "turn-3", "model": "gpt-5-codex",
        "transcript_path": null, "cwd": dir.path(), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "git push origin main"}, "tool_use_id": "call_9"
    })
    .to_string();
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "codex"]);
    let (out, d) = run_answered(&srv, cmd, &input, json!({"value": "Allow", "remark": "go"})).await;
    // Codex refuses a plain `permissionDecision: "allow"` (and then runs the call as if there
    // were no hook): its allow is exit 0 with nothing printed.
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, Value::Null, "{out:?}");
    assert_eq!(d["question"], "Codex wants to run: git push origin main");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_before_tool_denied_and_allowed() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let input = |cmd: &str| {
        json!({
            "session_id": "g-1", "transcript_path": "/home/me/.gemini/tmp/chats/session.json",
            "cwd": dir.path(), "hook_event_name": "BeforeTool",
            "timestamp": "2026-11-25T08:00:00.000Z", "tool_name": "run_shell_command",
            "tool_input": {"command": cmd, "description": "publish"}
        })
        .to_string()
    };
    let cmd = || hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "gemini"]);
    let (out, _) = run_answered(
        &srv,
        cmd(),
        &input("npm publish"),
        json!({"value": "Deny", "remark": "not on Friday"}),
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        json!({"decision": "deny", "reason": "The person denied this on sayso: not on Friday"})
    );
    let (out, _) = run_answered(&srv, cmd(), &input("npm pack"), json!({"value": "Allow"})).await;
    assert_eq!((out.code, out.stdout), (0, json!({"decision": "allow"})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_pre_tool_use_denied_and_allowed() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let input = |cmd: &str| {
        json!({
            "timestamp": 1_764_057_600_000u64, "cwd": dir.path(), "toolName": "bash",
            "toolArgs": json!({"command": cmd, "description": "push"}).to_string()
        })
        .to_string()
    };
    let cmd = || hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "copilot"]);
    let (out, d) = run_answered(
        &srv,
        cmd(),
        &input("git push --force"),
        json!({"value": "Deny"}),
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        json!({"permissionDecision": "deny", "permissionDecisionReason": "The person denied this on sayso."})
    );
    // Copilot sends no session: there is no "for this session" to offer.
    let (_, full) = send(srv.req(
        Method::GET,
        &format!("/v1/decisions/{}", d["decision_id"].as_str().unwrap()),
    ))
    .await;
    assert_eq!(
        full["question"],
        "Copilot CLI wants to run: git push --force"
    );
    let (out, _) = run_answered(&srv, cmd(), &input("git push"), json!({"value": "Allow"})).await;
    assert_eq!(
        (out.code, out.stdout),
        (0, json!({"permissionDecision": "allow"}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursor_shell_denied_and_mcp_allowed() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let root = dir.path().display().to_string();
    let shell = json!({
        "conversation_id": "c-1", "generation_id": "gen-1", "hook_event_name": "beforeShellExecution",
        "command": "rm -rf dist", "cwd": root, "workspace_roots": [root]
    })
    .to_string();
    let cmd = || hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "cursor"]);
    let (out, _) = run_answered(
        &srv,
        cmd(),
        &shell,
        json!({"value": "Deny", "remark": "keep dist"}),
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let reason = "The person denied this on sayso: keep dist";
    assert_eq!(
        out.stdout,
        json!({"permission": "deny", "user_message": reason, "agent_message": reason})
    );

    let mcp = json!({
        "conversation_id": "c-1", "generation_id": "gen-2", "hook_event_name": "beforeMCPExecution",
        "tool_name": "database_query", "tool_input": "{\"query\": \"DELETE FROM carts\"}",
        "url": "http://localhost:3000", "workspace_roots": [root]
    })
    .to_string();
    let (out, d) = run_answered(&srv, cmd(), &mcp, json!({"value": "Allow"})).await;
    assert_eq!((out.code, out.stdout), (0, json!({"permission": "allow"})));
    assert_eq!(d["question"], "Cursor wants to use database_query");
}
