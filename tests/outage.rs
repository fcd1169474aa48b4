//! The database goes away and comes back: two `sayso serve` processes on a PostgreSQL cluster
//! of the test's own, under a light steady load, while the cluster is stopped for 20 s.
//! Requests fail fast with 503 `unavailable`, `/readyz` follows the database, the service
//! recovers without a restart, parked awaits survive and are woken across replicas after the
//! listener re-subscribes, and nothing acknowledged is lost. Also, behind a fault-injecting TCP
//! proxy, a refused and then a hung PostgreSQL, and a SQLite file another process has locked.

mod common;

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::cluster::PgCluster;
use common::server::{init_tls, s, send};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;

const BIN: &str = env!("CARGO_BIN_EXE_sayso");

/// How long the database stays down.
const OUTAGE: Duration = Duration::from_secs(20);

/// A `sayso serve` process on port 0, with its log lines.
struct Replica {
    child: Child,
    base: String,
    key: Option<String>,
    log: Arc<Mutex<Vec<String>>>,
}

fn command(database_url: &str, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .envs(env.iter().copied())
        .env("SAYSO_DATABASE_URL", database_url)
        .env("SAYSO_LISTEN", "127.0.0.1:0")
        .env("SAYSO_LOG_FORMAT", "json")
        .env("SAYSO_LOG", "info,sayso::notify=warn,tower_http=warn")
        .env_remove("SAYSO_PUBLIC_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Keeps every log line of `child` in `log`; sends the address once it listens.
fn collect_logs(
    child: &mut Child,
    log: Arc<Mutex<Vec<String>>>,
) -> watch::Receiver<Option<String>> {
    let (tx, rx) = watch::channel(None);
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["fields"]["message"] == "sayso is listening"
            {
                let _ = tx.send(Some(format!(
                    "http://{}",
                    v["fields"]["address"].as_str().unwrap()
                )));
            }
            log.lock().unwrap().push(line);
        }
    });
    rx
}

async fn start_replica(database_url: &str) -> Replica {
    let mut child = command(database_url, &[]).spawn().expect("sayso starts");
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut listening = collect_logs(&mut child, Arc::clone(&log));
    let base = wait_listening(&mut listening, Duration::from_secs(30)).await;
    let key = read_key(&mut child).await;
    Replica {
        child,
        base,
        key,
        log,
    }
}

/// The address once the server listens; panics if it exits or takes longer than `limit`.
async fn wait_listening(
    listening: &mut watch::Receiver<Option<String>>,
    limit: Duration,
) -> String {
    tokio::time::timeout(limit, async {
        loop {
            if let Some(base) = listening.borrow_and_update().clone() {
                return base;
            }
            listening
                .changed()
                .await
                .expect("sayso exited before listening");
        }
    })
    .await
    .unwrap_or_else(|_| panic!("sayso did not listen within {limit:?}"))
}

/// The first-run key from stdout, if printed (before the server listens); keeps draining.
async fn read_key(child: &mut Child) -> Option<String> {
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut key = None;
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_millis(200), stdout.next_line()).await
    {
        if let Some(k) = line.split_whitespace().find(|w| w.starts_with("sk_")) {
            key = Some(k.to_string());
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    key
}

impl Replica {
    fn assert_healthy(&mut self, name: &str) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "replica {name} exited"
        );
        let log = self.log.lock().unwrap();
        let bad: Vec<&String> = log
            .iter()
            // (tower_http logs each 5xx response as an error; those are checked above.)
            .filter(|l| {
                l.contains("panicked")
                    || (l.contains("\"ERROR\"") && !l.contains("\"target\":\"tower_http"))
            })
            .collect();
        assert!(bad.is_empty(), "replica {name} logged: {bad:#?}");
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Create,
    Get,
    Answer,
    Ready,
}

/// One request of the load, as the client saw it.
#[derive(Debug, Clone)]
struct Record {
    replica: usize,
    op: Op,
    started: Instant,
    took: Duration,
    /// 0 when no response came (transport error or the client's 30 s timeout).
    status: u16,
    code: Option<String>,
    retry_after: bool,
}

impl Record {
    fn ended(&self) -> Instant {
        self.started + self.took
    }
}

type Records = Arc<Mutex<Vec<Record>>>;

async fn request(
    records: &Records,
    replica: usize,
    op: Op,
    req: reqwest::RequestBuilder,
) -> (u16, Value) {
    let started = Instant::now();
    let (status, retry_after, body) = match req.send().await {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let retry_after = resp.headers().contains_key("retry-after");
            let text = resp.text().await.unwrap_or_default();
            (
                status,
                retry_after,
                serde_json::from_str(&text).unwrap_or(Value::Null),
            )
        }
        Err(e) => {
            eprintln!("{op:?} on replica {replica}: no response: {e}");
            (0, false, Value::Null)
        }
    };
    records.lock().unwrap().push(Record {
        replica,
        op,
        started,
        took: started.elapsed(),
        status,
        code: body["error"]["code"].as_str().map(str::to_string),
        retry_after,
    });
    (status, body)
}

/// What the load was told: decisions created (201) and answers accepted (200, or 409 on a
/// retry of an answer whose first try may have committed before its 503).
#[derive(Default)]
struct Acknowledged {
    created: Vec<String>,
    answered: HashMap<String, bool>,
}

/// A client of the steady load and where it writes down what it saw.
struct Worker {
    client: Client,
    base: String,
    key: String,
    replica: usize,
    worker: usize,
    records: Records,
    acked: Arc<Mutex<Acknowledged>>,
}

/// One client of the steady load on one replica: creates a decision, reads one back, and
/// answers every other one, about five times a second, until `stop`.
async fn load(worker: Worker, mut stop: watch::Receiver<bool>) {
    let Worker {
        client,
        base,
        key,
        replica,
        worker,
        records,
        acked,
    } = worker;
    // Decisions this worker will answer: id, answer token, the value it answers with.
    let mut to_answer: Vec<(String, String, bool)> = Vec::new();
    let mut last: Option<String> = None;
    let mut i = 0usize;
    while !*stop.borrow_and_update() {
        i += 1;
        let (status, h) = request(
            &records,
            replica,
            Op::Create,
            client
                .post(format!("{base}/v1/decisions"))
                .bearer_auth(&key)
                .json(&json!({
                    "question": format!("Outage load {replica}.{worker}.{i}?"),
                    "kind": "bool",
                    "notify": "none",
                })),
        )
        .await;
        if status == 201 {
            let id = s(&h, "decision_id").to_string();
            acked.lock().unwrap().created.push(id.clone());
            if i.is_multiple_of(2) {
                let token = s(&h, "web_url").rsplit('/').next().unwrap().to_string();
                to_answer.push((id.clone(), token, i.is_multiple_of(4)));
            }
            last = Some(id);
        }
        if let Some(id) = &last {
            request(
                &records,
                replica,
                Op::Get,
                client
                    .get(format!("{base}/v1/decisions/{id}"))
                    .bearer_auth(&key),
            )
            .await;
        }
        // A few stay queued, so there is one to answer also while creates fail.
        if (to_answer.len() > 2 || status != 201)
            && let Some((id, token, value)) = to_answer.first().cloned()
        {
            let (status, body) = request(
                &records,
                replica,
                Op::Answer,
                client
                    .post(format!("{base}/d/{token}"))
                    .json(&json!({"value": value})),
            )
            .await;
            let retried_after_commit = status == 409 && body["error"]["code"] == "already_resolved";
            if status == 200 || retried_after_commit {
                acked.lock().unwrap().answered.insert(id, value);
                to_answer.remove(0);
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(150)) => {}
            _ = stop.changed() => {}
        }
    }
}

/// Polls `/readyz` of a replica four times a second until `stop`.
async fn probe_ready(
    client: Client,
    base: String,
    replica: usize,
    records: Records,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow_and_update() {
        request(
            &records,
            replica,
            Op::Ready,
            client.get(format!("{base}/readyz")),
        )
        .await;
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            _ = stop.changed() => {}
        }
    }
}

/// An await on `base` for `id`, parked in a task; yields its response and when it came.
fn park_await(
    client: &Client,
    base: &str,
    key: &str,
    id: &str,
) -> tokio::task::JoinHandle<((StatusCode, Value), Instant)> {
    let req = client
        .get(format!("{base}/v1/decisions/{id}/await?timeout_s=300"))
        .timeout(Duration::from_secs(300))
        .bearer_auth(key);
    tokio::spawn(async move {
        let r = send(req).await;
        (r, Instant::now())
    })
}

async fn create(client: &Client, base: &str, key: &str, question: &str) -> (String, String) {
    let (status, h) = send(
        client
            .post(format!("{base}/v1/decisions"))
            .bearer_auth(key)
            .json(&json!({"question": question, "kind": "bool", "notify": "none"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{h}");
    let token = s(&h, "web_url").rsplit('/').next().unwrap().to_string();
    (s(&h, "decision_id").to_string(), token)
}

/// Answers through `base`, retrying while the replica still says 503; returns when accepted.
async fn answer_when_possible(client: &Client, base: &str, token: &str, value: bool) -> Instant {
    let started = Instant::now();
    loop {
        let (status, body) = send(
            client
                .post(format!("{base}/d/{token}"))
                .json(&json!({"value": value})),
        )
        .await;
        if status == StatusCode::OK {
            return Instant::now();
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the answer was still refused 30 s after the database came back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn await_woken(
    parked: tokio::task::JoinHandle<((StatusCode, Value), Instant)>,
    answered: Instant,
    what: &str,
) -> Duration {
    let ((status, d), woke) = tokio::time::timeout(Duration::from_secs(30), parked)
        .await
        .unwrap_or_else(|_| panic!("{what}: the parked await was not woken within 30 s"))
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{what}: {d}");
    assert_eq!(d["status"], "answered", "{what}: {d}");
    woke.saturating_duration_since(answered)
}

fn millis(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_gives_fast_503s_and_the_service_recovers_by_itself() {
    init_tls();
    let Some(cluster) = PgCluster::start() else {
        return;
    };
    let url = cluster.url();
    let mut a = start_replica(&url).await;
    let key = a.key.clone().expect("the first replica makes the inbox");
    let mut b = start_replica(&url).await;
    let bases = [a.base.clone(), b.base.clone()];
    let client = Client::builder()
        .timeout(Duration::from_secs(30))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();

    // Awaits parked before the outage, to be answered after it on the other replica.
    let (across_a, across_a_token) = create(&client, &bases[0], &key, "Parked on A").await;
    let (across_b, across_b_token) = create(&client, &bases[1], &key, "Parked on B").await;
    let parked_a = park_await(&client, &bases[0], &key, &across_a);
    let parked_b = park_await(&client, &bases[1], &key, &across_b);

    let records: Records = Arc::default();
    let acked: Arc<Mutex<Acknowledged>> = Arc::default();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = Vec::new();
    for (replica, base) in bases.iter().enumerate() {
        for worker in 0..2 {
            let w = Worker {
                client: client.clone(),
                base: base.clone(),
                key: key.clone(),
                replica,
                worker,
                records: Arc::clone(&records),
                acked: Arc::clone(&acked),
            };
            tasks.push(tokio::spawn(load(w, stop_rx.clone())));
        }
        tasks.push(tokio::spawn(probe_ready(
            client.clone(),
            base.clone(),
            replica,
            Arc::clone(&records),
            stop_rx.clone(),
        )));
    }
    tokio::time::sleep(Duration::from_secs(3)).await;

    let stop_began = Instant::now();
    cluster.stop().await;
    let down = Instant::now();
    eprintln!("database stopped in {}", millis(down - stop_began));
    tokio::time::sleep(OUTAGE).await;
    assert!(!parked_a.is_finished() && !parked_b.is_finished());
    let start_began = Instant::now();
    cluster.start_again().await;
    let up = Instant::now();
    eprintln!("database started again in {}", millis(up - start_began));

    // The await parked on A across the outage, answered on B as soon as B takes answers:
    // likely before A's listener is back, so A must re-read on re-subscribing.
    let answered = answer_when_possible(&client, &bases[1], &across_a_token, true).await;
    let across_a_wake = await_woken(parked_a, answered, "parked on A across the outage").await;
    let answered = answer_when_possible(&client, &bases[0], &across_b_token, false).await;
    let across_b_wake = await_woken(parked_b, answered, "parked on B across the outage").await;

    // Keep the load on for a while after the return.
    tokio::time::sleep(Duration::from_secs(8)).await;
    stop_tx.send(true).unwrap();
    for t in tasks {
        t.await.unwrap();
    }

    // Awaits parked after the outage, woken by the other replica's NOTIFY on the
    // re-subscribed listeners, in both directions.
    let mut fresh_wakes = Vec::new();
    for i in 0..4 {
        let (parked_on, answered_on) = if i % 2 == 0 { (0, 1) } else { (1, 0) };
        let (id, token) = create(&client, &bases[parked_on], &key, "After the outage").await;
        let parked = park_await(&client, &bases[parked_on], &key, &id);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!parked.is_finished(), "an await returned before its answer");
        let answered = answer_when_possible(&client, &bases[answered_on], &token, true).await;
        fresh_wakes.push(await_woken(parked, answered, "parked after the outage").await);
    }

    let records = records.lock().unwrap().clone();
    let acked = std::mem::take(&mut *acked.lock().unwrap());

    // No 500s, no hangs, no refused connections: only the statuses of the load.
    for r in &records {
        assert!(
            matches!(r.status, 200 | 201 | 409 | 503),
            "unexpected response: {r:?}"
        );
        if r.status == 409 {
            assert_eq!(r.op, Op::Answer, "{r:?}");
        }
        if r.status == 503 {
            assert_eq!(r.code.as_deref(), Some("unavailable"), "{r:?}");
            assert!(r.retry_after, "a 503 without Retry-After: {r:?}");
        }
    }
    // Before the stop, everything succeeds.
    let before: Vec<&Record> = records.iter().filter(|r| r.ended() < stop_began).collect();
    assert!(before.len() >= 20, "too little load before the outage");
    assert!(
        before.iter().all(|r| r.status != 503),
        "503 before the outage: {:?}",
        before.iter().find(|r| r.status == 503)
    );
    // While the database is down, everything is a 503, and a fast one: the pool gives up
    // after its acquire timeout (3 s) instead of waiting for the client to give up. The
    // bound leaves room for a busy machine; it protects against requests that hang.
    let during: Vec<&Record> = records
        .iter()
        .filter(|r| r.started > down && r.ended() < start_began)
        .collect();
    let during_api = during.iter().filter(|r| r.op != Op::Ready).count();
    assert!(
        during_api >= 10,
        "only {during_api} API requests while the database was down"
    );
    for replica in 0..2 {
        for op in [Op::Create, Op::Get, Op::Answer, Op::Ready] {
            assert!(
                during.iter().any(|r| r.op == op && r.replica == replica),
                "no {op:?} on replica {replica} while the database was down"
            );
        }
    }
    for r in &during {
        assert_eq!(r.status, 503, "during the outage: {r:?}");
        assert!(r.took < Duration::from_secs(6), "a slow 503: {r:?}");
    }
    let mut took: Vec<Duration> = during.iter().map(|r| r.took).collect();
    took.sort();
    // After the return, each replica serves again within seconds, by itself.
    let mut recovered = Vec::new();
    for replica in 0..2 {
        let first_ok = records
            .iter()
            .filter(|r| r.replica == replica && r.op == Op::Ready && r.started >= up)
            .filter(|r| r.status == 200)
            .map(Record::ended)
            .min()
            .unwrap_or_else(|| panic!("/readyz of replica {replica} never said 200 again"));
        let first_create = records
            .iter()
            .filter(|r| r.replica == replica && r.op == Op::Create && r.started >= up)
            .filter(|r| r.status == 201)
            .map(Record::ended)
            .min()
            .unwrap_or_else(|| panic!("replica {replica} never created again"));
        recovered.push((first_ok - up, first_create.saturating_duration_since(up)));
        let late_failures: Vec<&Record> = records
            .iter()
            .filter(|r| r.replica == replica && r.started > first_ok.max(first_create))
            .filter(|r| r.status == 503)
            .collect();
        assert!(
            late_failures.is_empty(),
            "replica {replica} failed again after recovering: {late_failures:?}"
        );
    }
    for (ready, create) in &recovered {
        // Generous: the listener's and the pool's retries are at most a few seconds apart.
        assert!(*ready < Duration::from_secs(15) && *create < Duration::from_secs(15));
    }

    // Nothing acknowledged is lost: every 201 is in the database, every accepted answer
    // with its value.
    let mut db = PgConnection::connect(&url).await.unwrap();
    let rows: Vec<(String, String, Option<Value>)> =
        sqlx::query_as("SELECT id::text, status, outcome FROM decisions")
            .fetch_all(&mut db)
            .await
            .unwrap();
    let stored: HashMap<String, (String, Option<Value>)> =
        rows.into_iter().map(|(id, st, o)| (id, (st, o))).collect();
    for id in &acked.created {
        assert!(stored.contains_key(id), "the created decision {id} is lost");
    }
    for (id, value) in &acked.answered {
        let (status, outcome) = &stored[id];
        assert_eq!(status, "answered", "the answer to {id} is lost");
        assert_eq!(outcome.as_ref(), Some(&json!(value)), "{id}");
    }
    let _ = db.close().await;
    // Both listeners saw the outage (and, by the wakes above, came back).
    for replica in [&a, &b] {
        wait_for_log(
            &replica.log,
            "lost the PostgreSQL listener",
            Duration::from_secs(1),
        )
        .await;
    }
    a.assert_healthy("A");
    b.assert_healthy("B");

    let count = |op: Op, status: u16| {
        records
            .iter()
            .filter(|r| r.op == op && r.status == status)
            .count()
    };
    eprintln!(
        "load: {} creates acknowledged, {} answers acknowledged; 503s: {} creates, {} gets, \
         {} answers, {} readyz",
        acked.created.len(),
        acked.answered.len(),
        count(Op::Create, 503),
        count(Op::Get, 503),
        count(Op::Answer, 503),
        count(Op::Ready, 503),
    );
    eprintln!(
        "during the outage: {} requests, all 503 in {} (median) / {} (max), min {}",
        took.len(),
        millis(took[took.len() / 2]),
        millis(took[took.len() - 1]),
        millis(took[0]),
    );
    for (replica, (ready, create)) in recovered.iter().enumerate() {
        eprintln!(
            "replica {replica} after the database returned: /readyz 200 in {}, first 201 in {}",
            millis(*ready),
            millis(*create)
        );
    }
    eprintln!(
        "awaits parked across the outage woken {} (A, answered on B) and {} (B, answered on \
         A) after the answer; awaits parked after it: {:?}",
        millis(across_a_wake),
        millis(across_b_wake),
        fresh_wakes.iter().map(|d| millis(*d)).collect::<Vec<_>>()
    );
    // Woken by the listener (NOTIFY or re-subscription), not by the 300 s await timeout.
    for d in fresh_wakes.iter().chain([&across_a_wake, &across_b_wake]) {
        assert!(*d < Duration::from_secs(10), "a slow wake: {d:?}");
    }
}

/// Waits (up to `limit`) for a log line containing `needle`; returns it.
async fn wait_for_log(log: &Mutex<Vec<String>>, needle: &str, limit: Duration) -> String {
    let started = Instant::now();
    loop {
        if let Some(line) = log.lock().unwrap().iter().find(|l| l.contains(needle)) {
            return line.clone();
        }
        assert!(
            started.elapsed() < limit,
            "no log line with {needle:?} within {limit:?}: {:#?}",
            log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_started_before_its_database_waits_for_it_and_says_why() {
    init_tls();
    let Some(cluster) = PgCluster::start() else {
        return;
    };
    let url = cluster.url();
    cluster.stop().await;

    // An admin command does not wait: it fails at once and says why.
    let started = Instant::now();
    let out = Command::new(BIN)
        .args(["key", "create"])
        .env("SAYSO_DATABASE_URL", &url)
        .output()
        .await
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot reach the database") && err.contains("refused"),
        "{err}"
    );
    // Bounded by the connect timeout (3 s), not by a client giving up.
    assert!(took < Duration::from_secs(10), "{took:?}");
    eprintln!(
        "admin command without its database: failed in {} ms: {}",
        took.as_millis(),
        err.trim()
    );

    // The server waits for it, saying why, and starts once it is there.
    let mut child = command(&url, &[("SAYSO_DB_WAIT_S", "60")])
        .spawn()
        .expect("sayso starts");
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut listening = collect_logs(&mut child, Arc::clone(&log));
    let line = wait_for_log(&log, "waiting for it", Duration::from_secs(15)).await;
    assert!(line.contains("refused"), "{line}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(listening.borrow().is_none(), "listening without a database");
    assert!(child.try_wait().unwrap().is_none(), "gave up too soon");
    cluster.start_again().await;
    let up = Instant::now();
    let base = wait_listening(&mut listening, Duration::from_secs(30)).await;
    let listening_after = up.elapsed();
    let key = read_key(&mut child)
        .await
        .expect("the first run prints a key");
    let client = Client::new();
    create(&client, &base, &key, "Started before its database").await;
    let (status, _) = send(client.get(format!("{base}/readyz"))).await;
    assert_eq!(status, StatusCode::OK);
    eprintln!(
        "server started before its database: listening {} ms after the database came up",
        listening_after.as_millis()
    );
    child.kill().await.unwrap();

    // It does not wait forever: past SAYSO_DB_WAIT_S it exits, saying why.
    cluster.stop().await;
    let started = Instant::now();
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        command(&url, &[("SAYSO_DB_WAIT_S", "2")]).output(),
    )
    .await
    .expect("sayso gives up")
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot reach the database (waited") && err.contains("refused"),
        "{err}"
    );
    eprintln!(
        "server without its database gave up after {} ms",
        started.elapsed().as_millis()
    );
}

/// How a request to `path` ends, and how long it took.
async fn timed_status(srv: &common::server::TestServer, path: &str) -> (StatusCode, Duration) {
    let started = Instant::now();
    let resp = srv
        .req(reqwest::Method::GET, path)
        .send()
        .await
        .expect("the server answers");
    (resp.status(), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_or_hung_database_gives_503_and_the_service_recovers_by_itself() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let mut url = url::Url::parse(&db.url).unwrap();
    let upstream = tokio::net::lookup_host((
        url.host_str().unwrap().to_string(),
        url.port().unwrap_or(5432),
    ))
    .await
    .unwrap()
    .next()
    .unwrap();
    let proxy = common::faulty_proxy::FaultyProxy::start(upstream).await;
    url.set_port(Some(proxy.addr.port())).unwrap();
    url.set_host(Some("127.0.0.1")).unwrap();
    let srv = common::server::TestServer::start(url.as_str()).await;
    let h = srv
        .create(json!({"question": "Still there?", "kind": "bool", "notify": "none"}))
        .await;
    let path = format!("/v1/decisions/{}", s(&h, "decision_id"));
    assert_eq!(timed_status(&srv, &path).await.0, StatusCode::OK);

    // Refused: 503 at once, for the API and for readiness.
    proxy.set(common::faulty_proxy::Fault::Refuse);
    let (status, took) = timed_status(&srv, &path).await;
    eprintln!("refused database: {status} after {took:?}");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        took < Duration::from_secs(10),
        "a refused database held a request {took:?}"
    );
    assert_eq!(
        timed_status(&srv, "/readyz").await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );

    // Hung (connections accepted, nothing answers): 503 after the connect timeout, not never.
    proxy.set(common::faulty_proxy::Fault::BlackHole);
    let (status, took) = timed_status(&srv, &path).await;
    eprintln!("hung database: {status} after {took:?}");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        took < Duration::from_secs(30),
        "a hung database held a request {took:?}"
    );

    // Restored: the service comes back by itself, with the decision intact.
    proxy.set(common::faulty_proxy::Fault::None);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, _) = timed_status(&srv, &path).await;
        if status == StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "no recovery: still {status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(timed_status(&srv, "/readyz").await.0, StatusCode::OK);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_sqlite_database_gives_503_to_writes_and_recovers() {
    use sqlx::SqliteConnection;
    let db = common::db::fresh_sqlite_url();
    let srv = common::server::TestServer::start(&db.url).await;
    let h = srv
        .create(json!({"question": "Locked out?", "kind": "bool", "notify": "none"}))
        .await;
    let path = format!("/v1/decisions/{}", s(&h, "decision_id"));
    // Another process takes the write lock and keeps it (a stuck backup script, say).
    let mut other = SqliteConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut other)
        .await
        .unwrap();
    let started = Instant::now();
    let (status, body) = send(
        srv.req(reqwest::Method::POST, "/v1/decisions")
            .json(&json!({"question": "Q", "kind": "bool", "notify": "none"})),
    )
    .await;
    eprintln!("locked database: {status} after {:?}", started.elapsed());
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "unavailable", "{body}");
    // Reads go on meanwhile (WAL).
    assert_eq!(timed_status(&srv, &path).await.0, StatusCode::OK);
    sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
    srv.create(json!({"question": "Back?", "kind": "bool", "notify": "none"}))
        .await;
    srv.stop().await;
}
