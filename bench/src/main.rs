//! The project's benchmark: `cargo build --release --workspace && ./target/release/bench`.
//!
//! It starts the release `sayso` server itself (SQLite in a temporary file, then PostgreSQL in
//! a fresh database), drives it over loopback with bounded counts and times, and measures
//! every figure beside a ceiling taken in the same run on the same machine: the raw
//! single-row insert rate of the same database through sqlx, a bare axum handler's request
//! rate. It prints one table and writes `target/bench.json`. See docs/PERFORMANCE.md.

mod ceiling;
mod fleet;
mod load;
mod notify;
mod page;
mod replicas;
mod report;
mod server;
mod waiting;

use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use serde_json::json;

use crate::ceiling::{
    PgDatabase, bare_rate, bare_server, healthz_rate, pgbench_insert_rate, raw_pg_insert_rate,
    raw_sqlite_insert_rate,
};
use crate::fleet::{FleetSize, fleet};
use crate::load::{CONCURRENCY, create_rate, get_rate};
use crate::page::page_weight;
use crate::report::{print_table, ratio_row};
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
                other => return Err(anyhow!("no load scenario {other:?}; try create or get")),
            };
            return Ok(());
        }
        [] | ["fleet"] => {}
        _ => {
            return Err(anyhow!(
                "usage: bench [fleet | load create|get URL KEY SECONDS]"
            ));
        }
    }
    let fleet_only = args.first().is_some_and(|a| a == "fleet");
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
    let mut rows = Vec::new();

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

    eprintln!("== SQLite");
    let server = Server::start(&sqlite_url).await?;
    let create = create_rate(&server, settings.seconds).await?;
    let raw = raw_sqlite_insert_rate(&raw_sqlite_url, settings.seconds).await?;
    rows.push(ratio_row("create, SQLite (req/s)", create, raw, 0.5));
    let healthz = healthz_rate(&server.base, settings.seconds).await?;
    rows.push(ratio_row(
        "create, SQLite vs min(/healthz, raw insert)",
        create,
        healthz.min(raw),
        0.2,
    ));
    let get = get_rate(&server, settings.seconds).await?;
    let bare = bare_rate(settings.seconds).await?;
    rows.push(ratio_row("get (req/s) vs bare axum", get, bare, 0.4));
    rows.extend(waiting(&server, settings.awaits).await?);
    rows.push(page_weight(&server).await?);
    server.stop().await;
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
        Err(e) => eprintln!("notifications skipped: {e:#}"),
    }
    if settings.fleet.h2_awaits + settings.fleet.h1_awaits > 0 {
        // A server of its own, so the fleet's memory is measured from a fresh start.
        let fleet_url = format!("sqlite://{}", dir.join("fleet.db").display());
        let server = Server::start(&fleet_url).await?;
        rows.extend(fleet(&server, &settings.fleet).await?);
        server.stop().await;
    }
    let _ = std::fs::remove_dir_all(&dir);

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
                0.4,
            ));
            db.drop_it().await?;
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
            }
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
