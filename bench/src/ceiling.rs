//! The ceilings measured in the same run: a bare axum handler and the server's own `/healthz`
//! for `get`, single-row inserts straight through SQLite (and through sqlx) for `create`, and
//! the fresh PostgreSQL database the run uses.

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;
use sqlx::Connection;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::load::{Repeated, http1_rate, rate};

/// The ceiling of `get`: a bare axum handler returning a Decision-sized JSON body, in its own
/// process like the server.
pub async fn bare_rate(seconds: u64) -> Result<f64> {
    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe)
        .arg("bare-server")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut out = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let url = out.next_line().await?.context("bare server")?;
    let r = http1_rate(
        seconds,
        Repeated {
            url,
            method: hyper::Method::GET,
            // Sent with a key like the real request, so both parse the same headers.
            key: Some("sk_0000000000000000000000000000000000000000000".into()),
            body: None,
            expect: hyper::StatusCode::OK,
        },
    )
    .await?;
    let _ = child.kill().await;
    eprintln!("bare axum: {r:.0}/s");
    Ok(r)
}

pub async fn bare_server() -> Result<()> {
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

/// The ceiling of `create` on SQLite through sqlx, the driver the server uses: single-row
/// inserts of a few columns of similar width, same pragmas (WAL, synchronous=NORMAL), same
/// concurrency. Slower than SQLite itself (`sqlite_itself_insert_rate`): each statement is a
/// message to the connection's thread and a wake-up back.
pub async fn raw_sqlite_insert_rate(url: &str, seconds: u64) -> Result<f64> {
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

/// The physical ceiling of `create` on SQLite: single-row inserts of the same table, each its
/// own statement and its own commit, straight through SQLite (the bundled library sqlx links
/// too) on one connection, with the server's durability (WAL, `synchronous=NORMAL`). SQLite
/// admits one writer at a time, so one connection inserting in a loop is as fast as it goes;
/// no async runtime, thread hand-off or pool sits around it.
pub async fn sqlite_itself_insert_rate(path: std::path::PathBuf, seconds: u64) -> Result<f64> {
    let r = tokio::task::spawn_blocking(move || -> Result<f64> {
        let conn = rusqlite::Connection::open(&path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.execute(RAW_TABLE, [])?;
        let mut insert = conn.prepare(
            "INSERT INTO raw (id, inbox_id, kind, question, spec, status, created_at, expires_at) \
             VALUES (?1, ?2, 'bool', ?3, ?4, 'pending', ?5, ?6)",
        )?;
        let started = std::time::Instant::now();
        let deadline = started + Duration::from_secs(seconds);
        let mut done = 0u64;
        while std::time::Instant::now() < deadline {
            let id = uuid::Uuid::now_v7().to_string();
            insert.execute(rusqlite::params![
                id,
                id,
                "Deploy the build to staging?",
                RAW_SPEC,
                1_i64,
                2_i64
            ])?;
            done += 1;
        }
        Ok(done as f64 / started.elapsed().as_secs_f64())
    })
    .await??;
    eprintln!("SQLite itself, single-row inserts: {r:.0}/s");
    Ok(r)
}

const RAW_TABLE: &str = "CREATE TABLE IF NOT EXISTS raw (id text PRIMARY KEY, inbox_id text NOT NULL, \
    kind text NOT NULL, question text NOT NULL, spec text NOT NULL, status text NOT NULL, \
    created_at bigint NOT NULL, expires_at bigint NOT NULL)";

/// About the size of a stored bool decision's spec.
const RAW_SPEC: &str = r#"{"question":"Deploy the build to staging?","project":null,"body":{"kind":"bool","yes_label":"Yes","no_label":"No"},"context_md":null,"attachments":[],"allow_remark":true,"notify":"none","callback_url":null,"metadata":{},"default_outcome":null}"#;

/// The ceiling of `create` on PostgreSQL: the same, through a pool of the server's size.
pub async fn raw_pg_insert_rate(url: &str, seconds: u64) -> Result<f64> {
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

/// A fresh PostgreSQL database for one run, dropped at the end.
pub struct PgDatabase {
    admin: String,
    name: String,
    pub url: String,
}

impl PgDatabase {
    pub async fn create(admin: &str) -> Result<PgDatabase> {
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

    pub async fn drop_it(self) -> Result<()> {
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

/// The ceiling the scale targets name for PostgreSQL: pgbench's own rate of single-row
/// inserts (a commit each) at `clients` clients, into a table of similar width.
pub async fn pgbench_insert_rate(url: &str, seconds: u64, clients: usize) -> Result<f64> {
    let mut conn = sqlx::PgConnection::connect(url).await?;
    sqlx::query(RAW_TABLE).execute(&mut conn).await?;
    let script = std::env::temp_dir().join(format!("sayso-pgbench-{}.sql", std::process::id()));
    std::fs::write(
        &script,
        format!(
            "INSERT INTO raw (id, inbox_id, kind, question, spec, status, created_at, expires_at) \
             VALUES (gen_random_uuid()::text, 'i', 'bool', 'Deploy the build to staging?', \
             '{}', 'pending', 1, 2);\n",
            // pgbench reads `:name` as one of its variables: the same length, no colons.
            RAW_SPEC.replace(':', "=")
        ),
    )?;
    let out = Command::new("pgbench")
        .args(["-n", "-j", "2", "-M", "prepared"])
        .args(["-c", &clients.to_string(), "-T", &seconds.to_string(), "-f"])
        .arg(&script)
        .arg(url)
        .output()
        .await
        .context("pgbench (Debian: postgresql-contrib or postgresql-client)")?;
    let _ = std::fs::remove_file(&script);
    let text = String::from_utf8_lossy(&out.stdout);
    let tps = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("tps = "))
        .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok())
        .with_context(|| {
            format!(
                "no tps in pgbench's output: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    eprintln!("pgbench single-row inserts, {clients} clients: {tps:.0}/s");
    Ok(tps)
}

/// The server's own `/healthz` rate: the HTTP path without any work, the other half of the
/// SQLite create ceiling.
pub async fn healthz_rate(base: &str, seconds: u64) -> Result<f64> {
    let r = http1_rate(
        seconds,
        Repeated {
            url: format!("{base}/healthz"),
            method: hyper::Method::GET,
            key: None,
            body: None,
            expect: hyper::StatusCode::OK,
        },
    )
    .await?;
    eprintln!("/healthz: {r:.0}/s");
    Ok(r)
}
