//! "Allow for 15 min" (and for an hour, until tomorrow 09:00): the person's Allow that
//! stands for a while. The next call of exactly its kind runs without asking, and the hook
//! says a standing allowance let it through; a call of another tool, another rule, a rule
//! that wants a passkey or more people is still asked; an agent's key cannot make one;
//! a revoked or ended one lets nothing through.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::forms::{form, no_redirects};
use crate::common::people::feed_link;
use crate::common::server::{TestServer, s, send};
use crate::run::{Ended, Project, finish, pending_decision, run, run_answered, server, start};

/// A step-up rule for pushes, an ask rule of its own for deploys, two people for releases;
/// everything else falls to the default (ask).
const POLICY: &str = r#"{"rules": [
    {"tool": "Bash", "command": "git push*", "decision": "ask", "step_up": "passkey"},
    {"tool": "Bash", "command": "make deploy*", "decision": "ask"},
    {"tool": "Bash", "command": "make release*", "decision": "ask",
     "approvers": ["ana", "ben"], "required": 2}
]}"#;

/// What these tests ask of a project besides its Bash calls.
impl Project {
    fn write(&self, session: &str) -> String {
        let mut v: Value = serde_json::from_str(&self.bash(session, "")).unwrap();
        v["tool_name"] = json!("Write");
        v["tool_input"] = json!({"file_path": format!("{}/notes.md", self.cwd),
                                 "content": "hello\n"});
        v.to_string()
    }

    /// Runs `command` through the hook; the person answers Allow with `allow_for` from
    /// their feed link.
    async fn allow_for(&self, srv: &TestServer, command: &str, allow_for: &str) -> Value {
        let (out, d) = run_answered(
            srv,
            self.hook(srv),
            &self.bash("sess-1", command),
            json!({"value": "Allow", "allow_for": allow_for}),
        )
        .await;
        assert_eq!(decision_of(&out), "allow", "{out:?}");
        d
    }
}

fn s_starts(v: &Value, prefix: &str) -> bool {
    v.as_str().is_some_and(|t| t.starts_with(prefix))
}

fn decision_of(out: &Ended) -> &str {
    out.stdout["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or_default()
}

fn reason_of(out: &Ended) -> &str {
    out.stdout["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default()
}

async fn decision_count(srv: &TestServer) -> usize {
    let (_, page) = send(srv.req(Method::GET, "/v1/decisions?limit=200")).await;
    page["items"].as_array().unwrap().len()
}

/// Runs `input`; it must reach the person as a new question, which they deny.
async fn must_be_asked(srv: &TestServer, p: &Project, input: &str) -> Value {
    let (child, started) = start(p.hook(srv), input).await;
    let d = pending_decision(srv).await;
    srv.answer_ok(d["web_url"].as_str().unwrap(), json!({"value": "Deny"}))
        .await;
    let out = finish(child, started).await;
    assert_eq!(decision_of(&out), "deny", "{input}: {out:?}");
    d
}

/// Runs `input`; it must pass on the standing allowance, asking nobody.
async fn passes_standing(srv: &TestServer, p: &Project, input: &str) -> Ended {
    let before = decision_count(srv).await;
    let out = run(p.hook(srv), input).await;
    assert_eq!(decision_of(&out), "allow", "{out:?}");
    assert_eq!(
        decision_count(srv).await,
        before,
        "nobody was asked: {out:?}"
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_15_minute_allowance_lets_the_next_call_of_its_kind_through() {
    let (_db, srv) = server().await;
    let p = Project::with_policy(POLICY);
    p.allow_for(&srv, "ls -la", "15m").await;

    // Another command of the same tool, in another session of the same project.
    let out = passes_standing(&srv, &p, &p.bash("sess-2", "cat README.md")).await;
    let reason = reason_of(&out);
    assert!(
        reason.contains("standing allowance") && reason.contains("default allowed Bash until "),
        "{reason}"
    );
    assert!(reason.contains(" UTC"), "{reason}");

    // Recorded before it ran: the call as the hook read it, under its allowance.
    let (_, page) = send(srv.req(Method::GET, "/v1/allowances")).await;
    let a = &page["items"][0];
    assert_eq!(a["uses"], 1, "{page}");
    let (status, used) = send(srv.req(
        Method::GET,
        &format!("/v1/allowances/{}/uses", a["id"].as_str().unwrap()),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{used}");
    let call = &used["items"][0]["call"];
    assert_eq!(call["harness"], "claude", "{used}");
    assert_eq!(call["tool_name"], "Bash", "{used}");
    assert_eq!(call["tool_input"]["command"], "cat README.md", "{used}");
    assert_eq!(call["tool_input"]["description"], "Remove the build output");
    assert_eq!(call["cwd"], p.cwd.as_str(), "{used}");
    assert_eq!(call["project"], a["scope"]["project"], "{used}");
    assert_eq!(call["rule"], Value::Null, "{used}");
    assert_eq!(call["session_id"], "sess-2", "{used}");
    assert!(s_starts(&call["tool_use_id"], "toolu_"), "{used}");
    assert_eq!(used["items"][0]["decision_id"], a["decision_id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowance_covers_no_other_tool_rule_passkey_or_people() {
    let (_db, srv) = server().await;
    let ana = srv.add_person("ana").await;
    srv.add_person("ben").await;
    let p = Project::with_policy(POLICY);
    p.allow_for(&srv, "ls -la", "60m").await;

    // Another tool.
    must_be_asked(&srv, &p, &p.write("sess-1")).await;
    // A call a rule of its own gates.
    must_be_asked(&srv, &p, &p.bash("sess-1", "make deploy-prod")).await;
    // A rule that wants a passkey: asked, and offered no allowance.
    let d = must_be_asked(&srv, &p, &p.bash("sess-1", "git push origin main")).await;
    assert_eq!(d["step_up"], "passkey", "{d}");

    // A rule of two: asked, and ana's Deny is a veto whatever stands.
    let (child, started) = start(p.hook(&srv), &p.bash("sess-1", "make release")).await;
    let d = pending_decision(&srv).await;
    assert_eq!(d["routing"]["required"], 2, "{d}");
    let url = feed_link(&srv, s(&d, "decision_id"), ana.id).await;
    let (status, body) = send(
        srv.client
            .post(&url)
            .json(&json!({"value": "Allow", "allow_for": "15m"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = send(srv.client.post(&url).json(&json!({"value": "Deny"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let out = finish(child, started).await;
    assert_eq!(decision_of(&out), "deny", "{out:?}");

    // An allowance under the deploys' rule covers that rule's calls, and nothing else.
    p.allow_for(&srv, "make deploy-staging", "15m").await;
    passes_standing(&srv, &p, &p.bash("sess-3", "make deploy-qa")).await;
    must_be_asked(&srv, &p, &p.bash("sess-3", "git push")).await;
    let (_, page) = send(srv.req(Method::GET, "/v1/allowances")).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2, "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_key_cannot_plant_an_allowance() {
    let (_db, srv) = server().await;
    let p = Project::with_policy(POLICY);
    // The agent answers its own approval through the link every API response shows.
    let (child, started) = start(p.hook(&srv), &p.bash("sess-1", "ls")).await;
    let d = pending_decision(&srv).await;
    let (status, body) = send(
        srv.client
            .post(d["web_url"].as_str().unwrap())
            .json(&json!({"value": "Allow", "allow_for": "morning"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _) = send(
        srv.req(Method::POST, "/v1/allowances")
            .json(&json!({"harness": "claude", "tool_name": "Bash"})),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    // The person denies; nothing stands.
    srv.answer_ok(d["web_url"].as_str().unwrap(), json!({"value": "Deny"}))
        .await;
    assert_eq!(decision_of(&finish(child, started).await), "deny");
    must_be_asked(&srv, &p, &p.bash("sess-1", "ls")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_allowance_lets_nothing_through() {
    let (_db, srv) = server().await;
    let p = Project::with_policy(POLICY);
    p.allow_for(&srv, "ls -la", "15m").await;
    passes_standing(&srv, &p, &p.bash("sess-1", "pwd")).await;
    let (status, body) = send(srv.req(Method::DELETE, "/v1/allowances")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["revoked"], 1);
    must_be_asked(&srv, &p, &p.bash("sess-1", "pwd")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_allowance_lets_nothing_through() {
    let (_db, srv) = server().await;
    let p = Project::with_policy(POLICY);
    let d = p.allow_for(&srv, "ls -la", "15m").await;
    // Made short: the allowance the person gave, ending two seconds from now (the store
    // keeps the first one made from a decision, so it is replaced by revoking it first).
    let store = srv.svc.store();
    let inbox = srv.default_inbox().await.id;
    let mut a = store
        .allowances(inbox, None, sayso::service::now())
        .await
        .unwrap()[0]
        .clone();
    assert_eq!(
        a.decision_id.to_string(),
        d["decision_id"].as_str().unwrap()
    );
    store.revoke_allowances(inbox, Some(a.id)).await.unwrap();
    a.until = sayso::service::now() + time::Duration::seconds(2);
    store.add_allowance(&a).await.unwrap();
    passes_standing(&srv, &p, &p.bash("sess-1", "pwd")).await;
    let wait = a.until - sayso::service::now() + time::Duration::milliseconds(50);
    tokio::time::sleep(wait.try_into().unwrap_or_default()).await;
    must_be_asked(&srv, &p, &p.bash("sess-1", "pwd")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_shows_what_stands_until_when_and_revokes_it() {
    let (_db, srv) = server().await;
    let p = Project::with_policy(POLICY);
    let feed = srv.feed_url().await;
    let (resp, cookie) = crate::common::server::open_feed(&feed).await;
    let cookie = cookie.expect("the feed link binds the browser");
    let html = resp.text().await.unwrap();
    assert!(!html.contains("id=\"allowances\""), "nothing stands yet");

    p.allow_for(&srv, "ls -la", "60m").await;
    let (_, page) = send(srv.req(Method::GET, "/v1/allowances")).await;
    let id = page["items"][0]["id"].as_str().unwrap().to_string();
    let html = no_redirects()
        .get(srv.url("/inbox"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("id=\"allowances\""), "{html}");
    assert!(html.contains("Allowed for a while"), "{html}");
    assert!(
        html.contains("Every Bash call no policy rule asks about, in the project folder "),
        "{html}"
    );
    assert!(html.contains("Bash allowed until "), "{html}");
    assert!(html.contains("no call ran without you yet"), "{html}");
    assert!(html.contains("Allowed by default"), "{html}");
    let revoke = format!("/inbox/allowances/{id}/revoke");
    assert!(html.contains(&revoke), "{html}");

    // Without the device's cookie, or from another site, nothing is revoked.
    let post = |cookie: Option<&str>, site: &str| {
        let mut req = form(srv.url(&revoke), "").header("sec-fetch-site", site);
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        req.send()
    };
    let resp = post(None, "same-origin").await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = post(Some(&cookie), "cross-site").await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let (_, page) = send(srv.req(Method::GET, "/v1/allowances")).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 1);

    let resp = post(Some(&cookie), "same-origin").await.unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/inbox");
    let (_, page) = send(srv.req(Method::GET, "/v1/allowances")).await;
    assert_eq!(page["items"], json!([]));
    must_be_asked(&srv, &p, &p.bash("sess-1", "pwd")).await;
}

/// Whether `css`'s element lies wholly inside the viewport (no scrolling needed to tap it).
async fn on_screen(b: &crate::common::browser::Browser, css: &str) -> bool {
    b.js(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();
         return r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight
             && r.right <= document.documentElement.clientWidth;",
        vec![json!(css)],
    )
    .await
    .as_bool()
    .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_deny_stays_beside_allow_and_15_min_is_one_tap() {
    use crate::checks::{assert_fit_for_a_phone, result_status};
    let Some(b) = crate::common::browser::Browser::start().await else {
        return;
    };
    let (_db, srv) = server().await;
    let p = Project::with_policy(POLICY);
    let (child, started) = start(
        p.hook(&srv),
        &p.bash("phone-1", "npm test -- --watch=false"),
    )
    .await;
    let d = pending_decision(&srv).await;
    b.goto(&srv.person_url(d["web_url"].as_str().unwrap()).await)
        .await;
    b.screenshot("approval-allow-for-a-while").await;
    assert_fit_for_a_phone(&b, "approval with timed answers").await;
    for id in [
        "#allow-for-15m",
        "#allow-for-60m",
        "#allow-for-morning",
        "#timed-note",
    ] {
        assert!(b.has(id).await, "{id} missing");
    }
    // With the extra answers on the page, Deny and Allow are still on screen at once.
    assert!(on_screen(&b, "#deny").await && on_screen(&b, "#allow").await);
    let label = b.text_of("#allow-for-morning").await;
    assert!(label.starts_with("Until tomorrow 09:00 "), "{label}");

    // Scrolled to, as a thumb does: the bar of Deny and Allow stays over the bottom.
    b.js(
        "document.querySelector('#timed').scrollIntoView({block: 'center'}); return null",
        vec![],
    )
    .await;
    b.screenshot("approval-allow-for-a-while-scrolled").await;
    assert!(on_screen(&b, "#allow-for-15m").await && on_screen(&b, "#deny").await);
    b.click_and_wait("#allow-for-15m").await;
    assert_eq!(result_status(&b).await, "allowed");
    let out = finish(child, started).await;
    assert_eq!(decision_of(&out), "allow", "{out:?}");

    // The page says what now runs without asking, where, and until when, with Revoke.
    let approval_page = b.path().await;
    let scroll_to = |css: &'static str| {
        b.js(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'start'}); return null",
            vec![json!(css)],
        )
    };
    scroll_to("#allowed").await;
    b.screenshot("approval-allowed-until").await;
    assert_fit_for_a_phone(&b, "the allowance an Allow for 15 min made").await;
    assert_eq!(
        b.attr_of("#allowed", "data-state").await.as_deref(),
        Some("live")
    );
    let heading = b.text_of("#allowed-heading").await;
    assert!(
        heading.starts_with("Allowed for 15 min, until "),
        "{heading}"
    );
    let what = b.text_of("#allowed-what").await;
    assert!(
        what.starts_with("Every Bash call no policy rule asks about, in the project folder /")
            && what.ends_with(", in any Claude Code session."),
        "{what}"
    );
    assert!(on_screen(&b, "#revoke").await);

    // A call runs on it; the feed groups it under its allowance.
    passes_standing(&srv, &p, &p.bash("phone-2", "npm run lint")).await;
    b.goto(&srv.feed_url().await).await;
    let summary = b.text_of("#allowances summary").await;
    assert!(
        summary.starts_with("Bash allowed until ")
            && summary.ends_with(" · 1 call ran without you"),
        "{summary}"
    );
    b.click("#allowances summary").await;
    scroll_to("#allowances").await;
    b.screenshot("feed-allowed-for-a-while").await;
    assert_fit_for_a_phone(&b, "feed with an allowance and its calls").await;
    let ran = b.text_of("#allowances .uses li").await;
    assert!(ran.contains("npm run lint"), "{ran}");

    // Revoked from the approval's own page: it says so, and the feed no longer lists it.
    b.goto(&srv.url(&approval_page)).await;
    let uses = b.text_of("#allowed-uses").await;
    assert_eq!(uses, "1 call ran without you");
    b.click_and_wait("#revoke").await;
    assert_eq!(
        b.attr_of("#allowed", "data-state").await.as_deref(),
        Some("revoked")
    );
    assert_eq!(b.text_of("#allowed-heading").await, "Revoked");
    assert!(!b.has("#revoke").await);
    scroll_to("#allowed").await;
    b.screenshot("approval-allowance-revoked").await;
    must_be_asked(&srv, &p, &p.bash("phone-3", "npm run lint")).await;
    b.goto(&srv.feed_url().await).await;
    assert!(!b.has("#allowances").await, "revoked from its page");
    b.close().await;
}
