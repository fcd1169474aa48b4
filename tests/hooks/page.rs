//! The approval page: the call laid out for a phone, one-tap answers by form post, and a
//! late answer shown as late.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::forms::page_form;
use crate::common::server::{TestServer, feed_page, send};
use crate::run::claude_input;
use crate::run::{
    Dir, abandoned, claude_call, finish, hook_command, pending_decision, server, start,
};

fn approval_body(tool: &str, input: Value, answer_by: &str) -> Value {
    json!({
        "question": format!("Claude Code wants to use {tool}"), "kind": "choose",
        "options": ["Allow", "Deny", "Allow for this session"], "allow_other": false,
        "approval": {"harness": "claude", "tool_name": tool, "tool_input": input,
            "cwd": "/home/me/shop", "session_id": "sess-9", "answer_by": answer_by}
    })
}

/// The page the person answers at: an approval's feed approval link (its `web_url` only
/// shows it), any other page as it is.
async fn page(srv: &TestServer, web_url: &str) -> (StatusCode, String, reqwest::header::HeaderMap) {
    let url = srv.person_url(web_url).await;
    let resp = srv.client.get(url).send().await.unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    (status, resp.text().await.unwrap(), headers)
}

/// A browser's form post from the page itself.
async fn post_form(srv: &TestServer, web_url: &str, form: &str) -> StatusCode {
    page_form(srv.person_url(web_url).await, form.to_string())
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_the_command_and_a_tap_on_deny_answers_the_hook() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let cwd = dir.path().display().to_string();
    let input = claude_input(
        "PreToolUse",
        &cwd,
        "sess-1",
        "cd build && rm -rf \"out dir\"",
    );
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(&srv).await;
    let web_url = d["web_url"].as_str().unwrap();

    let (status, html, headers) = page(&srv, web_url).await;
    assert_eq!(status, 200);
    assert!(
        headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'none'")
    );
    // It works without JavaScript: its one script only previews an edit of the command.
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert!(html.contains("<script src=\"/static/edit.js\" defer></script>"));
    for needle in [
        "<span class=\"cmd\">cd</span>",
        "<span class=\"op\">&#38;&#38;</span>",
        "<span class=\"danger\">rm</span>",
        "<span class=\"danger\">-rf</span>",
        "<li>Deletes files and folders recursively</li>",
        "<span class=\"str\">&#34;out dir&#34;</span>",
        "name=\"value\" value=\"Allow\"",
        "name=\"value\" value=\"Allow for this session\"",
        "name=\"value\" value=\"Deny\"",
        "<label for=\"remark\"",
        &format!("<code dir=\"ltr\">{cwd}</code>"),
        "<code dir=\"ltr\">sess-1</code>",
        "<h1 id=\"title\">Claude Code wants to run a Bash command</h1>",
        "Allow all Bash commands in this session",
        "href=\"/static/approval.css\"",
    ] {
        assert!(html.contains(needle), "{needle} missing in\n{html}");
    }
    let (status, css, _) = page(&srv, &srv.url("/static/approval.css")).await;
    assert_eq!(status, 200);
    assert!(css.contains("min-height:56px"));

    assert_eq!(
        post_form(&srv, web_url, "value=Deny&remark=not+before+the+backup").await,
        303
    );
    let out = finish(child, started).await;
    assert_eq!(
        out.stdout,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "The person denied this on sayso: not before the backup"}})
    );
    let (_, html, _) = page(&srv, web_url).await;
    assert!(
        html.contains("<h2>Denied</h2>") && html.contains("Reason: not before the backup"),
        "{html}"
    );
    assert!(!html.contains("<form"), "no buttons once answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_writes_and_fetches_are_laid_out_by_what_they_do() {
    let (_db, srv) = server().await;
    let by = "2099-01-01T00:00:00Z";
    let edit = srv
        .create(approval_body(
            "Edit",
            json!({"file_path": "/home/me/shop/src/cart.rs", "old_string": "let total = 0;",
                   "new_string": "let total = sum(items);"}),
            by,
        ))
        .await;
    let (_, html, _) = page(&srv, edit["web_url"].as_str().unwrap()).await;
    assert!(
        html.contains("<code class=\"path\" dir=\"ltr\">/home/me/shop/src/cart.rs</code>"),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"del\">-let total = 0;</span>"),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"add\">+let total = sum(items);</span>"),
        "{html}"
    );

    let write = srv
        .create(approval_body(
            "Write",
            json!({"file_path": "/home/me/shop/.env", "content": "K=".repeat(1024)}),
            by,
        ))
        .await;
    let (_, html, _) = page(&srv, write["web_url"].as_str().unwrap()).await;
    assert!(html.contains("Write <code class=\"path\" dir=\"ltr\">/home/me/shop/.env</code> <span class=\"size\">2.0 KiB</span>"), "{html}");

    let fetch = srv
        .create(approval_body(
            "WebFetch",
            json!({"url": "https://api.example.com/v1/orders?all=1", "prompt": "list"}),
            by,
        ))
        .await;
    let (_, html, _) = page(&srv, fetch["web_url"].as_str().unwrap()).await;
    assert!(
        html.contains("<p class=\"host\" dir=\"ltr\">api.example.com</p>"),
        "{html}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_after_the_agent_stopped_waiting_is_recorded_and_shown_as_late() {
    let (_db, srv) = server().await;
    let h = srv
        .create(approval_body(
            "Bash",
            json!({"command": "make deploy"}),
            "2026-01-01T00:00:00Z",
        ))
        .await;
    let web_url = h["web_url"].as_str().unwrap();
    let (_, html, _) = page(&srv, web_url).await;
    assert!(html.contains("The agent stopped waiting at"), "{html}");
    assert_eq!(post_form(&srv, web_url, "value=Allow").await, 303);
    let (_, html, _) = page(&srv, web_url).await;
    assert!(html.contains("<h2>Allowed</h2>"), "{html}");
    assert!(
        html.contains("This answer came after the agent stopped waiting"),
        "{html}"
    );
    let d = srv.get(h["decision_id"].as_str().unwrap()).await;
    assert_eq!(
        (d["status"].as_str(), d["outcome"].as_str()),
        (Some("answered"), Some("Allow"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_takes_only_its_own_answers() {
    let (_db, srv) = server().await;
    let mut body = approval_body("Bash", json!({"command": "ls"}), "2099-01-01T00:00:00Z");
    body["options"] = json!(["Yes", "No"]);
    body["multi"] = json!(true);
    let (status, err) = send(srv.req(Method::POST, "/v1/decisions").json(&body)).await;
    assert_eq!(status, 422, "{err}");
    let details = &err["error"]["details"];
    assert_eq!(details[0]["path"], "options", "{err}");
    assert_eq!(
        details[0]["message"],
        "an approval's options must be Allow, Deny (and Allow for this session) (got Yes, No)"
    );
    assert_eq!(details[1]["path"], "multi", "{err}");
    body["approval"]["tool_input"] = json!("ls");
    let (status, err) = send(srv.req(Method::POST, "/v1/decisions").json(&body)).await;
    assert_eq!(status, 422, "{err}");
    assert_eq!(
        err["error"]["details"][0]["path"], "approval.tool_input",
        "{err}"
    );

    let h = srv
        .create(approval_body(
            "Bash",
            json!({"command": "ls"}),
            "2099-01-01T00:00:00Z",
        ))
        .await;
    let (status, _) = srv
        .answer(h["web_url"].as_str().unwrap(), json!({"value": "Maybe"}))
        .await;
    assert_eq!(status, 422);
    let (status, body) = srv
        .answer(
            h["web_url"].as_str().unwrap(),
            json!({"other": "Sometimes"}),
        )
        .await;
    assert_eq!(status, 422, "no Other on an approval: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_edited_before_allowing_goes_back_as_updated_input() {
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let cwd = dir.path().display().to_string();
    for event in ["PreToolUse", "PermissionRequest"] {
        let input = claude_input(event, &cwd, "sess-e", "rm -rf build/");
        let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
        let (child, started) = start(cmd, &input).await;
        let d = pending_decision(&srv).await;
        let web_url = d["web_url"].as_str().unwrap();
        let (_, html, _) = page(&srv, web_url).await;
        assert!(
            html.contains("name=\"command\" id=\"command\"")
                && html.contains(">rm -rf build/</textarea>"),
            "{html}"
        );
        assert_eq!(
            post_form(&srv, web_url, "command=rm+-rf+build%2Fcache&value=Allow").await,
            303
        );
        let out = finish(child, started).await;
        let edited = json!({"command": "rm -rf build/cache", "description": "Remove the build output",
            "timeout": 120000, "run_in_background": false});
        let expected = if event == "PreToolUse" {
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                "permissionDecisionReason": "The person allowed this on sayso.", "updatedInput": edited}})
        } else {
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow", "updatedInput": edited}}})
        };
        assert_eq!(out.stdout, expected, "{event}");
        let (_, html, _) = page(&srv, web_url).await;
        assert!(html.contains("Allowed, with the command edited"), "{html}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_an_editable_approval_takes_a_command_and_deny_ignores_it() {
    let (_db, srv) = server().await;
    let mut body = approval_body(
        "Bash",
        json!({"command": "make deploy"}),
        "2099-01-01T00:00:00Z",
    );
    let h = srv.create(body.clone()).await;
    let web_url = h["web_url"].as_str().unwrap();
    let (_, html, _) = page(&srv, web_url).await;
    assert!(!html.contains("name=\"command\""), "not editable: {html}");
    let (status, err) = srv
        .answer(
            web_url,
            json!({"value": "Allow", "command": "make deploy-all"}),
        )
        .await;
    assert_eq!(status, 422, "{err}");
    assert_eq!(err["error"]["details"][0]["path"], "command");
    // The same command as asked is no edit at all.
    srv.answer_ok(web_url, json!({"value": "Allow", "command": "make deploy"}))
        .await;
    assert_eq!(
        srv.get(h["decision_id"].as_str().unwrap()).await["custom"],
        false
    );

    body["approval"]["editable"] = json!(true);
    let h = srv.create(body).await;
    let web_url = h["web_url"].as_str().unwrap();
    assert_eq!(
        post_form(&srv, web_url, "command=make+nothing&value=Deny&remark=no").await,
        303
    );
    let d = srv.get(h["decision_id"].as_str().unwrap()).await;
    assert_eq!(
        (d["outcome"].as_str(), d["custom"].as_bool()),
        (Some("Deny"), Some(false))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_after_the_hook_stopped_waiting_says_so_and_changes_nothing() {
    let (_db, srv) = server().await;
    let (_dir, mut cmd, input) = claude_call(&srv, "PreToolUse", "s", "make deploy");
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "600");
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(&srv).await;
    // The harness gives up on the hook, as Claude Code does past the hook's timeout.
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = finish(child, started).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    let id = d["decision_id"].as_str().unwrap();
    abandoned(&srv, id).await;

    // The person presses Allow in the morning: the page says the agent stopped waiting and
    // that the answer runs nothing, never that it was allowed.
    let web_url = d["web_url"].as_str().unwrap();
    let resp = page_form(srv.person_url(web_url).await, "value=Allow")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CONFLICT);
    let html = resp.text().await.unwrap();
    assert!(html.contains("data-status=\"cancelled\""), "{html}");
    assert!(
        html.contains("<h2>Claude Code stopped waiting at "),
        "{html}"
    );
    assert!(
        html.contains(
            "It withdrew the question, so an answer now runs nothing and changes nothing."
        ),
        "{html}"
    );
    assert!(!html.contains("Allowed"), "{html}");
    assert!(
        !html.contains("id=\"answer\""),
        "no form to answer with: {html}"
    );
    let after = srv.get(id).await;
    assert_eq!(after["status"], "cancelled", "{after}");
    assert_eq!(after["outcome"], Value::Null, "{after}");

    // The feed lists it the same way.
    let (status, feed) = feed_page(&srv.feed_url().await).await;
    assert_eq!(status, 200);
    assert!(
        feed.contains("<span class=\"status\">Withdrawn by the agent</span>"),
        "{feed}"
    );
}
