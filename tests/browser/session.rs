//! Many approvals at once, at phone width: the feed gathers an agent session's pending calls
//! under one link; the session page shows each call in full with its own Deny and Allow
//! side by side, answers one call with one tap, and offers "Allow all" only where every call
//! may be allowed there. And a command edited on the approval page is shown against the
//! agent's as the person types.

use serde_json::{Value, json};

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::server::{TestServer, s};
use crate::support::{awaited, feed_url, setup};

/// An approval of the Claude Code session `session`, as `sayso hook claude` puts it.
fn call(session: &str, command: &str, step_up: bool) -> Value {
    let mut body = json!({
        "question": format!("Claude Code wants to run: {command}"),
        "kind": "choose",
        "options": ["Allow", "Deny", "Allow for this session"],
        "allow_other": false,
        "project": "shop",
        "approval": {"harness": "claude", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "Part of the release"},
            "cwd": "/home/me/shop", "session_id": session, "editable": true}
    });
    if step_up {
        body["approval"]["step_up"] = json!("passkey");
        body["options"] = json!(["Allow", "Deny"]);
    }
    body
}

async fn status_of(srv: &TestServer, h: &Value) -> String {
    srv.get(s(h, "decision_id")).await["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The page's buttons of one row: Deny's and the other one's boxes.
async fn row_boxes(b: &crate::common::browser::Browser, n: usize) -> Value {
    b.js(
        "const n = arguments[0];
         const box = id => { const el = document.getElementById(id);
             if (!el) return null; const r = el.getBoundingClientRect();
             return [r.left, r.top, r.width, r.height]; };
         return [box('deny-' + n), box('allow-' + n) || box('open-' + n)];",
        vec![json!(n)],
    )
    .await
}

#[tokio::test]
async fn a_sessions_calls_on_one_screen_at_phone_width() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let feed = feed_url(&srv).await;
    let first = srv
        .create(call("sess-release", "cargo build --release", false))
        .await;
    let second = srv
        .create(call(
            "sess-release",
            "git tag v2.3.0 && git push --force origin v2.3.0 main ./docs/release-notes-for-the-payments-team.md",
            false,
        ))
        .await;
    let third = srv
        .create(call("sess-release", "rm -rf target/package", false))
        .await;
    // Another session's call stays out of this screen.
    let other = srv.create(call("sess-other", "ls", false)).await;

    for (w, h) in [(360, 800), (390, 844)] {
        b.resize(w, h).await;
        b.goto(&feed).await;
        let group = b.text_of("#pending li.session-group").await;
        assert!(
            group.contains("cargo build --release")
                && group.contains("rm -rf target/package")
                && group.contains("Answer all 3 calls from Claude Code, session sess-release"),
            "{group}"
        );
        assert!(!group.contains("ls\n"), "{group}");
        assert_fit_for_a_phone(&b, &format!("feed with a session at {w} px")).await;
        b.screenshot(&format!("feed-session-{w}")).await;

        b.click_and_wait("#pending a.session-link").await;
        assert_eq!(b.path().await, "/inbox/session");
        assert_eq!(b.count("article.session-call").await, 3);
        // Each call in full, with what deserves a second look.
        let text = b.text().await;
        assert!(
            text.contains("./docs/release-notes-for-the-payments-team.md")
                && text.contains("Call 2 of 3"),
            "{text}"
        );
        assert!(b.has("#call-2 .dangers").await, "the force push is flagged");
        // Deny as easy as Allow: side by side, Deny first, the same size.
        for n in 1..=3 {
            let boxes = row_boxes(&b, n).await;
            let (deny, allow) = (&boxes[0], &boxes[1]);
            let f = |v: &Value, i: usize| v[i].as_f64().unwrap();
            assert!(f(deny, 0) < f(allow, 0), "Deny first: {boxes}");
            assert!((f(deny, 1) - f(allow, 1)).abs() < 1.0, "one row: {boxes}");
            assert!(
                (f(deny, 2) - f(allow, 2)).abs() < 1.0 && (f(deny, 3) - f(allow, 3)).abs() < 1.0,
                "the same size: {boxes}"
            );
            assert!(f(deny, 3) >= 44.0, "a tap target: {boxes}");
        }
        assert!(b.has("#allow-all").await && b.has("#deny-all").await);
        assert_fit_for_a_phone(&b, &format!("session at {w} px")).await;
        b.screenshot(&format!("session-{w}")).await;
    }

    // One tap answers one call, and the page comes back with the others.
    b.click_and_wait("#allow-1").await;
    assert_eq!(b.path().await, "/inbox/session");
    assert_eq!(awaited(&srv, &first).await["outcome"], "Allow");
    assert_eq!(status_of(&srv, &second).await, "pending");
    assert_eq!(b.count("article.session-call").await, 2);
    b.screenshot("session-after-one").await;

    // Deny all answers exactly the calls shown.
    b.click_and_wait("#deny-all").await;
    assert_eq!(b.path().await, "/inbox");
    assert_eq!(awaited(&srv, &second).await["outcome"], "Deny");
    assert_eq!(awaited(&srv, &third).await["outcome"], "Deny");
    assert_eq!(status_of(&srv, &other).await, "pending");

    // A session with a call that needs the passkey: no "Allow all"; that call is allowed on
    // its own page, Deny stays here.
    let plain = srv.create(call("sess-2", "make test", false)).await;
    let guarded = srv
        .create(call("sess-2", "git push origin main", true))
        .await;
    b.goto(&feed).await;
    b.click_and_wait("#pending a.session-link").await;
    assert!(!b.has("#allow-all").await, "no Allow all past a passkey");
    assert!(b.has("#deny-all").await);
    let not_all = b.text_of("#not-all").await;
    assert!(not_all.contains("Call 2 needs your passkey"), "{not_all}");
    assert!(b.has("#allow-1").await && !b.has("#allow-2").await && b.has("#open-2").await);
    let boxes = row_boxes(&b, 2).await;
    assert!(
        (boxes[0][2].as_f64().unwrap() - boxes[1][2].as_f64().unwrap()).abs() < 1.0,
        "{boxes}"
    );
    assert_fit_for_a_phone(&b, "session with a passkey call").await;
    b.screenshot("session-passkey").await;
    b.click_and_wait("#open-2").await;
    assert!(b.has("#step-up").await, "its own page asks the passkey");
    assert_eq!(status_of(&srv, &plain).await, "pending");
    assert_eq!(status_of(&srv, &guarded).await, "pending");
    b.close().await;
}

#[tokio::test]
async fn an_edit_is_shown_against_the_agents_command_as_it_is_typed() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let h = srv.create(call("sess-edit", "rm -rf build/", false)).await;
    b.goto(&srv.person_url(s(&h, "web_url")).await).await;
    assert!(!b.find("#edit-preview").await.is_displayed().await.unwrap());
    b.click("details.edit summary").await;
    b.find("#command").await.clear().await.unwrap();
    b.type_into("#command", "rm -rf build/cache").await;
    let preview = b.wait_for("#edit-preview:not([hidden])").await;
    let html = preview.html(true).await.unwrap();
    assert!(
        html.contains("<del>build/</del><ins>build/cache</ins>"),
        "{html}"
    );
    assert_fit_for_a_phone(&b, "approval with an edit").await;
    b.screenshot("approval-edit-preview").await;
    b.click_and_wait("#allow").await;
    assert_eq!(result_status(&b).await, "allowed");
    let ran = b.find("#ran-edit").await.html(true).await.unwrap();
    assert!(
        ran.contains("<del>build/</del><ins>build/cache</ins>"),
        "{ran}"
    );
    b.screenshot("approval-edit-allowed").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(d["answers"][0]["edited_command"], "rm -rf build/cache");
    b.close().await;
}
