//! The `sayso` binary as people run it: first run, admin commands, and two replicas on one
//! PostgreSQL database waking each other's waiters.

mod common;

use std::collections::HashMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::server::{init_tls, s, send};
use futures::StreamExt;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_sayso");

/// A `sayso serve` process on port 0.
struct Replica {
    child: Child,
    base: String,
    /// The first-run key, when this process made the inbox.
    key: Option<String>,
}

async fn start_replica(database_url: &str) -> Replica {
    start_replica_with(database_url, &[]).await
}

async fn start_replica_with(database_url: &str, env: &[(&str, &str)]) -> Replica {
    let mut child = Command::new(BIN)
        .envs(env.iter().copied())
        .env("SAYSO_DATABASE_URL", database_url)
        .env("SAYSO_LISTEN", "127.0.0.1:0")
        .env("SAYSO_LOG_FORMAT", "json")
        .env("SAYSO_LOG", "info,sayso::notify=warn")
        .env_remove("SAYSO_PUBLIC_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("sayso starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if v["fields"]["message"] == "sayso is listening" {
                return format!("http://{}", v["fields"]["address"].as_str().unwrap());
            }
        }
        panic!("sayso exited before listening");
    })
    .await
    .expect("sayso listens within 30 s");
    // Keep draining stderr so the process never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut key = None;
    // The first-run banner, if any, is printed before the server listens.
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_millis(200), stdout.next_line()).await
    {
        if let Some(k) = line.split_whitespace().find(|w| w.starts_with("sk_")) {
            key = Some(k.to_string());
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    Replica { child, base, key }
}

async fn sayso(args: &[&str], database_url: &str) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("SAYSO_DATABASE_URL", database_url)
        .env_remove("SAYSO_LISTEN")
        .env_remove("SAYSO_PUBLIC_URL")
        .output()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_run_prints_a_working_key_and_admin_commands_print_alone() {
    init_tls();
    let db = common::db::fresh_sqlite_url();
    let mut a = start_replica(&db.url).await;
    let key = a.key.clone().expect("the first run prints a key");
    let client = Client::new();
    let (status, h) = send(
        client
            .post(format!("{}/v1/decisions", a.base))
            .bearer_auth(&key)
            .json(&json!({"question": "Works?", "kind": "bool"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{h}");
    // Listening on port 0, the links name the port actually bound.
    assert!(
        s(&h, "web_url").starts_with(&format!("{}/d/", a.base)),
        "{h}"
    );
    a.child.kill().await.unwrap();

    // A second start on the same database prints no key.
    let mut again = start_replica(&db.url).await;
    assert_eq!(again.key, None);
    again.child.kill().await.unwrap();

    let out = sayso(&["key", "create"], &db.url).await;
    assert!(out.status.success(), "{out:?}");
    let new_key = String::from_utf8(out.stdout).unwrap();
    assert!(new_key.starts_with("sk_") && new_key.trim().lines().count() == 1);

    let out = sayso(
        &["inbox", "create", "ops", "--email", "ops@example.com"],
        &db.url,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let link = String::from_utf8(out.stdout).unwrap();
    assert!(
        link.trim().starts_with("http://127.0.0.1:8080/inbox/"),
        "{link}"
    );

    let out = sayso(&["inbox", "create", "ops"], &db.url).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    let out = sayso(&["key", "create", "--inbox", "nobody"], &db.url).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no inbox named"));
}

/// Revokes `key` with the admin command and checks that every replica refuses it at once,
/// while a second key of the same inbox goes on working.
async fn revoke_and_check(database_url: &str, replicas: &[&Replica], key: &str) {
    let out = sayso(&["key", "create"], database_url).await;
    assert!(out.status.success(), "{out:?}");
    let other = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let client = Client::new();
    let list = |base: &str, key: &str| {
        client
            .get(format!("{base}/v1/decisions"))
            .bearer_auth(key.to_string())
    };
    for r in replicas {
        assert_eq!(send(list(&r.base, key)).await.0, StatusCode::OK);
    }

    // From stdin, so the key stays out of the process list.
    let mut revoke = Command::new(BIN)
        .args(["key", "revoke", "-"])
        .env("SAYSO_DATABASE_URL", database_url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use tokio::io::AsyncWriteExt;
    let mut stdin = revoke.stdin.take().unwrap();
    stdin
        .write_all(format!("{key}\n").as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let out = revoke.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{out:?}");

    // The very next request, on any replica, is refused; the other key still works.
    for r in replicas {
        let (status, body) = send(list(&r.base, key)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"]["code"], "unauthorized", "{body}");
        assert_eq!(send(list(&r.base, &other)).await.0, StatusCode::OK);
    }

    // Revoking it again says so; revoking a whole inbox stops its last key.
    let out = sayso(&["key", "revoke", key], database_url).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no live API key matches"));
    let out = sayso(&["key", "revoke", "--all-of", "default"], database_url).await;
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("revoked 1 key(s)"));
    for r in replicas {
        assert_eq!(
            send(list(&r.base, &other)).await.0,
            StatusCode::UNAUTHORIZED
        );
    }
    let out = sayso(&["key", "revoke", "--all-of", "nobody"], database_url).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no inbox named"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_stops_working_at_once_on_sqlite() {
    init_tls();
    let db = common::db::fresh_sqlite_url();
    let a = start_replica(&db.url).await;
    let key = a.key.clone().expect("the first run prints a key");
    revoke_and_check(&db.url, &[&a], &key).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_stops_working_at_once_on_every_replica() {
    init_tls();
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let a = start_replica(&db.url).await;
    let key = a.key.clone().expect("the first replica makes the inbox");
    let b = start_replica(&db.url).await;
    revoke_and_check(&db.url, &[&a, &b], &key).await;
}

#[tokio::test]
async fn an_unknown_database_scheme_is_refused_clearly() {
    let out = sayso(&["key", "create"], "mysql://root@localhost/x").await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown database scheme") && err.contains("mysql"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_await_on_one_replica_is_woken_by_an_answer_on_another() {
    init_tls();
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let a = start_replica(&db.url).await;
    let key = a.key.clone().expect("the first replica makes the inbox");
    let b = start_replica(&db.url).await;
    assert_eq!(b.key, None);
    let client = Client::new();
    let mut latencies = Vec::new();
    for i in 0..5 {
        let (status, h) = send(
            client
                .post(format!("{}/v1/decisions", a.base))
                .bearer_auth(&key)
                .json(&json!({"question": format!("Across replicas {i}?"), "kind": "bool"})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{h}");
        let id = s(&h, "decision_id").to_string();
        let waiting = {
            let req = client
                .get(format!("{}/v1/decisions/{id}/await?timeout_s=60", a.base))
                .bearer_auth(&key);
            tokio::spawn(async move {
                let r = send(req).await;
                (r, Instant::now())
            })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiting.is_finished());
        // The answer goes to the other replica, through the same link path.
        let token = s(&h, "web_url").rsplit('/').next().unwrap().to_string();
        let (status, r) = send(
            client
                .post(format!("{}/d/{token}", b.base))
                .json(&json!({"value": "yes"})),
        )
        .await;
        let answered = Instant::now();
        assert_eq!(status, StatusCode::OK, "{r}");
        let ((status, d), woke) = waiting.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(d["status"], "answered", "{d}");
        latencies.push(woke.saturating_duration_since(answered));
    }
    latencies.sort();
    eprintln!("cross-replica wake latencies: {latencies:?}");
    // Woken by NOTIFY, not by the 60 s timeout or a poll.
    assert!(latencies[latencies.len() - 1] < Duration::from_secs(5));
}

/// Creates `n` email decisions through the given replicas in turn, four at a time.
async fn create_email_decisions(bases: &[String], key: &str, n: usize) -> Vec<String> {
    let client = Client::new();
    futures::stream::iter(0..n)
        .map(|i| {
            let client = client.clone();
            let url = format!("{}/v1/decisions", bases[i % bases.len()]);
            let key = key.to_string();
            async move {
                let (status, h) = send(client.post(url).bearer_auth(key).json(
                    &json!({"question": format!("Mail {i}?"), "kind": "bool", "notify": "email"}),
                ))
                .await;
                assert_eq!(status, StatusCode::CREATED, "{h}");
                s(&h, "decision_id").to_string()
            }
        })
        .buffer_unordered(4)
        .collect::<Vec<_>>()
        .await
}

/// How many mails each decision got, by its Message-ID.
fn mails_per_decision(sink: &common::smtp::SmtpSink) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for mail in sink.received() {
        if let Some(id) = mail.header("Message-ID") {
            *counts.entry(id.to_string()).or_default() += 1;
        }
    }
    counts
}

async fn wait_for_distinct(sink: &common::smtp::SmtpSink, n: usize, limit: Duration) {
    let started = Instant::now();
    while mails_per_decision(sink).len() < n {
        assert!(
            started.elapsed() < limit,
            "only {} of {n} mails arrived",
            mails_per_decision(sink).len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_queued_when_the_server_is_killed_arrives_after_the_restart() {
    init_tls();
    let Some(sink) = common::smtp::SmtpSink::start().await else {
        return;
    };
    let db = common::db::fresh_sqlite_url();
    let smtp = sink.url();
    let env = [
        ("SAYSO_SMTP_URL", smtp.as_str()),
        ("SAYSO_MAIL_FROM", "sayso <sayso@example.com>"),
        ("SAYSO_OUTBOX_RETRY_BASE_MS", "100"),
        ("SAYSO_OUTBOX_LEASE_S", "2"),
    ];
    let mut a = start_replica_with(&db.url, &env).await;
    let key = a.key.clone().unwrap();
    // A slow mail server: each message takes a quarter of a second to accept.
    let out = sayso(
        &["inbox", "set", "default", "--email", "slow@example.com"],
        &db.url,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let ids = create_email_decisions(std::slice::from_ref(&a.base), &key, 200).await;
    wait_for_distinct(&sink, 10, Duration::from_secs(60)).await;
    a.child.kill().await.unwrap(); // SIGKILL, mid-queue
    let before = mails_per_decision(&sink).len();
    assert!(
        before < 200,
        "the kill came after everything was sent ({before})"
    );

    let _b = start_replica_with(&db.url, &env).await;
    wait_for_distinct(&sink, 200, Duration::from_secs(120)).await;
    let counts = mails_per_decision(&sink);
    for id in &ids {
        assert!(
            counts
                .keys()
                .any(|m| m.contains(&format!("decision-{id}@"))),
            "no mail for {id}"
        );
    }
    let repeats: usize = counts.values().map(|c| c - 1).sum();
    eprintln!(
        "killed after {before} of 200 mails; {repeats} repeated by the crash, deduplicated by Message-ID"
    );
    // Only deliveries in flight at the kill can repeat: at most one claimed batch.
    assert!(repeats <= 50, "{repeats} repeats");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_queue_send_each_mail_once() {
    init_tls();
    let Some(sink) = common::smtp::SmtpSink::start().await else {
        return;
    };
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let smtp = sink.url();
    let env = [
        ("SAYSO_SMTP_URL", smtp.as_str()),
        ("SAYSO_MAIL_FROM", "sayso <sayso@example.com>"),
    ];
    let a = start_replica_with(&db.url, &env).await;
    let key = a.key.clone().unwrap();
    let out = sayso(
        &["inbox", "set", "default", "--email", "person@example.com"],
        &db.url,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let b = start_replica_with(&db.url, &env).await;
    let ids = create_email_decisions(&[a.base.clone(), b.base.clone()], &key, 100).await;
    wait_for_distinct(&sink, 100, Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let counts = mails_per_decision(&sink);
    assert_eq!(counts.len(), ids.len());
    assert!(
        counts.values().all(|c| *c == 1),
        "a mail was sent twice: {counts:?}"
    );
}

/// Every stderr line of a `sayso serve` at debug level, kept as it comes.
struct LoggedServer {
    _child: Child,
    base: String,
    key: String,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

async fn start_logging_debug(database_url: &str) -> LoggedServer {
    let mut child = Command::new(BIN)
        .env("SAYSO_DATABASE_URL", database_url)
        .env("SAYSO_LISTEN", "127.0.0.1:0")
        .env("SAYSO_LOG_FORMAT", "json")
        .env("SAYSO_LOG", "debug")
        .env_remove("SAYSO_PUBLIC_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("sayso starts");
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let kept = lines.clone();
    let base = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            kept.lock().unwrap().push(line.clone());
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if v["fields"]["message"] == "sayso is listening" {
                return format!("http://{}", v["fields"]["address"].as_str().unwrap());
            }
        }
        panic!("sayso exited before listening");
    })
    .await
    .expect("sayso listens within 30 s");
    let kept = lines.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            kept.lock().unwrap().push(line);
        }
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut key = None;
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_millis(500), stdout.next_line()).await
    {
        if let Some(k) = line.split_whitespace().find(|w| w.starts_with("sk_")) {
            key = Some(k.to_string());
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    LoggedServer {
        _child: child,
        base,
        key: key.expect("the first run prints a key"),
        lines,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_logs_name_routes_and_request_ids_never_tokens_or_keys() {
    init_tls();
    let db = common::db::fresh_sqlite_url();
    let srv = start_logging_debug(&db.url).await;
    let http = Client::new();
    let (status, handle) = send(
        http.post(format!("{}/v1/decisions", srv.base))
            .bearer_auth(&srv.key)
            .header("x-request-id", "trace-me-42")
            .json(&json!({"question": "Log me?", "kind": "bool", "notify": "none"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{handle}");
    let web_url = s(&handle, "web_url").to_string();
    let page = http.get(&web_url).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let made_id = page.headers()["x-request-id"].to_str().unwrap().to_string();
    assert!(!made_id.is_empty(), "a request without an id gets one");
    let (status, _) = send(http.post(&web_url).json(&json!({"value": "yes"}))).await;
    assert_eq!(status, StatusCode::OK);
    let echoed = http
        .get(format!("{}/healthz", srv.base))
        .header("x-request-id", "given-id")
        .send()
        .await
        .unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "given-id");
    tokio::time::sleep(Duration::from_millis(300)).await;

    let lines = srv.lines.lock().unwrap().clone();
    let token = web_url.rsplit('/').next().unwrap();
    let all = lines.join("\n");
    assert!(!all.contains(token), "an answer token is in the logs");
    assert!(!all.contains(&srv.key), "an API key is in the logs");
    assert!(all.contains("/d/{token}"), "the route template is logged");
    let of_create: Vec<&String> = lines.iter().filter(|l| l.contains("trace-me-42")).collect();
    assert!(
        !of_create.is_empty() && of_create.iter().all(|l| l.contains("/v1/decisions")),
        "the create's lines carry its request id: {of_create:?}"
    );
    assert!(all.contains(&made_id), "a made request id is logged too");
    // Inside the request, the service's span names the work, the inbox and the decision.
    let decision_id = s(&handle, "decision_id").to_string();
    assert!(
        of_create
            .iter()
            .any(|l| l.contains("\"name\":\"create\"") && l.contains("\"inbox\":\"default\"")),
        "the create's lines carry the service span: {of_create:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("\"name\":\"answer\"") && l.contains(&decision_id)),
        "the answer's lines name its decision"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_write_load_holds_every_acknowledged_decision_and_exports() {
    init_tls();
    let db = common::db::fresh_sqlite_url();
    let mut live = start_replica_with(&db.url, &[("SAYSO_RATE_LIMIT_PER_S", "0")]).await;
    let key = live.key.clone().expect("the first run prints a key");
    let client = Client::new();
    // Writers create decisions without pause while the backup runs; the ids acknowledged
    // before the backup started must all be in the copy.
    let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4 {
        let (client, base, key) = (client.clone(), live.base.clone(), key.clone());
        let (acknowledged, stop) = (acknowledged.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let (status, h) = send(
                    client
                        .post(format!("{base}/v1/decisions"))
                        .bearer_auth(&key)
                        .json(&json!({"question": format!("w{w} #{n}"), "kind": "bool", "notify": "none"})),
                )
                .await;
                assert_eq!(status, StatusCode::CREATED, "{h}");
                acknowledged.lock().unwrap().push(s(&h, "decision_id").to_string());
                n += 1;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before: Vec<String> = acknowledged.lock().unwrap().clone();
    let copy = common::db::fresh_sqlite_url();
    let out = sayso(&["backup", copy.path.to_str().unwrap()], &db.url).await;
    assert!(out.status.success(), "{out:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    live.child.kill().await.unwrap();
    assert!(
        before.len() >= 10,
        "the writers were writing: {}",
        before.len()
    );

    // A second backup to the same file is refused, never overwriting it.
    let again = sayso(&["backup", copy.path.to_str().unwrap()], &db.url).await;
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));

    // A server on the copy has every decision acknowledged before the backup began.
    let mut restored = start_replica(&copy.url).await;
    assert_eq!(restored.key, None, "the copy has the inbox already");
    for id in &before {
        let resp = client
            .get(format!("{}/v1/decisions/{id}", restored.base))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(
            resp.status(),
            StatusCode::OK,
            "{id} is missing from the backup"
        );
    }
    restored.child.kill().await.unwrap();

    // The export of the copy has each of them once, with its audit trail.
    let out = sayso(&["export", "--inbox", "default"], &copy.url).await;
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let exported: std::collections::HashSet<&str> = lines
        .iter()
        .map(|l| l["decision"]["decision_id"].as_str().unwrap())
        .collect();
    assert_eq!(exported.len(), lines.len(), "each decision once");
    for id in &before {
        assert!(exported.contains(id.as_str()), "{id} is not exported");
    }
    assert!(lines.iter().all(|l| l["events"][0]["kind"] == "created"));
    let none = sayso(
        &["export", "--inbox", "default", "--since", "2999-01-01"],
        &copy.url,
    )
    .await;
    assert!(none.status.success() && none.stdout.is_empty(), "{none:?}");
    let bad = sayso(&["export", "--inbox", "nobody"], &copy.url).await;
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no inbox named"));
}
