//! The command-line client as scripts run it: the real `sayso` binary against a real server,
//! its output and its exit codes, and a `--wait` that outlives a server restart.

mod common;

use std::process::{Output, Stdio};
use std::time::Duration;

use common::cli::{BIN, agent_json, output, output_with_input, stderr, stdout_json};
use common::process::{drain, listening_address, serve_command, stderr_lines};
use common::server::{TestServer, fresh_server, s};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

/// `sayso ARGS` against `base` with `key` (no key when `None`), as a script would run it.
fn client(base: &str, key: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = common::cli::client(base, key, args);
    // A shell without job control starts its background commands with SIGINT ignored, and
    // the client would inherit that; what it does on SIGINT itself is what is tested here.
    // SAFETY: only an async-signal-safe call between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            use nix::sys::signal::{SigHandler, Signal, signal};
            signal(Signal::SIGINT, SigHandler::SigDfl)
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
    cmd
}

async fn run(srv: &TestServer, args: &[&str]) -> Output {
    output(client(&srv.base, Some(&srv.key), args)).await
}

/// A client waiting for an answer (`ask --wait` or `await`), with the decision it waits on.
struct Waiting {
    child: Child,
    id: String,
    link: String,
    rest_of_stderr: JoinHandle<String>,
}

/// Starts `sayso ask … --wait` and reads the decision's id and link from its stderr.
async fn start_waiting(base: &str, key: &str, args: &[&str]) -> Waiting {
    let mut child = client(base, Some(key), args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sayso runs");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (id, link) = tokio::time::timeout(Duration::from_secs(30), async {
        let mut id = None;
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix("sayso: waiting for the answer to decision ") {
                id = Some(rest.trim_end_matches(':').to_string());
            } else if line.starts_with("http") {
                return (id.expect("the id comes before the link"), line);
            }
        }
        panic!("sayso exited before it waited");
    })
    .await
    .expect("the client prints the link within 30 s");
    let rest_of_stderr = tokio::spawn(async move {
        let mut rest = String::new();
        while let Ok(Some(line)) = lines.next_line().await {
            rest.push_str(&line);
            rest.push('\n');
        }
        rest
    });
    Waiting {
        child,
        id,
        link,
        rest_of_stderr,
    }
}

impl Waiting {
    /// Waits for the client to exit: its exit code, the JSON it printed and its stderr.
    async fn finish(mut self) -> (i32, Value, String) {
        let mut stdout = String::new();
        let mut pipe = self.child.stdout.take().unwrap();
        let status = tokio::time::timeout(Duration::from_secs(60), async {
            pipe.read_to_string(&mut stdout).await.unwrap();
            self.child.wait().await.unwrap()
        })
        .await
        .expect("the waiting client exits within 60 s");
        let err = self.rest_of_stderr.await.unwrap();
        let json = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout:?}; stderr: {err}"));
        (status.code().expect("exited, not killed"), json, err)
    }
}

/// Asks with `--wait`, answers through the link with `answer`, returns the client's result.
async fn ask_and_answer(srv: &TestServer, args: &[&str], answer: Value) -> (i32, Value) {
    let w = start_waiting(&srv.base, &srv.key, args).await;
    let id = w.id.clone();
    srv.answer_ok(&w.link, answer).await;
    let (code, out, err) = w.finish().await;
    assert_eq!(out["decision_id"], id.as_str(), "{err}");
    (code, out)
}

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

/// A `sayso serve` process on a fixed address and a SQLite file.
async fn start_server_process(database_url: &str, listen: &str) -> (Child, Option<String>) {
    let state = common::first_run::StateDir::new();
    let mut child = serve_command(BIN, &state, database_url, Some(listen))
        .arg("serve")
        .spawn()
        .expect("sayso serve starts");
    let mut err = stderr_lines(&mut child);
    listening_address(&mut err, Duration::from_secs(30), |_, _| {}).await;
    drain(err);
    drain(BufReader::new(child.stdout.take().unwrap()).lines());
    // The first run writes its key before the server listens.
    let key = state.secrets().map(|s| s.key);
    (child, key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_survives_a_server_restart_in_the_middle() {
    common::server::init_tls();
    let db = common::db::fresh_sqlite_url();
    let port = common::port::free_port();
    let listen = format!("127.0.0.1:{port}");
    let base = format!("http://{listen}");
    let (mut first, key) = start_server_process(&db.url, &listen).await;
    let key = key.expect("the first run writes a key");

    let w = start_waiting(
        &base,
        &key,
        &[
            "ask",
            "Ship it after the restart?",
            "--kind",
            "bool",
            "--wait",
        ],
    )
    .await;
    // Let the client park its await, then take the server away from under it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    first.kill().await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut w = w;
    assert!(
        w.child.try_wait().unwrap().is_none(),
        "the client must keep waiting while the server is down"
    );

    let (_second, again) = start_server_process(&db.url, &listen).await;
    assert_eq!(again, None, "the same database: no second first run");
    let client = reqwest::Client::new();
    let resp = client
        .post(&w.link)
        .json(&json!({"value": "yes"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    let id = w.id.clone();
    let (code, out, err) = w.finish().await;
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["decision_id"], id.as_str());
    assert_eq!(
        (&out["status"], &out["outcome"]),
        (&json!("answered"), &json!(true))
    );
    assert!(err.contains("retrying"), "the client saw the outage: {err}");
}

/// A load balancer in front of `upstream` that has no healthy backend for its first
/// `unavailable` requests (503 with `Retry-After`), then forwards; the answer to the first
/// create it forwards is lost on the way back (502), after the server made the decision.
async fn flaky_proxy(upstream: String, unavailable: usize) -> String {
    use axum::body::{Body, Bytes};
    use axum::http::{HeaderMap, Method, Response, Uri};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let seen = Arc::new(AtomicUsize::new(0));
    let lost = Arc::new(AtomicBool::new(false));
    let http = reqwest::Client::new();
    let handler = move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
        let (seen, lost, http) = (seen.clone(), lost.clone(), http.clone());
        let upstream = upstream.clone();
        async move {
            if seen.fetch_add(1, Ordering::SeqCst) < unavailable {
                return Response::builder()
                    .status(503)
                    .header("retry-after", "1")
                    .body(Body::from("<html>no healthy upstream</html>"))
                    .unwrap();
            }
            let create = method == Method::POST;
            let mut req = http.request(method, format!("{upstream}{uri}")).body(body);
            for name in ["authorization", "content-type", "idempotency-key"] {
                if let Some(v) = headers.get(name) {
                    req = req.header(name, v);
                }
            }
            let resp = req.send().await.unwrap();
            if create && !lost.swap(true, Ordering::SeqCst) {
                return Response::builder()
                    .status(502)
                    .body(Body::from("upstream connection reset"))
                    .unwrap();
            }
            let status = resp.status();
            Response::builder()
                .status(status)
                .body(Body::from(resp.bytes().await.unwrap()))
                .unwrap()
        }
    };
    let app = axum::Router::new().fallback(handler);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_503_or_a_lost_answer_from_a_proxy_is_retried_and_asks_only_once() {
    let (_db, srv) = fresh_server().await;
    let proxy = flaky_proxy(srv.base.clone(), 3).await;
    let w = start_waiting(
        &proxy,
        &srv.key,
        &["ask", "Through the balancer?", "--kind", "bool", "--wait"],
    )
    .await;
    srv.answer(&w.link, json!({"value": "yes"})).await;
    let (code, out, _) = w.finish().await;
    assert_eq!((code, &out["outcome"]), (0, &json!(true)), "{out}");
    let (_, list) = common::server::send(srv.req(reqwest::Method::GET, "/v1/decisions")).await;
    // The create was made twice (its first answer was lost): one decision all the same.
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");
}

/// `sayso verify` on `text` (stdin when `file` is `-`) with `flags`.
async fn verify(base: &str, file: &str, text: Option<&str>, flags: &[&str]) -> Output {
    let mut args = vec!["verify", file];
    args.extend_from_slice(flags);
    let mut cmd = client(base, None, &args);
    cmd.env_remove("SAYSO_RECEIPT_KEY");
    output_with_input(cmd, text.unwrap_or_default()).await
}

/// `sayso receipts` exports the inbox's chain and `sayso verify` checks it offline: a good
/// chain and a single receipt pass; a changed receipt, another key and a dropped receipt
/// are each named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipts_are_exported_and_verified_offline() {
    let (_db, srv) = fresh_server().await;
    let mut ids = Vec::new();
    for (i, yes) in [true, false, true].into_iter().enumerate() {
        let h = srv
            .create(json!({"question": format!("receipt {i}"), "kind": "bool"}))
            .await;
        srv.answer_ok(s(&h, "web_url"), json!({"value": yes})).await;
        ids.push(s(&h, "decision_id").to_string());
    }
    let out = run(&srv, &["receipts", "--public-key"]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let key = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = run(&srv, &["receipts"]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let chain = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(chain.lines().count(), 3, "{chain}");

    let dir = std::env::temp_dir().join(format!("sayso-receipts-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let good = file("chain.jsonl", &chain);
    let key_file = file("key.pub", &format!("{key}\n"));

    let out = verify(&srv.base, &good, None, &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.starts_with("ok: 3 receipts of inbox"), "{said}");
    assert!(said.contains("seq 1 to 3, unbroken"), "{said}");
    let out = verify(&srv.base, &good, None, &["--key-file", &key_file]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // One decision's receipt, with what was asked, through stdin.
    let out = run(&srv, &["receipts", "--decision", &ids[1]]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let one = String::from_utf8_lossy(&out.stdout).into_owned();
    let out = verify(&srv.base, "-", Some(&one), &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("receipt 2 of decision {}", ids[1])),
        "{said}"
    );
    assert!(said.contains("what was asked matches"), "{said}");

    // What was asked, changed: named.
    let mut asked: Value = serde_json::from_str(&one).unwrap();
    asked["asked"]["question"] = json!("something else");
    let out = verify(&srv.base, "-", Some(&asked.to_string()), &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        stderr(&out).contains("receipt seq 2: what was asked does not hash"),
        "{out:?}"
    );

    // A receipt changed after signing: a bad signature, at its seq.
    let mut lines: Vec<Value> = chain
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut tampered = lines.clone();
    tampered[1]["receipt"]["outcome"] = json!(true);
    let text: Vec<String> = tampered.iter().map(Value::to_string).collect();
    let bad = file("tampered.jsonl", &text.join("\n"));
    let out = verify(&srv.base, &bad, None, &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        stderr(&out).contains("receipt seq 2: bad signature"),
        "{out:?}"
    );

    // Another key: named as such, with both key ids.
    let other = sayso::domain::receipt::ReceiptKey::from_stored(
        &sayso::domain::receipt::ReceiptKey::generate(),
    )
    .unwrap()
    .public()
    .to_text();
    let out = verify(&srv.base, &good, None, &["--key", &other]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr(&out).contains("signed with another key"), "{out:?}");

    // A receipt dropped from the middle: the chain breaks where it is missed.
    lines.remove(1);
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    let broken = file("broken.jsonl", &text.join("\n"));
    let out = verify(&srv.base, &broken, None, &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr(&out).contains("broken chain at seq 3"), "{out:?}");

    // No key at all: said, with where to get one.
    let out = verify(&srv.base, &good, None, &[]).await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(stderr(&out).contains("--key"), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
    srv.stop().await;
}
