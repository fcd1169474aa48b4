//! The expiry sweep and retention clearing 100 000 decisions each while creates go on: how
//! long each takes, and what it costs the creates paced beside it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use hdrhistogram::Histogram;
use serde_json::json;

use crate::grown::{Fresh, GrownSize, Kind, short};
use crate::report::{Row, plain_row};
use crate::seed::{Db, Shape, Templates, seed};
use crate::server::Server;

/// Part 2: 100 000 decisions due for the expiry sweep and 100 000 resolved long before the
/// retention's cutoff, cleared by a server started on them, while creates go on at a steady
/// rate: each create's latency, and the time until none is left.
pub(crate) async fn clearing(
    kind: Kind,
    dir: &Path,
    pg_url: &str,
    size: &GrownSize,
) -> Result<Vec<Row>> {
    let s = kind.name();
    let fresh = Fresh::make(kind, dir, pg_url, "clearing").await?;
    let url = fresh.db.url();
    let first = Server::start(&url).await?;
    let templates = Templates::make(&first, false).await?;
    let key = first.key.clone();
    first.stop().await;
    seed(&fresh.db, &templates, Shape::DueForExpiry, size.clearing).await?;
    seed(&fresh.db, &templates, Shape::ResolvedLongAgo, size.clearing).await?;
    let due = |db: &Db| {
        let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
        let db = db.clone();
        async move {
            db.count(
                &format!(
                    "SELECT count(*) FROM decisions WHERE status = 'pending' AND expires_at <= {now}"
                ),
                "SELECT count(*) FROM decisions WHERE status = 'pending' AND expires_at <= now()",
            )
            .await
        }
    };
    let old = |db: &Db| {
        let cutoff = (time::OffsetDateTime::now_utc().unix_timestamp() - 30 * 86_400) * 1000;
        let db = db.clone();
        async move {
            db.count(
                &format!(
                    "SELECT count(*) FROM decisions WHERE resolved_at IS NOT NULL AND resolved_at < {cutoff}"
                ),
                "SELECT count(*) FROM decisions WHERE resolved_at IS NOT NULL \
                 AND resolved_at < now() - interval '30 days'",
            )
            .await
        }
    };
    let (due_before, old_before) = (due(&fresh.db).await?, old(&fresh.db).await?);
    eprintln!("{s}: {due_before} decisions due, {old_before} past retention; starting the server");

    let started = Instant::now();
    let server = Server::restart(&url, &[("SAYSO_RETENTION_DAYS", "30".into())], &key).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let load = tokio::spawn(paced_creates(
        server.base.clone(),
        server.key.clone(),
        size.creates_per_s,
        Arc::clone(&stop),
    ));
    let (mut expired_in, mut deleted_in) = (None, None);
    let limit = Duration::from_secs(300);
    while (expired_in.is_none() || deleted_in.is_none()) && started.elapsed() < limit {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if expired_in.is_none() && due(&fresh.db).await? == 0 {
            expired_in = Some(started.elapsed());
        }
        if deleted_in.is_none() && old(&fresh.db).await? == 0 {
            deleted_in = Some(started.elapsed());
        }
    }
    stop.store(true, Ordering::Relaxed);
    let hist = load.await??;
    server.stop().await;
    fresh.drop_it().await?;
    let max = hist.max() as f64 / 1000.0;
    let p99 = hist.value_at_quantile(0.99) as f64 / 1000.0;
    eprintln!(
        "{s}: cleared: expired in {expired_in:?}, deleted in {deleted_in:?}; {} creates, p50 {:.1} ms, p99 {p99:.1} ms, max {max:.1} ms",
        hist.len(),
        hist.value_at_quantile(0.5) as f64 / 1000.0
    );
    let n = short(size.clearing);
    let secs = |d: Option<Duration>| d.map(|d| d.as_secs_f64()).unwrap_or(f64::NAN);
    Ok(vec![
        plain_row(
            &format!("{s}: expiry sweep clears {n} due"),
            secs(expired_in),
            "s",
            &format!("all, within {} s", limit.as_secs()),
            expired_in.is_some() && due_before as usize >= size.clearing,
        ),
        plain_row(
            &format!("{s}: retention deletes {n} old"),
            secs(deleted_in),
            "s",
            &format!("all, within {} s", limit.as_secs()),
            deleted_in.is_some() && old_before as usize >= size.clearing,
        ),
        plain_row(
            &format!("{s}: create p99 while clearing"),
            p99,
            "ms",
            &format!(
                "(measured; {} creates at {}/s)",
                hist.len(),
                size.creates_per_s
            ),
            true,
        ),
        plain_row(
            &format!("{s}: longest create while clearing"),
            max,
            "ms",
            "longest create ≤ 100 ms",
            max <= 100.0 && !hist.is_empty(),
        ),
    ])
}

/// Creates at `per_s` a second from 10 clients (a connection each, one create every
/// 10 / `per_s` s) until `stop`: each one's latency, in µs.
async fn paced_creates(
    base: String,
    key: String,
    per_s: u64,
    stop: Arc<AtomicBool>,
) -> Result<Histogram<u64>> {
    const CLIENTS: u64 = 10;
    let every = Duration::from_secs_f64(CLIENTS as f64 / per_s.max(1) as f64);
    let authority = base.trim_start_matches("http://").to_string();
    let body = bytes::Bytes::from(serde_json::to_vec(
        &json!({"question": "Deploy the build to staging?", "kind": "bool", "notify": "none"}),
    )?);
    let begun = Instant::now();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (authority, key, body, stop) = (
                authority.clone(),
                key.clone(),
                body.clone(),
                Arc::clone(&stop),
            );
            tokio::spawn(async move {
                let mut hist = Histogram::<u64>::new(3)?;
                let mut slow = Vec::new();
                let stream = tokio::net::TcpStream::connect(&authority).await?;
                stream.set_nodelay(true)?;
                let (mut sender, conn) =
                    hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                        .await?;
                tokio::spawn(conn);
                // The clients start spread over one period, not all at once.
                tokio::time::sleep(every.mul_f64(c as f64 / CLIENTS as f64)).await;
                let mut tick = tokio::time::interval(every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                while !stop.load(Ordering::Relaxed) {
                    tick.tick().await;
                    let request = hyper::Request::builder()
                        .method(hyper::Method::POST)
                        .uri("/v1/decisions")
                        .header(hyper::header::HOST, &authority)
                        .header(hyper::header::AUTHORIZATION, format!("Bearer {key}"))
                        .header(hyper::header::CONTENT_TYPE, "application/json")
                        .body(http_body_util::Full::new(body.clone()))?;
                    let sent = Instant::now();
                    sender.ready().await?;
                    let resp = sender.send_request(request).await?;
                    let status = resp.status();
                    http_body_util::BodyExt::collect(resp.into_body()).await?;
                    if status != hyper::StatusCode::CREATED {
                        return Err(anyhow!("a create answered {status}"));
                    }
                    let took = sent.elapsed();
                    hist.record(took.as_micros() as u64)?;
                    if took > Duration::from_millis(50) {
                        slow.push((sent.duration_since(begun), took));
                    }
                }
                Ok::<_, anyhow::Error>((hist, slow))
            })
        })
        .collect();
    let mut all = Histogram::<u64>::new(3)?;
    let mut slow = Vec::new();
    for t in tasks {
        let (hist, s) = t.await??;
        all.add(hist)?;
        slow.extend(s);
    }
    // The slowest and when they came, to tell the sweep's batches from retention's.
    slow.sort_by_key(|(_, took)| std::cmp::Reverse(*took));
    for (at, took) in slow.iter().take(10) {
        eprintln!(
            "  a create of {:.1} ms at {:.2} s",
            took.as_secs_f64() * 1000.0,
            at.as_secs_f64()
        );
    }
    Ok(all)
}
