//! A policy rule that names its approvers: the hook's approval goes to those people, each
//! answers through their own link, and the hook allows only once `required` of them have
//! (any Deny denies at once).

use std::time::Duration;

use reqwest::StatusCode;
use sayso::domain::people::Person;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::common::people::feed_link;
use crate::common::server::{TestServer, s, send};
use crate::run::claude_input;
use crate::run::{Dir, finish, hook_command, pending_decision, run_answered, server, start};

const POLICY: &str = r#"{"rules": [
    {"tool": "Bash", "command": "make deploy*", "decision": "ask",
     "approvers": ["ana", "ben"], "required": 2}
]}"#;

/// `person` answers the decision behind `d` (its JSON) from their feed: `Allow` or `Deny`.
async fn answer_as(srv: &TestServer, d: &Value, person: &Person, value: &str) -> Value {
    let url = feed_link(srv, s(d, "decision_id"), person.id).await;
    let (status, body) = send(
        srv.client
            .post(url)
            .json(&json!({"action": "answer", "value": value})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{} answering: {body}", person.name);
    body
}

/// `sayso hook claude` in `dir`, with `srv`'s key, waiting up to a minute for the people.
fn hook_in(dir: &Dir, srv: &TestServer) -> Command {
    let mut cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    cmd.env("SAYSO_HOOK_TIMEOUT_S", "60");
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_approvers_must_both_allow_and_either_can_deny() {
    let (_db, srv) = server().await;
    let ana = srv.add_person("ana").await;
    let ben = srv.add_person("ben").await;
    let dir = Dir::new();
    dir.write(".sayso/policy.json", POLICY);
    let cwd = dir.path().display().to_string();
    let hook = || hook_in(&dir, &srv);

    // Both allow: the hook waits through ana's Allow and allows on ben's.
    let (mut child, started) = start(
        hook(),
        &claude_input("PreToolUse", &cwd, "s1", "make deploy-prod"),
    )
    .await;
    let d = pending_decision(&srv).await;
    let id = d["decision_id"].as_str().unwrap().to_string();
    assert_eq!(d["routing"]["approvers"], json!(["ana", "ben"]), "{d}");
    assert_eq!(d["routing"]["required"], 2, "{d}");
    // Nobody answers through the web_url, which the agent holds.
    let (status, body) = send(
        srv.client
            .post(d["web_url"].as_str().unwrap())
            .json(&json!({"action": "answer", "value": "Allow"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "answer_elsewhere");

    let after_ana = answer_as(&srv, &d, &ana, "Allow").await;
    assert_eq!(after_ana["status"], "pending", "{after_ana}");
    let now = srv.get(&id).await;
    assert_eq!(now["status"], "pending");
    assert_eq!(now["answers"][0]["person"], "ana", "{now}");
    assert_eq!(now["answers"][0]["value"], "Allow", "{now}");
    assert_eq!(now["progress"], "1 of 2 allowed: ana", "{now}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        child.try_wait().unwrap().is_none(),
        "the hook keeps waiting after one Allow of two"
    );
    // ana again changes nothing: each person counts once.
    answer_as(&srv, &d, &ana, "Allow").await;
    assert_eq!(srv.get(&id).await["status"], "pending");

    answer_as(&srv, &d, &ben, "Allow").await;
    let out = finish(child, started).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out:?}"
    );
    let done = srv.get(&id).await;
    assert_eq!(
        (done["status"].as_str(), done["outcome"].as_str()),
        (Some("answered"), Some("Allow"))
    );
    let who: Vec<&str> = done["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["person"].as_str().unwrap())
        .collect();
    assert_eq!(who, ["ana", "ben"]);

    // ben denies: the hook denies at once, without waiting for ana.
    let (child, started) = start(
        hook(),
        &claude_input("PreToolUse", &cwd, "s2", "make deploy-prod"),
    )
    .await;
    let d = pending_decision(&srv).await;
    assert_ne!(d["decision_id"], id.as_str());
    answer_as(&srv, &d, &ben, "Deny").await;
    let out = finish(child, started).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "deny",
        "{out:?}"
    );
    assert!(out.took < Duration::from_secs(30), "{:?}", out.took);
    let denied = srv.get(d["decision_id"].as_str().unwrap()).await;
    assert_eq!(denied["outcome"], "Deny", "{denied}");
    assert_eq!(denied["answers"][0]["person"], "ben", "{denied}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_persons_allow_for_this_session_does_not_pass_a_rule_of_two() {
    let (_db, srv) = server().await;
    let ana = srv.add_person("ana").await;
    srv.add_person("ben").await;
    let dir = Dir::new();
    dir.write(".sayso/policy.json", POLICY);
    let cwd = dir.path().display().to_string();
    let hook = || hook_in(&dir, &srv);
    // A call no rule names, allowed for the session by the inbox's own person.
    let (out, _) = run_answered(
        &srv,
        hook(),
        &claude_input("PreToolUse", &cwd, "sess", "make build"),
        json!({"value": "Allow for this session"}),
    )
    .await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out:?}"
    );
    // The deploy still goes to ana and ben.
    let (child, started) = start(
        hook(),
        &claude_input("PreToolUse", &cwd, "sess", "make deploy-prod"),
    )
    .await;
    let d = pending_decision(&srv).await;
    assert_eq!(d["routing"]["required"], 2, "{d}");
    answer_as(&srv, &d, &ana, "Deny").await;
    let out = finish(child, started).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "deny",
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_shows_the_rules_approvers_and_a_bad_count_is_named() {
    let dir = Dir::new();
    let policy = dir.write("policy.json", POLICY);
    let cwd = dir.path().display().to_string();
    let explain = || crate::run::explain_command(&dir, &policy);
    let input = claude_input("PreToolUse", &cwd, "s", "make deploy-prod");
    let out = crate::run::finish_text(explain(), &input).await;
    assert_eq!(
        out,
        format!(
            "ask the person: rule 1 of {} (tool \"Bash\", command \"make deploy*\", decision ask, \
             approvers \"ana,ben\", required 2)\n",
            policy.display()
        )
    );
    std::fs::write(
        &policy,
        r#"{"rules": [{"tool": "Read", "decision": "allow"},
            {"command": "make deploy*", "decision": "ask", "approvers": ["ana"], "required": 3}]}"#,
    )
    .unwrap();
    let (child, _) = crate::run::start(explain(), &input).await;
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("rules[1]: required is 3, but approvers names 1"),
        "{text}"
    );
}
