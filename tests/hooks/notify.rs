//! Answering from the notification: ntfy's Allow / Deny buttons post to the answer link
//! (a GET of it only shows), and the approval mail's links lead to a page that confirms.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::forms::page_form;
use crate::common::server::{TestServer, fresh_notifying_server};
use crate::common::smtp::mailing_server;
use crate::run::claude_input;
use crate::run::{Dir, claude_call, finish, hook_command, pending_decision, start};
use sayso::domain::PersonChannel;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ntfy_deny_button_answers_the_hook() {
    let (_db, srv) = fresh_notifying_server().await;
    let ntfy = srv.ntfy_phone().await;
    let (_dir, cmd, input) = claude_call(&srv, "PreToolUse", "s-n", "git push --force");
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(&srv).await;
    let web_url = d["web_url"].as_str().unwrap();

    let published = ntfy.first_json(Duration::from_secs(20)).await;
    assert_eq!(
        crate::common::question_and_expiry(&published["message"]).0,
        "Claude Code wants to run a Bash command:\ngit push --force\n\
         ⚠ Force-pushes: can overwrite commits others pushed\n\
         The agent says: Remove the build output\n\
         timeout: 120000\nrun_in_background: false"
    );
    let actions = published["actions"].as_array().unwrap();
    let labels: Vec<&str> = actions
        .iter()
        .map(|a| a["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Allow", "Deny"]);
    let deny = &actions[1];
    // The button answers through the approval's ntfy link, never the web_url an agent holds.
    let ntfy_url = srv.person_url_via(web_url, PersonChannel::Ntfy).await;
    assert_eq!(deny["url"], ntfy_url.as_str());
    assert_ne!(deny["url"], web_url);
    assert_eq!(deny["method"], "POST");

    // A GET of the button's URL (a link preview) decides nothing.
    let (status, _) = crate::common::server::send(srv.client.get(&ntfy_url)).await;
    assert_eq!(status, 200);
    let id = d["decision_id"].as_str().unwrap();
    assert_eq!(srv.get(id).await["status"], "pending");

    // The button as ntfy presses it: its method, headers and body.
    let mut press = srv
        .client
        .request(Method::POST, deny["url"].as_str().unwrap());
    for (k, v) in deny["headers"].as_object().unwrap() {
        press = press.header(k.as_str(), v.as_str().unwrap());
    }
    let resp = press
        .body(deny["body"].as_str().unwrap().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let out = finish(child, started).await;
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "The person denied this on sayso."}})
    );
    // The record says it came from ntfy.
    assert_eq!(srv.get(id).await["answered_by"]["channel"], "ntfy");
    // Single use: the same button again is refused.
    let mut again = srv.client.request(Method::POST, &ntfy_url);
    again = again.header("content-type", "application/json");
    let resp = again
        .body(deny["body"].as_str().unwrap().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approval_mail_links_lead_to_a_page_that_confirms() {
    let Some((smtp, _db, srv)) = mailing_server("me@example.com").await else {
        return;
    };
    let (_dir, mut cmd, input) = claude_call(&srv, "PreToolUse", "s-m", "make release");
    cmd.env("SAYSO_HOOK_NOTIFY", "email");
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(&srv).await;
    let web_url = d["web_url"].as_str().unwrap().to_string();
    // The mail carries the approval's mail link, not the web_url an agent holds.
    let mail_url = srv.person_url_via(&web_url, PersonChannel::Email).await;
    assert_ne!(mail_url, web_url);

    let mail = smtp.wait_for(1).await.remove(0);
    let text = mail.part("text/plain").expect("a text part");
    let allow_link = format!("{mail_url}?confirm=Allow");
    assert!(text.contains(&allow_link), "{text}");
    assert!(text.contains(&format!("{mail_url}?confirm=Deny")), "{text}");
    assert!(mail.part("text/html").unwrap().contains("?confirm=Allow"));

    // The link shows the one button; opening it decides nothing.
    let html = srv.page_text(&allow_link).await;
    assert!(
        html.contains("Confirm from the notification: <strong>Allow</strong>?"),
        "{html}"
    );
    assert!(html.contains("id=\"confirm\""), "{html}");
    assert!(
        !html.contains("value=\"Deny\""),
        "only the confirmed answer: {html}"
    );
    assert_eq!(
        srv.get(d["decision_id"].as_str().unwrap()).await["status"],
        "pending"
    );

    let resp = page_form(&mail_url, "value=Allow").send().await.unwrap();
    assert_eq!(resp.status(), 303);
    let out = finish(child, started).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out:?}"
    );
}

/// The Web Push notice the worker would send for the ask of the decision `body` creates,
/// through the inbox's own person's push link; with that link.
pub async fn push_notice_for(
    srv: &TestServer,
    body: Value,
) -> (sayso::notify::push::PushNotice, String) {
    use sayso::courier::Delivering;
    use sayso::domain::inbox::InboxChannels;
    use sayso::domain::outbox::{Purpose, Route};
    use sayso::notify::push::PushNotice;
    use time::OffsetDateTime;
    use uuid::Uuid;

    let h = srv.create(body).await;
    let id = Uuid::parse_str(h["decision_id"].as_str().unwrap()).unwrap();
    let d = srv.svc.store().decision(None, id).await.unwrap().unwrap();
    let view = srv.svc.view(&d).await.unwrap();
    let inbox = srv
        .svc
        .store()
        .inbox_by_id(d.inbox_id)
        .await
        .unwrap()
        .unwrap();
    let now = OffsetDateTime::now_utc();
    let msg = crate::common::outbox::first_try(d.id, Route::Push, Purpose::Ask, now, d.expires_at);
    // What the worker hands the push channel: the approval's push link.
    let person = srv.svc.store().person(d.inbox_id).await.unwrap().unwrap();
    let web_url = srv.svc.person_url(&d, PersonChannel::Push, person.id);
    assert_ne!(web_url, srv.svc.web_url(&d));
    let notice = PushNotice::for_delivery(
        &Delivering {
            message: &msg,
            decision: &d,
            view: &view,
            inbox: &inbox,
            person: Some(&person),
            channels: &InboxChannels::default(),
            zone: &sayso::render::Zone::utc(),
            web_url: &web_url,
            public_url: &srv.base,
            outbox: &srv.svc.outbox(),
        },
        now,
    )
    .unwrap();
    (notice, web_url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_push_of_an_approval_carries_its_two_buttons() {
    let (_db, srv) = crate::run::server().await;
    let (notice, web_url) = push_notice_for(
        &srv,
        json!({
            "question": "Claude Code wants to run: make deploy", "kind": "choose",
            "options": ["Allow", "Deny"], "allow_other": false,
            "approval": {"harness": "claude", "tool_name": "Bash",
                "tool_input": {"command": "make deploy"}}
        }),
    )
    .await;
    assert_eq!(notice.payload["answers"], json!(["Allow", "Deny"]));
    assert_eq!(notice.payload["url"], web_url.as_str());
    // The service worker shows them as actions (buttons that open the page first, when the
    // approval needs a passkey) and posts the one tapped.
    let (status, sw) = {
        let resp = srv.client.get(srv.url("/sw.js")).send().await.unwrap();
        (resp.status(), resp.text().await.unwrap())
    };
    assert_eq!(status, 200);
    assert!(
        sw.contains("actions: opens.concat(answers).map") && sw.contains("answerFromNotification")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_one_sessions_approvals_rings_once() {
    let (_db, srv) = fresh_notifying_server().await;
    let ntfy = srv.ntfy_phone().await;
    let dir = Dir::new();
    let cwd = dir.path().display().to_string();
    let mut running = Vec::new();
    for command in ["make a", "make b", "make c"] {
        let input = claude_input("PreToolUse", &cwd, "burst", command);
        let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
        running.push(start(cmd, &input).await);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // Past the gather window of the last one, and a little more.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let asks: Vec<Value> = ntfy.requests().iter().map(|r| r.json()).collect();
    assert_eq!(asks.len(), 1, "one notification for the burst: {asks:?}");
    assert_eq!(
        crate::common::question_and_expiry(&asks[0]["message"]).0,
        "Claude Code wants to run a Bash command:\nmake c\nThe agent says: Remove the build output\n\
         timeout: 120000\nrun_in_background: false\n2 more from this session are waiting."
    );
    assert!(
        asks[0].get("actions").is_none(),
        "no buttons on a gathered one"
    );

    let (_, page) =
        crate::common::server::send(srv.req(Method::GET, "/v1/decisions?status=pending")).await;
    let pending = page["items"].as_array().unwrap();
    assert_eq!(pending.len(), 3);
    for d in pending {
        let ntfy_state = d["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["channel"] == "ntfy")
            .unwrap()
            .clone();
        if d["question"] == "Claude Code wants to run: make c" {
            assert_eq!(ntfy_state["status"], "sent", "{ntfy_state}");
        } else {
            assert_eq!(ntfy_state["status"], "skipped", "{ntfy_state}");
            assert!(
                ntfy_state["detail"].as_str().unwrap().contains("gathered"),
                "{ntfy_state}"
            );
        }
        srv.answer(d["web_url"].as_str().unwrap(), json!({"value": "Allow"}))
            .await;
    }
    for (child, started) in running {
        let out = finish(child, started).await;
        assert_eq!(
            out.stdout["hookSpecificOutput"]["permissionDecision"], "allow",
            "{out:?}"
        );
    }
}
