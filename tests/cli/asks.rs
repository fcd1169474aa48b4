//! Asking without waiting, a to-do, and an idempotency key.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_without_wait_prints_the_link_on_its_own_line_or_the_handle_as_json() {
    let (_db, srv) = fresh_server().await;
    let out = run(&srv, &["ask", "Deploy?", "--kind", "bool", "--ttl", "30m"]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let link = text.lines().last().unwrap();
    assert!(link.starts_with(&format!("{}/d/", srv.base)), "{text}");
    assert!(!link.contains(' '), "{text}");

    let handle = agent_json(
        &srv,
        &[
            "ask", "Which?", "--kind", "choose", "--option", "A", "--option", "B", "--json",
        ],
    )
    .await;
    let id = s(&handle, "decision_id");
    let d = srv.get(id).await;
    assert_eq!(
        (&d["kind"], &d["status"]),
        (&json!("choose"), &json!("pending"))
    );

    // `get` prints the whole decision.
    let got = agent_json(&srv, &["get", id]).await;
    assert_eq!(got["question"], "Which?");
    assert_eq!(got["web_url"], handle["web_url"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn todo_leaves_a_reminder_and_await_reads_its_end() {
    let (_db, srv) = fresh_server().await;
    let handle = agent_json(
        &srv,
        &[
            "todo",
            "Renew the cert",
            "--project",
            "ops",
            "--ttl",
            "1d",
            "--json",
        ],
    )
    .await;
    let id = s(&handle, "decision_id").to_string();
    let d = srv.get(&id).await;
    assert_eq!((&d["kind"], &d["project"]), (&json!("todo"), &json!("ops")));

    // Still open: `await --timeout` gives up with 4 and the pending decision.
    let out = run(&srv, &["await", &id, "--timeout", "1s"]).await;
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert_eq!(stdout_json(&out)["status"], "pending");

    srv.answer(s(&handle, "web_url"), json!({"action": "done"}))
        .await;
    assert_eq!(agent_json(&srv, &["await", &id]).await["outcome"], "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_idempotency_key_returns_the_first_decision() {
    let (_db, srv) = fresh_server().await;
    let args = [
        "ask",
        "Deploy?",
        "--kind",
        "bool",
        "--idempotency-key",
        "deploy-42",
        "--json",
    ];
    let first = stdout_json(&run(&srv, &args).await);
    let second = stdout_json(&run(&srv, &args).await);
    assert_eq!(first["decision_id"], second["decision_id"]);
    // Two asks without a key are two questions.
    let a = stdout_json(&run(&srv, &["ask", "Deploy?", "--kind", "bool", "--json"]).await);
    let b = stdout_json(&run(&srv, &["ask", "Deploy?", "--kind", "bool", "--json"]).await);
    assert_ne!(a["decision_id"], b["decision_id"]);
}
