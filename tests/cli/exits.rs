//! Exit codes as scripts read them: 0 for yes, 1 for no, 2 for nothing chosen, 3 for bad
//! input or a bad key; and a wait that is interrupted.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yes_exits_0_and_prints_the_outcome_as_json() {
    let (_db, srv) = fresh_server().await;
    let (code, out) = ask_and_answer(
        &srv,
        &["ask", "Deploy?", "--kind", "bool", "--wait"],
        json!({"value": "yes", "remark": "after 6pm"}),
    )
    .await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["status"], "answered");
    assert_eq!(out["outcome"], true);
    assert_eq!(out["outcome_source"], "human");
    assert_eq!(out["custom"], false);
    assert_eq!(out["remark"], "after 6pm");
    assert_eq!(
        out["answer_text"],
        r#"The user answered "Deploy?" with "yes". Remark: "after 6pm"."#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_exits_1() {
    let (_db, srv) = fresh_server().await;
    let (code, out) = ask_and_answer(
        &srv,
        &["ask", "Deploy?", "--kind", "bool", "--wait"],
        json!({"value": "no"}),
    )
    .await;
    assert_eq!((code, &out["outcome"]), (1, &json!(false)), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answered_choice_exits_0_with_the_label() {
    let (_db, srv) = fresh_server().await;
    let args = [
        "ask", "Which?", "--kind", "choose", "--option", "Red", "--option", "Blue", "--wait",
    ];
    let (code, out) = ask_and_answer(&srv, &args, json!({"value": "Blue"})).await;
    assert_eq!((code, &out["outcome"]), (0, &json!("Blue")), "{out}");
    // Other, typed by the person, is an answer too.
    let (code, out) = ask_and_answer(&srv, &args, json!({"other": "Green"})).await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        (&out["outcome"], &out["custom"]),
        (&json!("Green"), &json!(true))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_question_exits_1() {
    let (_db, srv) = fresh_server().await;
    let (code, out) = ask_and_answer(
        &srv,
        &["ask", "Name it", "--kind", "text", "--wait"],
        json!({"action": "decline", "remark": "not mine to name"}),
    )
    .await;
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["status"], "declined");
    assert_eq!(out["outcome"], Value::Null);
    assert_eq!(out["remark"], "not mine to name");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skipped_todo_exits_1_and_a_done_one_0() {
    let (_db, srv) = fresh_server().await;
    let args = ["ask", "Rotate the keys", "--kind", "todo", "--wait"];
    let (code, out) = ask_and_answer(&srv, &args, json!({"action": "skip"})).await;
    assert_eq!((code, &out["outcome"]), (1, &json!("skipped")), "{out}");
    let (code, out) = ask_and_answer(&srv, &args, json!({"action": "done"})).await;
    assert_eq!((code, &out["outcome"]), (0, &json!("done")), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_question_exits_2_even_with_a_default() {
    let (_db, srv) = fresh_server().await;
    let plain = run(
        &srv,
        &["ask", "Quick?", "--kind", "bool", "--ttl", "10s", "--wait"],
    );
    let with_default = run(
        &srv,
        &[
            "ask",
            "Quick, with a default?",
            "--kind",
            "bool",
            "--ttl",
            "10s",
            "--default",
            "true",
            "--wait",
        ],
    );
    let (plain, with_default) = tokio::join!(plain, with_default);
    assert_eq!(plain.status.code(), Some(2), "{plain:?}");
    let out = stdout_json(&plain);
    assert_eq!(out["status"], "expired");
    assert_eq!(out["outcome"], Value::Null);
    assert!(
        out["answer_text"]
            .as_str()
            .unwrap()
            .contains("Nobody answered")
    );
    // The default is reported, but nobody decided: still 2.
    assert_eq!(with_default.status.code(), Some(2), "{with_default:?}");
    let out = stdout_json(&with_default);
    assert_eq!(
        (&out["status"], &out["outcome"], &out["outcome_source"]),
        (&json!("expired"), &json!(true), &json!("default"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_question_exits_2_and_cancel_prints_it() {
    let (_db, srv) = fresh_server().await;
    let w = start_waiting(
        &srv.base,
        &srv.key,
        &["ask", "Still needed?", "--kind", "bool", "--wait"],
    )
    .await;
    let cancel = run(&srv, &["cancel", &w.id, "--reason", "found it myself"]).await;
    assert_eq!(cancel.status.code(), Some(0), "{cancel:?}");
    assert_eq!(stdout_json(&cancel)["status"], "cancelled");
    let (code, out, _) = w.finish().await;
    assert_eq!((code, &out["status"]), (2, &json!("cancelled")), "{out}");
    // Cancelling again is refused by the server: its message, exit 3.
    let again = run(&srv, &["cancel", out["decision_id"].as_str().unwrap()]).await;
    assert_eq!(again.status.code(), Some(3), "{again:?}");
    assert!(stderr(&again).contains("already_resolved"), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_wait_withdraws_its_question_unless_told_to_keep_it() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let (_db, srv) = fresh_server().await;
    let signal = |child: &Child, sig: Signal| {
        kill(Pid::from_raw(child.id().unwrap() as i32), sig).unwrap();
    };
    for (sig, name) in [(Signal::SIGINT, "SIGINT"), (Signal::SIGTERM, "SIGTERM")] {
        let mut w = start_waiting(
            &srv.base,
            &srv.key,
            &["ask", "Still there?", "--kind", "bool", "--wait"],
        )
        .await;
        signal(&w.child, sig);
        let status = tokio::time::timeout(Duration::from_secs(60), w.child.wait())
            .await
            .expect("the client exits")
            .unwrap();
        let err = w.rest_of_stderr.await.unwrap();
        assert_eq!(status.code(), Some(2), "{name}: {err}");
        assert_eq!(
            err,
            format!(
                "sayso: {name}: stopped waiting; decision {} is withdrawn\n",
                w.id
            )
        );
        let d = srv.get(&w.id).await;
        assert_eq!(d["status"], "cancelled", "{d}");
        assert_eq!(
            d["answer_text"],
            "The agent stopped waiting for \"Still there?\" and withdrew it before anyone answered."
        );
    }
    // `--keep`: the signal ends the client as it would any program, the question stays.
    let mut w = start_waiting(
        &srv.base,
        &srv.key,
        &["ask", "Keep it?", "--kind", "bool", "--wait", "--keep"],
    )
    .await;
    signal(&w.child, Signal::SIGINT);
    let status = tokio::time::timeout(Duration::from_secs(60), w.child.wait())
        .await
        .expect("the client exits")
        .unwrap();
    assert_eq!(status.code(), None, "ended by the signal: {status:?}");
    assert_eq!(srv.get(&w.id).await["status"], "pending");
    // And `--keep` makes sense only with `--wait`.
    let out = run(&srv, &["ask", "Keep it?", "--kind", "bool", "--keep"]).await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_exits_3_naming_the_flags() {
    let (_db, srv) = fresh_server().await;
    let out = run(
        &srv,
        &[
            "ask", "Which?", "--kind", "choose", "--option", "Only", "--wait",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("--option: must have 2–20 options (got 1)"),
        "{err}"
    );
    // Several problems: each on its own line, named by its flag.
    let out = run(
        &srv,
        &[
            "ask", "Which?", "--kind", "choose", "--option", "A", "--option", "A", "--ttl", "5s",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains("\n  --option #2: duplicate label"), "{err}");
    assert!(
        err.contains("\n  --ttl: must be from 10s to 30d (got 5s)"),
        "{err}"
    );
    // A flag clap refuses is a usage error (64) too, never 2 ("expired").
    let out = run(&srv, &["ask", "Deploy?", "--kind", "maybe", "--wait"]).await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    let out = run(&srv, &["ask", "Deploy?", "--kind", "bool", "--ttl", "30"]).await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(stderr(&out).contains("add a unit"), "{out:?}");
    let out = run(&srv, &["get", "0199aaaa-0000-7000-8000-000000000000"]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr(&out).contains("404 not_found"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_or_a_bad_key_exits_3() {
    let (_db, srv) = fresh_server().await;
    let out = client(
        &srv.base,
        None,
        &["ask", "Deploy?", "--kind", "bool", "--wait"],
    )
    .output()
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(stderr(&out).contains("no API key"), "{out:?}");
    assert!(stderr(&out).contains("SAYSO_KEY"), "{out:?}");
    let out = client(&srv.base, Some("sk_wrong"), &["get", "x"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr(&out).contains("401 unauthorized"), "{out:?}");
}
