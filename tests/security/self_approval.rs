//! An agent never answers its own approval. With only what the agent holds (its API key, the
//! server's address, the hook's own output), against an approval made by `sayso hook claude`:
//! no response it can get holds the approval's answer capability, its `web_url` answers
//! nothing, a session allowance it plants lets nothing through, and a timeout's reason
//! carries no link. The person still answers in one tap from the feed (Chromium at 360 px)
//! and from an ntfy button.

use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::common::receiver::{Receiver, Reply};
use crate::common::server::{TestServer, fresh_notifying_server, fresh_server, send};
use crate::run::{Dir, claude_input, finish, hook_command, start};
use sayso::domain::PersonChannel;

/// `sayso hook claude` for `command`, waiting at most `timeout_s` for the person.
async fn start_hook(
    dir: &Dir,
    srv: &TestServer,
    session: &str,
    command: &str,
    timeout_s: u64,
) -> (Child, Instant) {
    let mut cmd = agent_command(dir, srv, &["hook", "claude"]);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", timeout_s.to_string());
    let cwd = dir.path().display().to_string();
    start(cmd, &claude_input("PreToolUse", &cwd, session, command)).await
}

/// `sayso ARGS` in the agent's environment: the server's address and the agent's key.
fn agent_command(dir: &Dir, srv: &TestServer, args: &[&str]) -> Command {
    hook_command(dir.path(), &srv.base, Some(&srv.key), args)
}

/// The hook's exit, checked to be 0: its stdout as JSON, and its stderr.
async fn finish_hook((child, started): (Child, Instant)) -> (Value, String) {
    let out = finish(child, started).await;
    assert_eq!(out.code, 0, "{out:?}");
    (out.stdout, out.stderr)
}

fn permission(out: &Value) -> &str {
    out["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("")
}

/// The person's feed page, opened with the feed link: its HTML and the device cookie it set.
async fn open_feed(srv: &TestServer) -> (String, String) {
    let (feed, cookie) = crate::common::server::open_feed(&srv.feed_url().await).await;
    assert_eq!(feed.status(), 200);
    let cookie = cookie.expect("the feed link binds the device");
    (feed.text().await.unwrap(), cookie)
}

/// The approval links (`/a/…`) on a page.
fn approval_links(html: &str) -> Vec<String> {
    html.match_indices("href=\"/a/")
        .map(|(at, _)| {
            let rest = &html[at + 6..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

/// Every way the agent's key reads a decision, each response's body as text.
async fn what_the_agent_reads(srv: &TestServer, dir: &Dir, id: &str) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    for path in [
        "/v1/decisions".to_string(),
        "/v1/decisions?status=pending".to_string(),
        format!("/v1/decisions/{id}"),
        format!("/v1/decisions/{id}/await?timeout_s=0"),
        format!("/v1/decisions/{id}/events"),
        "/v1/usage".to_string(),
        "/openapi.json".to_string(),
    ] {
        let resp = srv.req(Method::GET, &path).send().await.unwrap();
        seen.push((path, resp.text().await.unwrap()));
    }
    seen.push(("/v1/events".into(), sse_for_a_moment(srv).await));
    for endpoint in ["/mcp", "/mcp/claude", "/mcp/omp", "/mcp/gemini", "/mcp/pi"] {
        seen.extend(mcp_reads(srv, endpoint, id).await);
    }
    for args in [vec!["get", id], vec!["await", id, "--timeout", "1"]] {
        let out = agent_command(dir, srv, &args).output().await.unwrap();
        seen.push((
            format!("sayso {}", args.join(" ")),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        ));
    }
    seen
}

/// What `/v1/events` sends in its first moment (it replays the inbox's history first).
async fn sse_for_a_moment(srv: &TestServer) -> String {
    let mut resp = srv.req(Method::GET, "/v1/events").send().await.unwrap();
    let mut body = Vec::new();
    let until = Instant::now() + Duration::from_millis(1500);
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(until.into(), resp.chunk()).await {
        body.extend_from_slice(&chunk);
    }
    String::from_utf8_lossy(&body).to_string()
}

/// An MCP session on `endpoint` with the agent's key: its tool list, and for `/mcp` every
/// tool that reads a decision.
async fn mcp_reads(srv: &TestServer, endpoint: &str, id: &str) -> Vec<(String, String)> {
    let post = |session: Option<String>, body: Value| {
        let mut req = srv
            .req(Method::POST, endpoint)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.send()
    };
    let init = post(
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "agent", "version": "1"}}}),
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200, "{endpoint}");
    let session = init
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let mut seen = vec![(format!("{endpoint} initialize"), init.text().await.unwrap())];
    let _ = post(
        session.clone(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .unwrap();
    let mut calls = vec![json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})];
    if endpoint == "/mcp" {
        for (n, (tool, args)) in [
            ("get_decision", json!({"decision_id": id})),
            ("await_decision", json!({"decision_id": id, "timeout_s": 0})),
            ("list_todos", json!({})),
        ]
        .into_iter()
        .enumerate()
        {
            calls.push(
                json!({"jsonrpc": "2.0", "id": 3 + n, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}),
            );
        }
    }
    for call in calls {
        let resp = post(session.clone(), call.clone()).await.unwrap();
        seen.push((format!("{endpoint} {call}"), resp.text().await.unwrap()));
    }
    seen
}

/// Every approval token of a decision: what the API must never show.
async fn approval_tokens(srv: &TestServer, id: &str) -> Vec<String> {
    let id = uuid::Uuid::parse_str(id).unwrap();
    let d = srv.svc.store().decision(None, id).await.unwrap().unwrap();
    let people = srv.svc.store().people(d.inbox_id).await.unwrap();
    assert!(!people.is_empty(), "the inbox has its own person");
    people
        .iter()
        .flat_map(|p| PersonChannel::ALL.map(|c| srv.svc.tokens().approve_token(id, c, p.id)))
        .collect()
}

fn assert_reveals_none(seen: &[(String, String)], tokens: &[String]) {
    for (what, body) in seen {
        for token in tokens {
            assert!(
                !body.contains(token.as_str()),
                "{what} reveals an approval token: {body}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_key_neither_learns_nor_uses_the_answer_to_its_approval() {
    let (db, srv) = fresh_server().await;
    let dir = Dir::new();
    let hook = start_hook(&dir, &srv, "s-1", "rm -rf ~/", 60).await;
    let d = srv.pending_asking("rm -rf ~/").await;
    let id = d["decision_id"].as_str().unwrap().to_string();
    let web_url = d["web_url"].as_str().unwrap().to_string();

    // The person's side shows the approval token: the feed links the approval with it.
    let (feed, cookie) = open_feed(&srv).await;
    let links = approval_links(&feed);
    assert_eq!(links.len(), 1, "{feed}");
    let person_link = srv.url(&links[0]);
    let person_token = links[0].trim_start_matches("/a/").to_string();
    let feed_token = srv.svc.tokens().feed_token(srv.default_inbox().await.id);
    assert!(
        !feed.contains(&feed_token),
        "the feed never carries its own link: {feed}"
    );
    let mut tokens = approval_tokens(&srv, &id).await;
    assert!(tokens.contains(&person_token));
    tokens.push(person_token.clone());

    // Nothing the key reaches shows it.
    let seen = what_the_agent_reads(&srv, &dir, &id).await;
    assert!(seen.len() > 20);
    assert_reveals_none(&seen, &tokens);
    // Nor the inbox's feed link, which would lead to it.
    assert_reveals_none(&seen, &[feed_token]);

    // The web_url only shows the call; posting to it is refused and changes nothing.
    let page = srv.client.get(&web_url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("id=\"elsewhere\""), "{html}");
    assert!(!html.contains("<form"), "{html}");
    assert_reveals_none(&[("web_url page".into(), html)], &tokens);
    let (status, body) = send(srv.client.post(&web_url).json(&json!({"value": "Allow"}))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "answer_elsewhere");
    let form = Client::new()
        .post(&web_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("value=Allow+for+this+session")
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), StatusCode::FORBIDDEN);
    // The answer token does not open the approval's own path either, nor a guess at it.
    let answer_token = web_url.rsplit('/').next().unwrap();
    let (status, _) = send(
        srv.client
            .post(srv.url(&format!("/a/{answer_token}")))
            .json(&json!({"value": "Allow"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let after = srv.get(&id).await;
    assert_eq!(after["status"], "pending");
    assert_eq!(after["answered_by"], Value::Null);
    let (_, events) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/events"))).await;
    assert!(
        events["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["kind"] != "answered"),
        "{events}"
    );

    // The person denies from the feed's link, on the bound device: one tap.
    let resp = srv
        .client
        .post(&person_link)
        .header("cookie", &cookie)
        .json(&json!({"value": "Deny", "remark": "not my home directory"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let (out, _) = finish_hook(hook).await;
    assert_eq!(permission(&out), "deny", "{out}");
    let answered = srv.get(&id).await;
    assert_eq!(answered["answered_by"]["channel"], "feed");
    assert!(
        answered["answered_by"]["device_id"].is_string(),
        "{answered}"
    );
    // The resolved decision, as the key reads it now, still shows no approval token.
    assert_reveals_none(&what_the_agent_reads(&srv, &dir, &id).await, &tokens);
    // The operator's export has none either (tokens are derived, never stored).
    let out = Command::new(crate::run::BIN)
        .args(["export", "--inbox", "default"])
        .env("SAYSO_DATABASE_URL", &db.url)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let export = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(export.contains(&id));
    assert_reveals_none(&[("sayso export".into(), export)], &tokens);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_of_an_approval_carries_no_answer_capability() {
    let (_db, srv) = fresh_notifying_server().await;
    let hooked = Receiver::start(Reply::Text).await;
    let h = srv
        .create(json!({
            "question": "Claude Code wants to run: make deploy", "kind": "choose",
            "options": ["Allow", "Deny"], "allow_other": false,
            "callback_url": format!("{}/hook", hooked.base),
            "approval": {"harness": "claude", "tool_name": "Bash",
                "tool_input": {"command": "make deploy"}}
        }))
        .await;
    let id = h["decision_id"].as_str().unwrap();
    let tokens = approval_tokens(&srv, id).await;
    assert_reveals_none(&[("create".into(), h.to_string())], &tokens);
    srv.answer_ok(h["web_url"].as_str().unwrap(), json!({"value": "Allow"}))
        .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while hooked.requests().is_empty() {
        assert!(Instant::now() < deadline, "no webhook");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let body = String::from_utf8_lossy(&hooked.requests()[0].body).to_string();
    assert!(body.contains("\"answered_by\""), "{body}");
    assert_reveals_none(&[("webhook".into(), body)], &tokens);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_session_allowance_lets_nothing_through() {
    let (_db, srv) = fresh_server().await;
    let dir = Dir::new();
    let session = "s-planted";

    // The agent runs the hook itself for something harmless and tries to answer it.
    let hook = start_hook(&dir, &srv, session, "echo harmless", 3).await;
    let d = srv.pending_asking("echo harmless").await;
    let (status, _) = send(
        srv.client
            .post(d["web_url"].as_str().unwrap())
            .json(&json!({"value": "Allow for this session"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (out, stderr) = finish_hook(hook).await;
    assert_eq!(permission(&out), "deny", "{out}");
    // A timeout's reason carries no capability: no link, no token.
    let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("the question is withdrawn"), "{reason}");
    for text in [reason, stderr.as_str()] {
        assert!(!text.contains("http"), "{text}");
        assert!(!text.contains("/d/") && !text.contains("/a/"), "{text}");
    }

    // A look-alike question: the hook's metadata, the session's label, answered by the
    // agent through its own link.
    let hook_meta = d["metadata"].clone();
    let look_alike = srv
        .create(json!({
            "question": d["question"], "kind": "choose", "project": d["project"],
            "options": ["Allow", "Deny", "Allow for this session"], "allow_other": false,
            "metadata": hook_meta,
        }))
        .await;
    let (status, body) = send(
        srv.client
            .post(look_alike["web_url"].as_str().unwrap())
            .json(&json!({"value": "Allow for this session"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let planted = srv.get(look_alike["decision_id"].as_str().unwrap()).await;
    assert_eq!(planted["answered_by"]["channel"], "link");
    // A look-alike approval of its own: refused like the hook's.
    let mut approval = json!({
        "question": d["question"], "kind": "choose", "project": d["project"],
        "options": ["Allow", "Deny", "Allow for this session"], "allow_other": false,
        "metadata": hook_meta,
        "approval": {"harness": "claude", "tool_name": "Bash",
            "tool_input": {"command": "echo harmless"}, "session_id": session},
    });
    let own = srv.create(approval.clone()).await;
    let (status, _) = send(
        srv.client
            .post(own["web_url"].as_str().unwrap())
            .json(&json!({"value": "Allow for this session"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // The session's next real call is put to the person, not let through.
    let hook = start_hook(&dir, &srv, session, "rm -rf ~/", 2).await;
    let real = srv.pending_asking("rm -rf ~/").await;
    assert_eq!(real["status"], "pending");
    let (out, _) = finish_hook(hook).await;
    assert_eq!(permission(&out), "deny", "{out}");

    // The control: the person's own "Allow for this session", from the feed, does count.
    approval["approval"]["session_id"] = json!("s-person");
    approval["metadata"]["hook"]["session_id"] = json!("s-person");
    let allowed = srv.create(approval).await;
    srv.answer_ok(
        allowed["web_url"].as_str().unwrap(),
        json!({"value": "Allow for this session"}),
    )
    .await;
    let hook = start_hook(&dir, &srv, "s-person", "ls", 5).await;
    let (out, _) = finish_hook(hook).await;
    assert_eq!(permission(&out), "allow", "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_allows_in_one_tap_from_an_ntfy_button() {
    let (_db, srv) = fresh_notifying_server().await;
    let ntfy = srv.ntfy_phone().await;
    let dir = Dir::new();
    let hook = start_hook(&dir, &srv, "s-ntfy", "make release", 60).await;
    let d = srv.pending_asking("make release").await;
    let published = ntfy.first_json(Duration::from_secs(20)).await;
    let allow = &published["actions"][0];
    assert_eq!(allow["label"], "Allow");
    let url = allow["url"].as_str().unwrap();
    assert_ne!(url, d["web_url"].as_str().unwrap());
    assert_eq!(published["click"].as_str(), Some(url));
    // The button as ntfy presses it.
    let mut press = srv.client.request(Method::POST, url);
    for (k, v) in allow["headers"].as_object().unwrap() {
        press = press.header(k.as_str(), v.as_str().unwrap());
    }
    let resp = press
        .body(allow["body"].as_str().unwrap().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let (out, _) = finish_hook(hook).await;
    assert_eq!(permission(&out), "allow", "{out}");
    let answered = srv.get(d["decision_id"].as_str().unwrap()).await;
    assert_eq!(answered["answered_by"]["channel"], "ntfy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_allows_in_one_tap_from_the_feed_on_a_phone() {
    let Some(b) = crate::common::browser::Browser::start().await else {
        return;
    };
    let (_db, srv) = fresh_server().await;
    let dir = Dir::new();
    let hook = start_hook(&dir, &srv, "s-phone", "make deploy", 60).await;
    let d = srv.pending_asking("make deploy").await;

    // The feed link binds the phone; afterwards /inbox is the feed, without the link.
    b.goto(&srv.feed_url().await).await;
    b.goto(&srv.url("/inbox")).await;
    assert!(b.has("section#pending a[href^=\"/a/\"]").await);
    crate::checks::assert_fit_for_a_phone(&b, "feed").await;
    b.click_and_wait("section#pending a[href^=\"/a/\"]").await;
    crate::checks::assert_fit_for_a_phone(&b, "approval from the feed").await;
    b.click_and_wait("#allow").await;
    assert_eq!(crate::checks::result_status(&b).await, "allowed");

    let (out, _) = finish_hook(hook).await;
    assert_eq!(permission(&out), "allow", "{out}");
    let answered = srv.get(d["decision_id"].as_str().unwrap()).await;
    assert_eq!(answered["answered_by"]["channel"], "feed");
    assert!(
        answered["answered_by"]["device_id"].is_string(),
        "the bound phone is recorded: {answered}"
    );
    b.close().await;
}
