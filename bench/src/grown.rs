//! Flat as the data grows: the same server on an empty database and on one holding a million
//! decisions, measured in turns in one run; the expiry sweep and retention clearing 100 000
//! decisions each while creates go on; `sayso export` and `sayso backup` over 100 000 and
//! 1 000 000 decisions, in the same memory.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use crate::ceiling::PgDatabase;
use crate::chain::chain_seeded;
use crate::clearing::clearing;
use crate::load::{create_rate, http1_rate_over};
use crate::report::{Row, plain_row, ratio_row};
use crate::seed::{Db, Shape, Templates, seed};
use crate::server::{Server, quiet};

/// The sizes and times of the scenario (`BENCH_GROWN_*`).
pub struct GrownSize {
    /// Decisions in the grown database (a third each pending, answered, expired).
    pub decisions: usize,
    /// The smaller database `export` and `backup` are measured on first.
    pub smaller: usize,
    /// Decisions due for the expiry sweep, and as many for retention to delete.
    pub clearing: usize,
    /// Turns of a second for each rate, alternating the two databases.
    pub turns: u64,
    /// Decisions made (untimed) before each answering turn, for it to answer.
    pub pool: usize,
    /// Creates a second while the sweep and retention clear.
    pub creates_per_s: u64,
}

#[derive(Clone, Copy, PartialEq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Sqlite => "SQLite",
            Kind::Postgres => "PostgreSQL",
        }
    }
}

/// A database of its own for one part, and the PostgreSQL database to drop after.
pub(crate) struct Fresh {
    pub(crate) db: Db,
    pg: Option<PgDatabase>,
}

impl Fresh {
    pub(crate) async fn make(kind: Kind, dir: &Path, pg_url: &str, name: &str) -> Result<Fresh> {
        Ok(match kind {
            Kind::Sqlite => Fresh {
                db: Db::Sqlite(dir.join(format!("{name}.db"))),
                pg: None,
            },
            Kind::Postgres => {
                let pg = PgDatabase::create(pg_url).await?;
                Fresh {
                    db: Db::Postgres(pg.url.clone()),
                    pg: Some(pg),
                }
            }
        })
    }

    pub(crate) async fn drop_it(self) -> Result<()> {
        match (self.db, self.pg) {
            (_, Some(pg)) => pg.drop_it().await,
            (Db::Sqlite(path), None) => {
                for tail in ["", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(tail);
                    let _ = std::fs::remove_file(p);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

pub async fn grown(kind: Kind, dir: &Path, pg_url: &str, size: &GrownSize) -> Result<Vec<Row>> {
    let mut rows = throughput(kind, dir, pg_url, size).await?;
    rows.extend(clearing(kind, dir, pg_url, size).await?);
    Ok(rows)
}

/// Parts 1, 3 and 4: the grown database seeded in two steps (`export` and `backup` measured
/// after each), then creates, reads and answers on it and on an empty one, in turns.
async fn throughput(kind: Kind, dir: &Path, pg_url: &str, size: &GrownSize) -> Result<Vec<Row>> {
    let s = kind.name();
    let mut rows = Vec::new();
    let empty_db = Fresh::make(kind, dir, pg_url, "empty").await?;
    let grown_db = Fresh::make(kind, dir, pg_url, "grown").await?;
    let empty = Server::start(&empty_db.db.url()).await?;
    let first = Server::start(&grown_db.db.url()).await?;
    let templates = Templates::make(&first, true).await?;
    let key = first.key.clone();
    first.stop().await;

    // Seeded with its server stopped, in two steps: 100 000, then the rest.
    let mut seeding = seed(&grown_db.db, &templates, Shape::Mixed, size.smaller).await?;
    let chaining = Instant::now();
    chain_seeded(&grown_db.db, &templates).await?;
    seeding += chaining.elapsed();
    let grown = Server::restart(&grown_db.db.url(), &[], &key).await?;
    let smaller = take_out(kind, &grown_db.db, dir).await?;
    grown.stop().await;
    seeding += seed(
        &grown_db.db,
        &templates,
        Shape::Mixed,
        size.decisions - size.smaller,
    )
    .await?;
    let chaining = Instant::now();
    chain_seeded(&grown_db.db, &templates).await?;
    seeding += chaining.elapsed();
    let receipts = all_chained(&grown_db.db).await?;
    let held = grown_db
        .db
        .count(
            "SELECT count(*) FROM decisions",
            "SELECT count(*) FROM decisions",
        )
        .await?;
    eprintln!(
        "{s}: seeded {held} decisions in {:.1} s",
        seeding.as_secs_f64()
    );
    rows.push(plain_row(
        &format!("{s}: seeding {} decisions", thousands(size.decisions)),
        seeding.as_secs_f64(),
        "s",
        &format!("(measured; with {} receipts)", thousands(receipts as usize)),
        held as usize >= size.decisions,
    ));
    let grown = Server::restart(&grown_db.db.url(), &[], &key).await?;
    let bigger = take_out(kind, &grown_db.db, dir).await?;
    let bytes = grown_db.db.size().await?;
    rows.push(plain_row(
        &format!("{s}: database size at {}", short(size.decisions)),
        bytes as f64 / 1e6,
        "MB",
        &format!(
            "(measured; {:.0} bytes a decision)",
            bytes as f64 / held as f64
        ),
        true,
    ));
    for (what, at_smaller, at_bigger) in [
        ("export", smaller.export, bigger.export),
        ("backup", smaller.backup, bigger.backup),
    ] {
        let (Some(a), Some(b)) = (at_smaller, at_bigger) else {
            continue;
        };
        eprintln!(
            "{s}: {what}: {} decisions in {:.1} s, peak RSS {} kB; {} in {:.1} s, peak RSS {} kB",
            a.decisions, a.seconds, a.peak_kb, b.decisions, b.seconds, b.peak_kb
        );
        rows.push(plain_row(
            &format!("{s}: {what} at {}, peak RSS", short(size.smaller)),
            a.peak_kb as f64 / 1024.0,
            "MB",
            &format!("(measured; {:.1} s)", a.seconds),
            true,
        ));
        // SQLite keeps up to 2 MB of pages per connection (its default cache_size, which
        // sayso leaves), whatever the file's size, and the export reads through the store's
        // 8 pooled connections, its 8 readers and writer: the caches fill as the file grows
        // past them, by at most 17 × 2 MB, and stop there.
        let (caches_kb, caches) = if kind == Kind::Sqlite && what == "export" {
            (17 * 2048, " + 34 MB SQLite page caches")
        } else {
            (0, "")
        };
        rows.push(plain_row(
            &format!("{s}: {what} at {}, peak RSS", short(size.decisions)),
            b.peak_kb as f64 / 1024.0,
            "MB",
            &format!(
                "≤ 1.25 × at {}{caches} ({:.1} s)",
                short(size.smaller),
                b.seconds
            ),
            b.peak_kb as f64 <= 1.25 * a.peak_kb as f64 + caches_kb as f64,
        ));
    }

    // Reads spread over the grown database's decisions, not one row kept hot.
    let sample = sample_ids(&grown_db.db, 10_000).await?;
    let sample: Arc<Vec<String>> = Arc::new(
        sample
            .into_iter()
            .map(|id| format!("{}/v1/decisions/{id}", grown.base))
            .collect(),
    );
    let servers = [&empty, &grown];
    let (mut creates, mut gets, mut answers) = ([0.0; 2], [0.0; 2], [0.0; 2]);
    let mut old_gets = 0.0;
    let turns = size.turns.max(1);
    for turn in 0..turns {
        // The empty database first in one turn, the grown one in the next.
        let order = if turn % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            quiet(&servers).await;
            creates[i] += create_rate(servers[i], 1).await?;
        }
        let mut pools: [Vec<(String, String)>; 2] = Default::default();
        for i in order {
            pools[i] = make_many(servers[i], size.pool).await?;
        }
        // Reads of decisions of the same kind on both: the ones just made, 10 000 each
        // (round and round); then, on the grown database, of old ones picked at random.
        for i in order {
            let urls = Arc::new(
                pools[i]
                    .iter()
                    .take(10_000)
                    .map(|(id, _)| format!("{}/v1/decisions/{id}", servers[i].base))
                    .collect(),
            );
            let key = Some(servers[i].key.clone());
            quiet(&servers).await;
            let r = http1_rate_over(1, hyper::Method::GET, key, urls, None, false).await?;
            eprintln!("get over many: {r:.0}/s");
            gets[i] += r;
        }
        let key = Some(grown.key.clone());
        quiet(&servers).await;
        let r =
            http1_rate_over(1, hyper::Method::GET, key, Arc::clone(&sample), None, false).await?;
        eprintln!("get over old ones: {r:.0}/s");
        old_gets += r;
        for i in order {
            let urls = Arc::new(pools[i].iter().map(|(_, url)| url.clone()).collect());
            quiet(&servers).await;
            let r = http1_rate_over(
                1,
                hyper::Method::POST,
                None,
                urls,
                Some(json!({"value": "yes"})),
                true,
            )
            .await?;
            eprintln!("answer: {r:.0}/s");
            answers[i] += r;
        }
    }
    let mean = |sums: [f64; 2]| sums.map(|v| v / turns as f64);
    for (what, [on_empty, on_grown]) in [
        ("create", mean(creates)),
        ("get", mean(gets)),
        ("answer", mean(answers)),
    ] {
        rows.push(plain_row(
            &format!("{s}: {what} on an empty database"),
            on_empty,
            "req/s",
            "(the same run, in turns)",
            true,
        ));
        rows.push(
            ratio_row(
                &format!("{s}: {what} at {}, grown/empty", short(size.decisions)),
                on_grown,
                on_empty,
                0.85,
            )
            .budget_text("grown/empty ≥ 85 %"),
        );
    }
    // A person's feed of 10 000 on the grown database: its first page's server time and
    // its paging, beside the million.
    for row in crate::feed::feed_rows(&grown, 10_000).await? {
        rows.push(row.prefixed(&format!("{s}, {} in the database", short(size.decisions))));
    }
    rows.push(
        ratio_row(
            &format!(
                "{s}: get of old decisions at {}, vs empty",
                short(size.decisions)
            ),
            old_gets / turns as f64,
            mean(gets)[0],
            0.0,
        )
        .budget_text("(measured; 10 000 picked at random)"),
    );
    empty.stop().await;
    grown.stop().await;
    empty_db.drop_it().await?;
    grown_db.drop_it().await?;
    Ok(rows)
}

/// Every resolution in `db` has its receipt: the seed wrote them as the server would have.
async fn all_chained(db: &Db) -> Result<i64> {
    let sql = "SELECT (SELECT count(*) FROM decisions WHERE status <> 'pending') \
               - (SELECT count(*) FROM receipts)";
    let missing = db.count(sql, sql).await?;
    if missing != 0 {
        return Err(anyhow!("{missing} resolutions without a receipt"));
    }
    db.count(
        "SELECT count(*) FROM receipts",
        "SELECT count(*) FROM receipts",
    )
    .await
}

/// What `export` and `backup` took over one database.
#[derive(Clone, Copy)]
struct TakenOut {
    decisions: u64,
    seconds: f64,
    peak_kb: u64,
}

struct Both {
    export: Option<TakenOut>,
    backup: Option<TakenOut>,
}

/// Runs `sayso export` (and on SQLite `sayso backup`) on `db` beside its live server, each
/// a process of its own whose peak RSS is read.
async fn take_out(kind: Kind, db: &Db, dir: &Path) -> Result<Both> {
    let held = db
        .count(
            "SELECT count(*) FROM decisions",
            "SELECT count(*) FROM decisions",
        )
        .await? as u64;
    let mut export = Command::new(Server::exe());
    export
        .args(["export", "--inbox", "default"])
        .env("SAYSO_DATABASE_URL", db.url());
    let (seconds, peak_kb, said) = peak_rss(export).await?;
    let exported = said
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse::<u64>().ok())
        .with_context(|| format!("sayso export said {said:?}"))?;
    if exported != held {
        return Err(anyhow!("sayso export wrote {exported} of {held} decisions"));
    }
    let export = Some(TakenOut {
        decisions: exported,
        seconds,
        peak_kb,
    });
    let backup = if kind == Kind::Sqlite {
        let path = dir.join(format!("backup-{held}.db"));
        let mut backup = Command::new(Server::exe());
        backup
            .arg("backup")
            .arg(&path)
            .env("SAYSO_DATABASE_URL", db.url());
        let (seconds, peak_kb, _) = peak_rss(backup).await?;
        let copied = Db::Sqlite(path.clone())
            .count(
                "SELECT count(*) FROM decisions",
                "SELECT count(*) FROM decisions",
            )
            .await? as u64;
        let _ = std::fs::remove_file(&path);
        if copied != held {
            return Err(anyhow!("sayso backup copied {copied} of {held} decisions"));
        }
        Some(TakenOut {
            decisions: copied,
            seconds,
            peak_kb,
        })
    } else {
        // PostgreSQL is backed up with pg_dump (docs/OPERATIONS.md), not by sayso.
        None
    };
    Ok(Both { export, backup })
}

/// Runs `cmd` with its output thrown away and its peak resident memory (VmHWM) read every
/// few milliseconds until it exits: seconds, kB, and the last line of its stderr.
async fn peak_rss(mut cmd: Command) -> Result<(f64, u64, String)> {
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().context("pid")?;
    let mut err = child.stderr.take().context("stderr")?;
    let said = tokio::spawn(async move {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text).await;
        text
    });
    let mut peak = 0;
    let status = loop {
        // VmHWM is the peak so far: the last reading before exit is the process's peak but
        // for the last few milliseconds.
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status"))
            && let Some(kb) = text
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        {
            peak = peak.max(kb);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let seconds = started.elapsed().as_secs_f64();
    let said = said.await?;
    if !status.success() {
        return Err(anyhow!("{cmd:?} failed: {said}"));
    }
    let last = said.lines().last().unwrap_or("").to_string();
    Ok((seconds, peak, last))
}

/// `n` ids of the database's decisions, picked at random.
async fn sample_ids(db: &Db, n: usize) -> Result<Vec<String>> {
    match db {
        Db::Sqlite(path) => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || -> Result<Vec<String>> {
                let conn = rusqlite::Connection::open_with_flags(
                    &path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                )?;
                let mut q = conn.prepare("SELECT id FROM decisions ORDER BY random() LIMIT ?1")?;
                let ids = q
                    .query_map([n as i64], |r| r.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(ids)
            })
            .await?
        }
        Db::Postgres(url) => {
            use sqlx::Connection;
            let mut conn = sqlx::PgConnection::connect(url).await?;
            let ids: Vec<(String,)> =
                sqlx::query_as("SELECT id::text FROM decisions ORDER BY random() LIMIT $1")
                    .bind(n as i64)
                    .fetch_all(&mut conn)
                    .await?;
            Ok(ids.into_iter().map(|(id,)| id).collect())
        }
    }
}

/// Makes `n` pending decisions through the API (over HTTP/2, 256 at once): their ids and
/// answer pages.
async fn make_many(server: &Server, n: usize) -> Result<Vec<(String, String)>> {
    let clients: Vec<reqwest::Client> = (0..4)
        .map(|_| {
            reqwest::Client::builder()
                .http2_prior_knowledge()
                .timeout(Duration::from_secs(60))
                .build()
        })
        .collect::<Result<_, _>>()?;
    futures::stream::iter(0..n)
        .map(|i| {
            let client = clients[i % clients.len()].clone();
            let url = format!("{}/v1/decisions", server.base);
            let key = server.key.clone();
            async move {
                let resp = client
                    .post(url)
                    .bearer_auth(key)
                    .json(
                        &json!({"question": format!("Ship change {i}?"), "kind": "bool",
                        "notify": "none"}),
                    )
                    .send()
                    .await?;
                if resp.status() != reqwest::StatusCode::CREATED {
                    return Err(anyhow!("create answered {}", resp.status()));
                }
                let v: Value = resp.json().await?;
                Ok((
                    v["decision_id"].as_str().unwrap_or("").to_string(),
                    v["web_url"].as_str().unwrap_or("").to_string(),
                ))
            }
        })
        .buffer_unordered(256)
        .collect::<Vec<Result<_>>>()
        .await
        .into_iter()
        .collect()
}

/// 1 000 000 as "1M", 100 000 as "100k".
pub(crate) fn short(n: usize) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

pub(crate) fn thousands(n: usize) -> String {
    crate::report::figure(n as f64)
}
