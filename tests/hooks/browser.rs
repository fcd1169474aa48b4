//! The approval page in a real Chromium at phone width: it fits, every button is a tap
//! target of at least 44 px, and a reason typed with Deny reaches the waiting hook.

use serde_json::json;

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::browser::Browser;
use crate::run::{claude_call, finish, pending_decision, server, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_denies_with_a_reason_and_the_hook_hears_it() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let (_db, srv) = server().await;
    let command = "cd build && rm -rf \"out dir\" ./artifacts/payments-reconciliation-nightly-eu-west-1 > /dev/null";
    let (_dir, cmd, input) = claude_call(&srv, "PreToolUse", "phone-1", command);
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(&srv).await;

    // The person's way in: the approval's feed link (its web_url only shows it).
    b.goto(&srv.person_url(d["web_url"].as_str().unwrap()).await)
        .await;
    b.screenshot("approval-page").await;
    assert_fit_for_a_phone(&b, "approval").await;
    for id in ["#allow", "#allow-session", "#deny", "#command", "#remark"] {
        assert!(b.has(id).await, "{id} missing");
    }
    b.type_into("#remark", "keep the artifacts until Monday")
        .await;
    b.click_and_wait("#deny").await;
    assert_eq!(result_status(&b).await, "denied");
    assert_fit_for_a_phone(&b, "denied approval").await;

    let out = finish(child, started).await;
    assert_eq!(
        out.stdout,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "The person denied this on sayso: keep the artifacts until Monday"}})
    );
    b.close().await;
}
