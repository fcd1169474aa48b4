//! The project's benchmark: `cargo build --release --workspace && ./target/release/bench`.
//!
//! It starts the release `sayso` server itself (SQLite in a temporary file, then PostgreSQL in
//! a fresh database), drives it over loopback with bounded counts and times, and measures
//! every figure beside a ceiling taken in the same run on the same machine: the raw
//! single-row insert rate of the same database through sqlx, a bare axum handler's request
//! rate. It prints one table and writes `target/bench.json`. See docs/PERFORMANCE.md.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use futures::StreamExt;
use hdrhistogram::Histogram;
use serde_json::{Value, json};
use sqlx::Connection;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Concurrent clients for the throughput scenarios.
const CONCURRENCY: usize = 16;

struct Settings {
    seconds: u64,
    awaits: usize,
    pg_url: String,
}

/// One line of the table: a figure beside its ceiling and its budget.
#[derive(serde::Serialize)]
struct Row {
    scenario: String,
    value: f64,
    unit: &'static str,
    ceiling: Option<f64>,
    ratio: Option<f64>,
    budget: String,
    holds: bool,
}

#[tokio::main]
async fn main() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["bare-server"] => return bare_server().await,
        // Drives a server started by hand, to profile it: `bench load get URL KEY SECONDS`.
        ["load", scenario, base, key, seconds] => {
            let server = Server::external(base, key);
            let seconds = seconds.parse().context("SECONDS must be a number")?;
            match scenario {
                "create" => create_rate(&server, seconds).await?,
                "get" => get_rate(&server, seconds).await?,
                other => return Err(anyhow!("no load scenario {other:?}; try create or get")),
            };
            return Ok(());
        }
        [] => {}
        _ => return Err(anyhow!("usage: bench [load create|get URL KEY SECONDS]")),
    }
    let settings = Settings {
        seconds: env_num("BENCH_SECONDS", 5),
        awaits: env_num("BENCH_AWAITS", 10_000) as usize,
        pg_url: std::env::var("BENCH_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into()),
    };
    let started = Instant::now();
    let mut rows = Vec::new();

    let dir = std::env::temp_dir().join(format!("sayso-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let sqlite_url = format!("sqlite://{}", dir.join("bench.db").display());
    let raw_sqlite_url = format!("sqlite://{}", dir.join("raw.db").display());

    eprintln!("== SQLite");
    let server = Server::start(&sqlite_url).await?;
    let create = create_rate(&server, settings.seconds).await?;
    let raw = raw_sqlite_insert_rate(&raw_sqlite_url, settings.seconds).await?;
    rows.push(ratio_row("create, SQLite (req/s)", create, raw, 0.5));
    let get = get_rate(&server, settings.seconds).await?;
    let bare = bare_rate(settings.seconds).await?;
    rows.push(ratio_row("get (req/s) vs bare axum", get, bare, 0.4));
    rows.extend(waiting(&server, settings.awaits).await?);
    rows.push(page_weight(&server).await?);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);

    eprintln!("== PostgreSQL");
    match PgDatabase::create(&settings.pg_url).await {
        Ok(db) => {
            let server = Server::start(&db.url).await?;
            let create = create_rate(&server, settings.seconds).await?;
            server.stop().await;
            let raw = raw_pg_insert_rate(&db.url, settings.seconds).await?;
            rows.push(ratio_row("create, PostgreSQL (req/s)", create, raw, 0.5));
            db.drop_it().await?;
        }
        Err(e) => eprintln!("PostgreSQL skipped: {e:#}"),
    }

    print_table(&rows);
    let json = json!({"seconds_per_scenario": settings.seconds, "awaits": settings.awaits,
        "elapsed_s": started.elapsed().as_secs_f64(), "rows": rows});
    let out = target_dir().join("bench.json");
    std::fs::write(&out, serde_json::to_vec_pretty(&json)?)?;
    eprintln!(
        "wrote {} in {:.0} s",
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn target_dir() -> std::path::PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent()?.parent().map(|p| p.to_path_buf()))
        .unwrap_or_else(|| "target".into())
}

fn ratio_row(scenario: &str, value: f64, ceiling: f64, budget: f64) -> Row {
    let ratio = value / ceiling;
    Row {
        scenario: scenario.into(),
        value,
        unit: "req/s",
        ceiling: Some(ceiling),
        ratio: Some(ratio),
        budget: format!("≥ {:.0} % of the ceiling", budget * 100.0),
        holds: ratio >= budget,
    }
}

fn plain_row(scenario: &str, value: f64, unit: &'static str, budget: &str, holds: bool) -> Row {
    Row {
        scenario: scenario.into(),
        value,
        unit,
        ceiling: None,
        ratio: None,
        budget: budget.into(),
        holds,
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "\n{:<44} {:>12} {:>8} {:>12} {:>7}  {:<28} ok",
        "scenario", "value", "unit", "ceiling", "ratio", "budget"
    );
    for r in rows {
        println!(
            "{:<44} {:>12.1} {:>8} {:>12} {:>7}  {:<28} {}",
            r.scenario,
            r.value,
            r.unit,
            r.ceiling.map(|c| format!("{c:.1}")).unwrap_or_default(),
            r.ratio
                .map(|c| format!("{:.0} %", c * 100.0))
                .unwrap_or_default(),
            r.budget,
            if r.holds { "yes" } else { "NO" }
        );
    }
}

/// The release server as a child process on port 0.
struct Server {
    /// None for a server started by someone else, which `stop` leaves running.
    child: Option<Child>,
    base: String,
    key: String,
    client: reqwest::Client,
}

impl Server {
    async fn start(database_url: &str) -> Result<Server> {
        let exe = std::env::current_exe()?.with_file_name("sayso");
        let mut child = Command::new(&exe)
            .env("SAYSO_DATABASE_URL", database_url)
            .env("SAYSO_LISTEN", "127.0.0.1:0")
            .env("SAYSO_LOG", "warn,sayso::cli=info")
            .env("SAYSO_LOG_FORMAT", "json")
            .env("SAYSO_RATE_LIMIT_PER_S", "0")
            .env("SAYSO_MAX_CONNECTIONS", "19000")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| {
                format!(
                    "starting {} (build it with `cargo build --release -p sayso`)",
                    exe.display()
                )
            })?;
        let mut err = BufReader::new(child.stderr.take().context("stderr")?).lines();
        let base = loop {
            let line = err
                .next_line()
                .await?
                .context("sayso exited before listening")?;
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["fields"]["message"] == "sayso is listening"
            {
                break format!("http://{}", v["fields"]["address"].as_str().unwrap_or(""));
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = err.next_line().await {} });
        let mut out = BufReader::new(child.stdout.take().context("stdout")?).lines();
        let mut key = None;
        while key.is_none() {
            let line = out.next_line().await?.context("no first-run key")?;
            key = line
                .split_whitespace()
                .find(|w| w.starts_with("sk_"))
                .map(String::from);
        }
        tokio::spawn(async move { while let Ok(Some(_)) = out.next_line().await {} });
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(CONCURRENCY * 2)
            .timeout(Duration::from_secs(900))
            .build()?;
        Ok(Server {
            child: Some(child),
            base,
            key: key.unwrap_or_default(),
            client,
        })
    }

    /// A server started by someone else.
    fn external(base: &str, key: &str) -> Server {
        Server {
            child: None,
            base: base.trim_end_matches('/').to_string(),
            key: key.to_string(),
            client: reqwest::Client::new(),
        }
    }

    fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    async fn create(&self, body: &Value) -> Result<Value> {
        let resp = self
            .client
            .post(format!("{}/v1/decisions", self.base))
            .bearer_auth(&self.key)
            .json(body)
            .send()
            .await?;
        if resp.status() != reqwest::StatusCode::CREATED {
            return Err(anyhow!("create answered {}", resp.status()));
        }
        Ok(resp.json().await?)
    }

    async fn stop(mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill().await;
        }
    }
}

/// Runs `op` from `CONCURRENCY` workers for `seconds` and returns completions per second.
async fn rate<F, Fut>(seconds: u64, op: F) -> Result<f64>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<()>> + Send,
{
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let (op, done) = (op.clone(), Arc::clone(&done));
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    op().await?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<_, anyhow::Error>(())
            })
        })
        .collect();
    for w in workers {
        w.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

async fn create_rate(server: &Server, seconds: u64) -> Result<f64> {
    let (client, url, key) = (
        server.client.clone(),
        format!("{}/v1/decisions", server.base),
        server.key.clone(),
    );
    let r = rate(seconds, move || {
        let (client, url, key) = (client.clone(), url.clone(), key.clone());
        async move {
            let resp = client
                .post(url)
                .bearer_auth(key)
                .json(&json!({"question": "Deploy the build to staging?", "kind": "bool", "notify": "none"}))
                .send()
                .await?;
            if resp.status() != reqwest::StatusCode::CREATED {
                return Err(anyhow!("create answered {}", resp.status()));
            }
            resp.bytes().await?;
            Ok(())
        }
    })
    .await?;
    eprintln!("create: {r:.0}/s");
    Ok(r)
}

async fn get_rate(server: &Server, seconds: u64) -> Result<f64> {
    let h = server
        .create(&json!({"question": "Read me", "kind": "bool", "notify": "none"}))
        .await?;
    let url = format!(
        "{}/v1/decisions/{}",
        server.base,
        h["decision_id"].as_str().unwrap_or("")
    );
    let (client, key) = (server.client.clone(), server.key.clone());
    let r = rate(seconds, move || {
        let (client, url, key) = (client.clone(), url.clone(), key.clone());
        async move {
            let resp = client.get(url).bearer_auth(key).send().await?;
            if !resp.status().is_success() {
                return Err(anyhow!("get answered {}", resp.status()));
            }
            resp.bytes().await?;
            Ok(())
        }
    })
    .await?;
    eprintln!("get: {r:.0}/s");
    Ok(r)
}

/// The ceiling of `get`: a bare axum handler returning a Decision-sized JSON body, in its own
/// process like the server.
async fn bare_rate(seconds: u64) -> Result<f64> {
    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe)
        .arg("bare-server")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut out = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let url = out.next_line().await?.context("bare server")?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONCURRENCY * 2)
        .build()?;
    let r = rate(seconds, move || {
        let (client, url) = (client.clone(), url.clone());
        async move {
            // Sent with a key like the real request, so both parse the same headers.
            client
                .get(url)
                .bearer_auth("sk_0000000000000000000000000000000000000000000")
                .send()
                .await?
                .bytes()
                .await?;
            Ok(())
        }
    })
    .await?;
    let _ = child.kill().await;
    eprintln!("bare axum: {r:.0}/s");
    Ok(r)
}

async fn bare_server() -> Result<()> {
    let body = json!({
        "decision_id": "01a1fcef-e019-774b-aab6-5bc859efd961", "kind": "bool", "question": "Read me",
        "project": null, "status": "pending", "outcome": null, "outcome_source": null, "custom": false,
        "remark": null, "answered_at": null, "created_at": "2026-11-21T07:32:01.123Z",
        "expires_at": "2026-11-21T08:32:01.123Z",
        "web_url": "http://127.0.0.1:8080/d/AaH87-AZd0uqtlvIWe_ZYfK7zSS0sAmq1LFGgUgaZNssTKbo",
        "metadata": {}, "answer_text": "\"Read me\" is still waiting for an answer; it expires at 2026-11-21T08:32:01Z.",
        "notifications": []
    });
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(move || {
            let body = body.clone();
            async move { axum::Json(body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://{}/", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}

/// The ceiling of `create` on SQLite: single-row inserts of a few columns of similar width,
/// same pragmas (WAL, synchronous=NORMAL), same concurrency, through sqlx.
async fn raw_sqlite_insert_rate(url: &str, seconds: u64) -> Result<f64> {
    use sqlx::sqlite::{
        SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
    };
    use std::str::FromStr;
    let opts = SqliteConnectOptions::from_str(url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5));
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(opts)
        .await?;
    sqlx::query(RAW_TABLE).execute(&pool).await?;
    let r = rate(seconds, move || {
        let pool = pool.clone();
        async move {
            let id = uuid::Uuid::now_v7().to_string();
            sqlx::query(
                "INSERT INTO raw (id, inbox_id, kind, question, spec, status, created_at, expires_at) \
                 VALUES (?, ?, 'bool', ?, ?, 'pending', ?, ?)",
            )
            .bind(&id)
            .bind(&id)
            .bind("Deploy the build to staging?")
            .bind(RAW_SPEC)
            .bind(1_i64)
            .bind(2_i64)
            .execute(&pool)
            .await?;
            Ok(())
        }
    })
    .await?;
    eprintln!("raw SQLite insert: {r:.0}/s");
    Ok(r)
}

const RAW_TABLE: &str = "CREATE TABLE IF NOT EXISTS raw (id text PRIMARY KEY, inbox_id text NOT NULL, \
    kind text NOT NULL, question text NOT NULL, spec text NOT NULL, status text NOT NULL, \
    created_at bigint NOT NULL, expires_at bigint NOT NULL)";

/// About the size of a stored bool decision's spec.
const RAW_SPEC: &str = r#"{"question":"Deploy the build to staging?","project":null,"body":{"kind":"bool","yes_label":"Yes","no_label":"No"},"context_md":null,"attachments":[],"allow_remark":true,"notify":"none","callback_url":null,"metadata":{},"default_outcome":null}"#;

/// The ceiling of `create` on PostgreSQL: the same, through a pool of the server's size.
async fn raw_pg_insert_rate(url: &str, seconds: u64) -> Result<f64> {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(10)
        .connect(url)
        .await?;
    sqlx::query(RAW_TABLE).execute(&pool).await?;
    let r = rate(seconds, move || {
        let pool = pool.clone();
        async move {
            let id = uuid::Uuid::now_v7().to_string();
            sqlx::query(
                "INSERT INTO raw (id, inbox_id, kind, question, spec, status, created_at, expires_at) \
                 VALUES ($1, $2, 'bool', $3, $4, 'pending', $5, $6)",
            )
            .bind(&id)
            .bind(&id)
            .bind("Deploy the build to staging?")
            .bind(RAW_SPEC)
            .bind(1_i64)
            .bind(2_i64)
            .execute(&pool)
            .await?;
            Ok(())
        }
    })
    .await?;
    eprintln!("raw PostgreSQL insert: {r:.0}/s");
    Ok(r)
}

/// A parked await: its Decision and when its response arrived.
type Parked = tokio::task::JoinHandle<Result<(Value, Instant)>>;

/// Held awaits and their memory, answer → wake latency with them parked, and a fan-in of
/// answers; checks that every await got its answer exactly once.
async fn waiting(server: &Server, n: usize) -> Result<Vec<Row>> {
    eprintln!("creating {n} decisions to wait on");
    let handles: Vec<Value> = futures::stream::iter(0..n)
        .map(|i| async move {
            server
                .create(&json!({"question": format!("Wait {i}"), "kind": "bool", "notify": "none", "ttl_minutes": 60}))
                .await
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    let rss_before = rss_kb(server.pid());
    // One connection per await, as real agents hold them.
    let await_client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(900))
        .build()?;
    let mut parked = Vec::with_capacity(n);
    for h in &handles {
        let url = format!(
            "{}/v1/decisions/{}/await?timeout_s=600",
            server.base,
            h["decision_id"].as_str().unwrap_or("")
        );
        let req = await_client.get(url).bearer_auth(&server.key);
        parked.push(tokio::spawn(async move {
            let resp = req.send().await?;
            let at = Instant::now();
            let v: Value = resp.json().await?;
            Ok::<_, anyhow::Error>((v, at))
        }));
    }
    // Let every await reach the server and park.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let rss_after = rss_kb(server.pid());
    let per_await = (rss_after.saturating_sub(rss_before)) as f64 * 1024.0 / n as f64;
    eprintln!("{n} awaits parked; RSS {rss_before} kB → {rss_after} kB");
    let mut rows = vec![
        plain_row(
            "idle awaits held at once",
            n as f64,
            "awaits",
            "10 000",
            n >= 10_000 && parked.iter().all(|p| !p.is_finished()),
        ),
        plain_row(
            "server memory per waiting request",
            per_await,
            "bytes",
            "≤ 40 KB",
            per_await <= 40.0 * 1024.0,
        ),
    ];

    // Answer → wake, one at a time, with the rest parked.
    let answer_client = reqwest::Client::new();
    let mut hist = Histogram::<u64>::new(3)?;
    let sample = 200.min(n / 2);
    let mut parked: Vec<Option<Parked>> = parked.into_iter().map(Some).collect();
    for (i, h) in handles.iter().enumerate().take(sample) {
        let web_url = h["web_url"].as_str().unwrap_or("");
        let resp = answer_client
            .post(web_url)
            .json(&json!({"value": "yes"}))
            .send()
            .await?;
        let answered = Instant::now();
        if !resp.status().is_success() {
            return Err(anyhow!("answer answered {}", resp.status()));
        }
        let (v, woke) = parked[i].take().context("await")?.await??;
        if v["status"] != "answered" {
            return Err(anyhow!("an await returned {}", v["status"]));
        }
        hist.record(woke.saturating_duration_since(answered).as_micros() as u64)?;
    }
    let p50 = hist.value_at_quantile(0.5) as f64 / 1000.0;
    let p99 = hist.value_at_quantile(0.99) as f64 / 1000.0;
    let max = hist.max() as f64 / 1000.0;
    eprintln!("answer → wake over {sample}: p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms");
    rows.push(plain_row(
        "answer → wake p50",
        p50,
        "ms",
        "≤ 2 ms",
        p50 <= 2.0,
    ));
    rows.push(plain_row(
        "answer → wake p99",
        p99,
        "ms",
        "≤ 20 ms",
        p99 <= 20.0,
    ));
    rows.push(plain_row(
        "answer → wake max",
        max,
        "ms",
        "(reported)",
        true,
    ));

    // Fan-in: the next 1 000 answered as fast as possible, all woken, none missed.
    let fan = 1000.min(n - sample);
    let started = Instant::now();
    let answers = futures::stream::iter(handles.iter().skip(sample).take(fan))
        .map(|h| {
            let client = answer_client.clone();
            let url = h["web_url"].as_str().unwrap_or("").to_string();
            async move {
                let resp = client
                    .post(url)
                    .json(&json!({"value": "no"}))
                    .send()
                    .await?;
                Ok::<_, anyhow::Error>(resp.status().is_success())
            }
        })
        .buffer_unordered(CONCURRENCY * 2)
        .collect::<Vec<_>>()
        .await;
    let accepted = answers
        .into_iter()
        .filter(|a| matches!(a, Ok(true)))
        .count();
    let mut woken = 0;
    for slot in parked.iter_mut().skip(sample).take(fan) {
        let (v, _) = slot.take().context("await")?.await??;
        if v["status"] == "answered" && v["outcome"] == false {
            woken += 1;
        }
    }
    let fan_s = started.elapsed().as_secs_f64();
    eprintln!("fan-in: {accepted} answers accepted, {woken} awaits woken in {fan_s:.2} s");
    let once = answered_once(server, &handles[..sample + fan]).await?;
    eprintln!(
        "audit trails: {once} of {} answered decisions have exactly one answer",
        sample + fan
    );
    rows.push(plain_row(
        "fan-in: 1 000 answers, awaits woken",
        woken as f64,
        "awaits",
        "all, none twice",
        woken == fan && accepted == fan && once == sample + fan,
    ));
    for slot in parked.into_iter().flatten() {
        slot.abort();
    }
    Ok(rows)
}

/// How many of the decisions of `handles` have exactly one `answered` event and no other
/// resolution in their audit trail: an answer neither lost nor counted twice.
async fn answered_once(server: &Server, handles: &[Value]) -> Result<usize> {
    let counts = futures::stream::iter(handles)
        .map(|h| async move {
            let url = format!(
                "{}/v1/decisions/{}/events",
                server.base,
                h["decision_id"].as_str().unwrap_or("")
            );
            let trail: Value = server
                .client
                .get(url)
                .bearer_auth(&server.key)
                .send()
                .await?
                .json()
                .await?;
            let resolutions: Vec<&str> = trail["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["kind"].as_str())
                .filter(|k| ["answered", "declined", "cancelled", "expired"].contains(k))
                .collect();
            Ok::<_, anyhow::Error>(resolutions == ["answered"])
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
    let mut once = 0;
    for c in counts {
        once += usize::from(c?);
    }
    Ok(once)
}

/// The answer page: its server time and the bytes it needs (HTML and stylesheet).
async fn page_weight(server: &Server) -> Result<Row> {
    let h = server
        .create(
            &json!({"question": "Which API design?", "kind": "choose", "notify": "none",
            "options": ["REST with cursor paging", "Async job + webhook", "GraphQL"],
            "context_md": "**Context**: the export endpoint.\n\n- a\n- b"}),
        )
        .await?;
    let url = h["web_url"].as_str().unwrap_or("").to_string();
    let client = reqwest::Client::new();
    let mut hist = Histogram::<u64>::new(3)?;
    let mut html = 0;
    for _ in 0..200 {
        let t = Instant::now();
        html = client.get(&url).send().await?.bytes().await?.len();
        hist.record(t.elapsed().as_micros() as u64)?;
    }
    let css = client
        .get(format!("{}/static/sayso.css", server.base))
        .send()
        .await?
        .bytes()
        .await?
        .len();
    let total = html + css;
    eprintln!(
        "answer page: {html} B HTML + {css} B CSS; p50 {:.2} ms, p99 {:.2} ms",
        hist.value_at_quantile(0.5) as f64 / 1000.0,
        hist.value_at_quantile(0.99) as f64 / 1000.0
    );
    Ok(plain_row(
        "answer page, bytes (HTML + CSS)",
        total as f64,
        "bytes",
        "≤ 30 KB, no other host",
        total <= 30 * 1024,
    ))
}

fn rss_kb(pid: Option<u32>) -> u64 {
    let Some(pid) = pid else { return 0 };
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// A fresh PostgreSQL database for one run, dropped at the end.
struct PgDatabase {
    admin: String,
    name: String,
    url: String,
}

impl PgDatabase {
    async fn create(admin: &str) -> Result<PgDatabase> {
        let name = format!("sayso_bench_{}", uuid::Uuid::new_v4().simple());
        let mut conn = sqlx::PgConnection::connect(admin).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await?;
        let mut url = url::Url::parse(admin)?;
        url.set_path(&name);
        Ok(PgDatabase {
            admin: admin.into(),
            name,
            url: url.to_string(),
        })
    }

    async fn drop_it(self) -> Result<()> {
        let mut conn = sqlx::PgConnection::connect(&self.admin).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        )))
        .execute(&mut conn)
        .await?;
        Ok(())
    }
}
