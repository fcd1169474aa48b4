//! The project's benchmark: `cargo build --release --workspace && ./target/release/bench`.
//!
//! It starts the release `sayso` server itself (SQLite in a temporary file, then PostgreSQL in
//! a fresh database), drives it over loopback with bounded counts and times, and measures
//! every figure beside a ceiling taken in the same run on the same machine: single-row
//! inserts straight through SQLite and through sqlx, the server's own `/healthz`, a bare axum
//! handler's request rate. It prints one table, writes `target/bench.json`, and writes the
//! run's tables into docs/PERFORMANCE.md (`BENCH_WRITE_DOCS=0` leaves the document alone).
//! `bench million` parks a million awaits on one process and writes its own table there.

mod ceiling;
mod chain;
mod clearing;
mod docs;
mod feed;
mod fleet;
mod grown;
mod hook;
mod load;
mod million;
mod notify;
mod page;
mod replicas;
mod report;
mod seed;
mod server;
mod waiting;

use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use serde_json::json;

use crate::ceiling::{
    PgDatabase, bare_rate, bare_server, healthz_rate, pgbench_insert_rate, raw_pg_insert_rate,
    raw_sqlite_insert_rate, sqlite_itself_insert_rate,
};
use crate::docs::Section;
use crate::fleet::{FleetSize, fleet};
use crate::load::{CONCURRENCY, MANY, create_rate, get_many_rate, get_rate, many_decisions};
use crate::million::{MillionSize, million};
use crate::page::page_weight;
use crate::report::{Row, plain_row, print_table, ratio_row, skipped_row};
use crate::server::Server;
use crate::waiting::waiting;

struct Settings {
    seconds: u64,
    awaits: usize,
    fleet: FleetSize,
    replica_waiters: usize,
    pg_url: String,
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
                "healthz" => ceiling::healthz_rate(&server.base, seconds).await?,
                other => {
                    return Err(anyhow!(
                        "no load scenario {other:?}; try create, get or healthz"
                    ));
                }
            };
            return Ok(());
        }
        // A million awaits on one process: minutes, and gigabytes on both sides.
        ["million"] => return run_million().await,
        ["grown"] => return grown_only(&[grown::Kind::Sqlite, grown::Kind::Postgres]).await,
        ["grown", "sqlite"] => return grown_only(&[grown::Kind::Sqlite]).await,
        ["grown", "postgres"] => return grown_only(&[grown::Kind::Postgres]).await,
        // The hook's decision alone: in this process, no server.
        ["hook"] => {
            print_table(&hook::hook_rows()?);
            return Ok(());
        }
        [] | ["feed"] | ["fleet"] | ["postgres"] | ["sqlite"] | ["waiting"] => {}
        _ => {
            return Err(anyhow!(
                "usage: bench [feed | fleet | grown [sqlite|postgres] | hook | million | postgres | sqlite | waiting | load create|get|healthz URL KEY SECONDS]"
            ));
        }
    }
    // A part alone, to look at one figure: neither writes the document.
    let fleet_only = args.first().is_some_and(|a| a == "fleet");
    let postgres_only = args.first().is_some_and(|a| a == "postgres");
    let sqlite_only = args.first().is_some_and(|a| a == "sqlite");
    let waiting_only = args.first().is_some_and(|a| a == "waiting");
    let settings = Settings {
        seconds: env_num("BENCH_SECONDS", 5),
        awaits: env_num("BENCH_AWAITS", 10_000) as usize,
        replica_waiters: env_num("BENCH_REPLICA_WAITERS", 30_000) as usize,
        fleet: FleetSize {
            h2_awaits: env_num("BENCH_FLEET_H2", 100_000) as usize,
            h1_awaits: env_num("BENCH_FLEET_H1", 19_000) as usize,
            h2_connections: env_num("BENCH_FLEET_CONNECTIONS", 250) as usize,
        },
        pg_url: std::env::var("BENCH_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into()),
    };
    let started = Instant::now();
    let mut run = Run::default();
    let mut rows: Vec<Row> = Vec::new();

    let dir = std::env::temp_dir().join(format!("sayso-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let sqlite_url = format!("sqlite://{}", dir.join("bench.db").display());
    let raw_sqlite_url = format!("sqlite://{}", dir.join("raw.db").display());

    if fleet_only {
        let server = Server::start(&sqlite_url).await?;
        rows.extend(fleet(&server, &settings.fleet).await?);
        server.stop().await;
        print_table(&rows);
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(());
    }

    // A person's feed with `BENCH_FEED_PENDING` items waiting, on a fresh SQLite server.
    if args.first().is_some_and(|a| a == "feed") {
        let server = Server::start(&sqlite_url).await?;
        let pending = env_num("BENCH_FEED_PENDING", 10_000) as usize;
        let result = feed::feed_rows(&server, pending).await;
        server.stop().await;
        rows.extend(result?);
        print_table(&rows);
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(());
    }

    // The parked awaits alone, on a fresh server: their memory is the process's after
    // `BENCH_AWAITS` creates, not after the throughput scenarios.
    if waiting_only {
        let server = Server::start(&sqlite_url).await?;
        rows.extend(waiting(&server, settings.awaits).await?);
        server.stop().await;
        print_table(&rows);
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(());
    }

    if postgres_only {
        postgres(&settings, &mut run).await?;
        print_table(&run.all_rows());
        return Ok(());
    }
    // The hook's first decision is timed before any load: it is what a fresh hook process
    // pays, and after the fleet this process is still closing 119 000 connections.
    let hook_rows = hook::hook_rows()?;
    eprintln!("== SQLite");
    let server = Server::start(&sqlite_url).await?;
    let many = many_decisions(&server).await?;
    let [create, itself, raw, healthz, get, get_many, bare] =
        in_turns(settings.seconds, async || {
            Ok([
                create_rate(&server, 1).await?,
                sqlite_itself_insert_rate(dir.join("itself.db"), 1).await?,
                raw_sqlite_insert_rate(&raw_sqlite_url, 1).await?,
                healthz_rate(&server.base, 1).await?,
                get_rate(&server, 1).await?,
                get_many_rate(&server, &many, 1).await?,
                bare_rate(1).await?,
            ])
        })
        .await?;
    // The ceilings themselves, so a reader sees which one a ratio is taken against.
    for (name, value) in [
        ("ceiling: the server's /healthz", healthz),
        ("ceiling: SQLite itself, single-row inserts", itself),
        ("ceiling: sqlx, single-row inserts", raw),
        ("ceiling: a bare axum handler", bare),
    ] {
        rows.push(plain_row(name, value, "req/s", "(measured)", true));
    }
    // The targets: against the physical limits, measured in this run.
    rows.push(ratio_row(
        "create, SQLite vs min(/healthz, SQLite itself)",
        create,
        healthz.min(itself),
        0.75,
    ));
    rows.push(ratio_row(
        "get vs /healthz, same server",
        get,
        healthz,
        0.75,
    ));
    // The budgets of docs/PERFORMANCE.md, against sqlx's own insert path and a bare handler.
    rows.push(ratio_row(
        "create, SQLite vs sqlx's inserts",
        create,
        raw,
        0.5,
    ));
    rows.push(ratio_row("get vs bare axum", get, bare, 0.4));
    // A read whose row changed since it was last shown (or was never shown) builds its view
    // afresh: held to a lower budget beside the same ceiling.
    rows.push(ratio_row(
        &format!("get, {MANY} decisions in turn, vs /healthz"),
        get_many,
        healthz,
        0.6,
    ));
    run.close("Creates and reads, SQLite", &mut rows);
    if sqlite_only {
        server.stop().await;
        print_table(&run.all_rows());
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(());
    }
    rows.extend(waiting(&server, settings.awaits).await?);
    rows.push(page_weight(&server).await?);
    server.stop().await;
    run.close("Waiting, SQLite, one connection an await", &mut rows);
    eprintln!("== notifications");
    match notify::Receivers::start().await {
        Ok(rx) => {
            let notify_url = format!("sqlite://{}", dir.join("notify.db").display());
            let env = [
                (
                    "SAYSO_SMTP_URL",
                    format!("smtp://127.0.0.1:{}", rx.smtp_port),
                ),
                ("SAYSO_ALLOW_PRIVATE_WEBHOOKS", "1".to_string()),
            ];
            let server = Server::start_with_env(&notify_url, &env).await?;
            notify::set_up_inbox(&notify_url, &rx).await?;
            rows.extend(notify::notifications(&server, &rx, settings.seconds).await?);
            server.stop().await;
        }
        Err(e) => {
            eprintln!("notifications skipped: {e:#}");
            rows.push(skipped_row("notifications", &format!("{e:#}")));
        }
    }
    run.close("Notifications (aiosmtpd and local receivers)", &mut rows);
    if settings.fleet.h2_awaits + settings.fleet.h1_awaits > 0 {
        // A server of its own, so the fleet's memory is measured from a fresh start.
        let fleet_url = format!("sqlite://{}", dir.join("fleet.db").display());
        let server = Server::start(&fleet_url).await?;
        rows.extend(fleet(&server, &settings.fleet).await?);
        server.stop().await;
    }
    run.close(
        "The fleet: HTTP/2 and HTTP/1.1 waiters in one process",
        &mut rows,
    );
    let _ = std::fs::remove_dir_all(&dir);

    rows.extend(hook_rows);
    run.close("The hook's decision, in process", &mut rows);

    postgres(&settings, &mut run).await?;

    let rows = run.all_rows();
    print_table(&rows);
    let elapsed = started.elapsed().as_secs_f64();
    if writes_docs() {
        let path = docs::performance_md();
        match docs::write(&path, &run.sections, elapsed) {
            Ok(()) => eprintln!("wrote the run into {}", path.display()),
            Err(e) => eprintln!("docs/PERFORMANCE.md not written: {e:#}"),
        }
    }
    let json = json!({"seconds_per_scenario": settings.seconds, "awaits": settings.awaits,
        "elapsed_s": elapsed, "rows": rows});
    let out = target_dir().join("bench.json");
    std::fs::write(&out, serde_json::to_vec_pretty(&json)?)?;
    eprintln!(
        "wrote {} in {:.0} s",
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `bench million`: its table, printed, and written into docs/PERFORMANCE.md in place of the
/// previous million's (`BENCH_WRITE_DOCS=0` leaves it alone).
async fn run_million() -> Result<()> {
    let size = MillionSize {
        awaits: env_num("BENCH_MILLION", 1_000_000) as usize,
        connections: env_num("BENCH_MILLION_CONNECTIONS", 1_000) as usize,
        answers: env_num("BENCH_MILLION_ANSWERS", 1_000) as usize,
        burst: env_num("BENCH_MILLION_BURST", 10_000) as usize,
        hold: std::time::Duration::from_secs(env_num("BENCH_MILLION_HOLD_S", 0)),
    };
    let started = Instant::now();
    let dir = std::env::temp_dir().join(format!("sayso-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let url = format!("sqlite://{}", dir.join("million.db").display());
    let rows = million(&url, &size).await;
    let _ = std::fs::remove_dir_all(&dir);
    let rows = rows?;
    print_table(&rows);
    let elapsed = started.elapsed().as_secs_f64();
    if writes_docs() {
        let path = docs::performance_md();
        match docs::write_million(&path, &rows, elapsed) {
            Ok(()) => eprintln!("wrote the million into {}", path.display()),
            Err(e) => eprintln!("docs/PERFORMANCE.md not written: {e:#}"),
        }
    }
    eprintln!("the million took {elapsed:.0} s");
    Ok(())
}

/// Whether the run writes docs/PERFORMANCE.md: yes unless `BENCH_WRITE_DOCS` says no.
fn writes_docs() -> bool {
    !std::env::var("BENCH_WRITE_DOCS").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "no" | "false" | "off"
        )
    })
}

/// `bench grown`: the costs on an empty and on a grown database, on each store of `kinds`
/// (docs/PERFORMANCE.md, "Flat as the data grows"). It does not write the document.
async fn grown_only(kinds: &[grown::Kind]) -> Result<()> {
    let started = Instant::now();
    let size = grown::GrownSize {
        decisions: env_num("BENCH_GROWN_DECISIONS", 1_000_000) as usize,
        smaller: env_num("BENCH_GROWN_SMALLER", 100_000) as usize,
        clearing: env_num("BENCH_GROWN_CLEARING", 100_000) as usize,
        turns: env_num("BENCH_GROWN_TURNS", 5),
        pool: env_num("BENCH_GROWN_POOL", 20_000) as usize,
        creates_per_s: env_num("BENCH_GROWN_CREATES_PER_S", 1000),
    };
    let pg_url = std::env::var("BENCH_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let dir = std::env::temp_dir().join(format!("sayso-grown-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut rows = Vec::new();
    for &kind in kinds {
        eprintln!(
            "== grown, {}",
            if kind == grown::Kind::Sqlite {
                "SQLite"
            } else {
                "PostgreSQL"
            }
        );
        match grown::grown(kind, &dir, &pg_url, &size).await {
            Ok(r) => rows.extend(r),
            Err(e) => {
                eprintln!("grown: {e:#}");
                rows.push(skipped_row("grown", &format!("{e:#}")));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    print_table(&rows);
    eprintln!("the run took {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The PostgreSQL part: creates beside both ceilings, then three replicas on one database.
async fn postgres(settings: &Settings, run: &mut Run) -> Result<()> {
    let mut rows = Vec::new();
    eprintln!("== PostgreSQL");
    match PgDatabase::create(&settings.pg_url).await {
        Ok(db) => {
            let server = Server::start(&db.url).await?;
            let create = create_rate(&server, settings.seconds).await?;
            server.stop().await;
            let raw = raw_pg_insert_rate(&db.url, settings.seconds).await?;
            rows.push(ratio_row("create, PostgreSQL (req/s)", create, raw, 0.5));
            let pgbench = pgbench_insert_rate(&db.url, settings.seconds, CONCURRENCY).await?;
            rows.push(ratio_row(
                "create, PostgreSQL vs pgbench inserts",
                create,
                pgbench,
                1.0,
            ));
            db.drop_it().await?;
            run.close("Creates, PostgreSQL", &mut rows);
            if settings.replica_waiters > 0 {
                eprintln!("== PostgreSQL, 3 replicas");
                let db = PgDatabase::create(&settings.pg_url).await?;
                rows.extend(
                    replicas::replicas(
                        &db.url,
                        3,
                        settings.replica_waiters,
                        settings.seconds,
                        pgbench,
                    )
                    .await?,
                );
                db.drop_it().await?;
                run.close("Three replicas on one PostgreSQL", &mut rows);
            }
        }
        Err(e) => {
            eprintln!("PostgreSQL skipped: {e:#}");
            rows.push(skipped_row("PostgreSQL", &format!("{e:#}")));
            run.close("Creates, PostgreSQL", &mut rows);
        }
    }

    Ok(())
}

/// The run so far: its sections, each closed with its rows.
#[derive(Default)]
struct Run {
    sections: Vec<Section>,
}

impl Run {
    /// Puts what `rows` holds under `title`, emptying it.
    fn close(&mut self, title: &'static str, rows: &mut Vec<Row>) {
        self.sections.push(Section {
            title,
            rows: std::mem::take(rows),
        });
    }

    fn all_rows(&self) -> Vec<Row> {
        self.sections.iter().flat_map(|s| s.rows.clone()).collect()
    }
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

/// Each rate `turn` measures, as the mean of `turns` turns of a second each.
///
/// This machine's speed moves from minute to minute: the same server binary created 30 800
/// and 36 200 decisions a second in two runs minutes apart, spending 45 and 36.5 µs of
/// CPU on each. Measured one after the other for seconds each, a figure and its ceiling fell
/// on different minutes, and the ratio moved with whichever was slow. Taken in turns, a slow
/// moment falls on all of them alike.
async fn in_turns<const N: usize>(
    turns: u64,
    turn: impl AsyncFn() -> Result<[f64; N]>,
) -> Result<[f64; N]> {
    let mut sums = [0.0; N];
    let turns = turns.max(1);
    for _ in 0..turns {
        for (sum, rate) in sums.iter_mut().zip(turn().await?) {
            *sum += rate;
        }
    }
    Ok(sums.map(|sum| sum / turns as f64))
}
