//! A million agents waiting on one server process: `bench million`.
//!
//! A first server creates the decisions; a second, fresh process on the same database then
//! holds every await at once, each an HTTP/2 stream (`SAYSO_H2_MAX_STREAMS` of them to a
//! connection), so its memory per await is what waiting costs and nothing the creates left
//! behind. The awaits come from this process through `h2` itself, a stream and a small task
//! each, so the load generator's own memory stays a fraction of the server's (it is measured
//! and printed too). Then: answers one at a time, each timed from its response to the wake of
//! its own await among the million, and a burst of answers with every waiter checked to wake
//! exactly once, with its own answer, and no other to wake.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use bytes::Bytes;
use futures::StreamExt;
use hdrhistogram::Histogram;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use crate::report::{Row, plain_row};
use crate::server::{Server, rss_kb};

/// How many, over how many connections, and how many answers.
pub struct MillionSize {
    pub awaits: usize,
    pub connections: usize,
    /// Answered one at a time, each wake timed.
    pub answers: usize,
    /// Answered all at once.
    pub burst: usize,
    /// Seconds to hold them all parked before answering, to look at the server from outside
    /// (a heap profile, `/proc`).
    pub hold: Duration,
}

/// What an await's response brought: its status, its body, when its head arrived.
type Woken = (u16, Bytes, Instant);

/// A decision to wait on: its id, and for those the run answers, its page's path (the
/// server that waits is not the one that created it, and listens elsewhere).
struct Handle {
    id: String,
    page: Option<String>,
}

pub async fn million(database_url: &str, size: &MillionSize) -> Result<Vec<Row>> {
    let streams = size.awaits.div_ceil(size.connections.max(1));
    let env = [
        // The run outlasts the default longest wait of ten minutes.
        ("SAYSO_MAX_AWAIT_S", "7200".to_string()),
        ("SAYSO_H2_MAX_STREAMS", streams.to_string()),
    ];
    let answered: Vec<usize> = spread(size.awaits, size.answers + size.burst);
    let creator = Server::start_with_env(database_url, &env).await?;
    let handles = create(&creator, size.awaits, &answered).await?;
    // The creates' freed buffers stay with the process that made them: the waiting is
    // measured on a fresh one.
    let key = creator.key.clone();
    creator.stop().await;
    let server = Server::restart(database_url, &env, &key).await?;
    let generator_before = rss_kb(Some(std::process::id()));
    let server_before = server.resident_bytes().await?;

    let started = Instant::now();
    let parked = park(&server, &handles, size.connections).await?;
    let held = server.wait_until_parked(size.awaits).await?;
    let parking_s = started.elapsed().as_secs_f64();
    // Let the last streams settle before reading memory.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let server_after = server.resident_bytes().await?;
    let generator_after = rss_kb(Some(std::process::id()));
    let per_await = server_after.saturating_sub(server_before) as f64 / held.max(1) as f64;
    let generator_per_await =
        generator_after.saturating_sub(generator_before) as f64 * 1024.0 / held.max(1) as f64;
    eprintln!(
        "{held} awaits parked over {} connections in {parking_s:.0} s; server RSS {} → {} MB, \
         load generator {} → {} MB",
        size.connections,
        server_before >> 20,
        server_after >> 20,
        generator_before >> 10,
        generator_after >> 10
    );
    let mut rows = vec![
        plain_row(
            "million: awaits parked at once, HTTP/2",
            held as f64,
            "awaits",
            &format!("{}", size.awaits),
            held >= size.awaits,
        ),
        plain_row(
            "million: server memory per await",
            per_await,
            "bytes",
            "≤ 8 KB",
            per_await <= 8.0 * 1024.0,
        ),
        plain_row(
            "million: server memory, all awaits",
            server_after as f64 / f64::from(1 << 20),
            "MB",
            "(reported)",
            true,
        ),
        plain_row(
            "million: load generator memory per await",
            generator_per_await,
            "bytes",
            "(reported)",
            true,
        ),
        plain_row(
            "million: time to park them all",
            parking_s,
            "s",
            "(reported)",
            true,
        ),
    ];
    if !size.hold.is_zero() {
        eprintln!("holding them parked for {} s", size.hold.as_secs());
        tokio::time::sleep(size.hold).await;
    }
    let mut parked: Vec<Option<JoinHandle<Result<Woken>>>> = parked.into_iter().map(Some).collect();

    // Answer → wake, one at a time, while the rest wait.
    let answerer = reqwest::Client::builder()
        .http2_prior_knowledge()
        .timeout(Duration::from_secs(60))
        .build()?;
    let mut hist = Histogram::<u64>::new(3)?;
    let (one_by_one, burst) = answered.split_at(size.answers.min(answered.len()));
    for &i in one_by_one {
        let answered_at = answer(&server, &answerer, &handles[i], "yes").await?;
        let (status, body, woke) = parked[i].take().context("await")?.await??;
        check(status, &body, &handles[i].id, true)?;
        hist.record(woke.saturating_duration_since(answered_at).as_micros() as u64)?;
    }
    let p50 = hist.value_at_quantile(0.5) as f64 / 1000.0;
    let p99 = hist.value_at_quantile(0.99) as f64 / 1000.0;
    eprintln!(
        "answer → wake over {}: p50 {p50:.2} ms, p99 {p99:.2} ms, max {:.2} ms",
        one_by_one.len(),
        hist.max() as f64 / 1000.0
    );
    rows.push(plain_row(
        "million: answer → wake p50",
        p50,
        "ms",
        "≤ 2 ms",
        p50 <= 2.0,
    ));
    rows.push(plain_row(
        "million: answer → wake p99",
        p99,
        "ms",
        "≤ 20 ms",
        p99 <= 20.0,
    ));

    // The burst: every answer at once (64 in flight), then every waiter checked.
    let answerer = Arc::new(answerer);
    let started = Instant::now();
    let accepted = futures::stream::iter(burst.iter().copied())
        .map(|i| {
            let answerer = Arc::clone(&answerer);
            let (h, server) = (&handles[i], &server);
            async move { answer(server, &answerer, h, "no").await.is_ok() }
        })
        .buffer_unordered(64)
        .filter(|ok| futures::future::ready(*ok))
        .count()
        .await;
    let mut woken = 0;
    for &i in burst {
        let (status, body, _) = parked[i].take().context("await")?.await??;
        if check(status, &body, &handles[i].id, false).is_ok() {
            woken += 1;
        }
    }
    let burst_s = started.elapsed().as_secs_f64();
    // None of the others may have returned: each was woken by its own answer only.
    let stray = parked
        .iter()
        .filter(|p| p.as_ref().is_some_and(JoinHandle::is_finished))
        .count();
    eprintln!(
        "burst of {}: {accepted} answers accepted, {woken} waiters woken by their own in \
         {burst_s:.1} s, {stray} others returned",
        burst.len()
    );
    rows.push(plain_row(
        &format!("million: burst of {} answers, waiters woken", burst.len()),
        woken as f64,
        "awaits",
        "all, each once by its own",
        woken == burst.len() && accepted == burst.len() && stray == 0,
    ));
    let still = server.parked_awaits().await?;
    rows.push(plain_row(
        "million: awaits still parked after the answers",
        still as f64,
        "awaits",
        &format!("{}", held - size.answers - burst.len()),
        still + one_by_one.len() + burst.len() == held,
    ));
    for p in parked.into_iter().flatten() {
        p.abort();
    }
    server.stop().await;
    Ok(rows)
}

/// `n` indices spread evenly over `0..total`.
fn spread(total: usize, n: usize) -> Vec<usize> {
    let n = n.min(total);
    let step = total / n.max(1);
    (0..n).map(|k| k * step).collect()
}

/// Creates `n` pending decisions over HTTP/2; keeps the pages of those in `answered` only.
async fn create(server: &Server, n: usize, answered: &[usize]) -> Result<Vec<Handle>> {
    eprintln!("creating {n} decisions to wait on");
    let started = Instant::now();
    let clients: Vec<reqwest::Client> = (0..4)
        .map(|_| {
            reqwest::Client::builder()
                .http2_prior_knowledge()
                .timeout(Duration::from_secs(120))
                .build()
        })
        .collect::<Result<_, _>>()?;
    let url = format!("{}/v1/decisions", server.base);
    let answered: std::collections::HashSet<usize> = answered.iter().copied().collect();
    let mut created: Vec<(usize, Handle)> = futures::stream::iter(0..n)
        .map(|i| {
            let (client, url, key) = (&clients[i % clients.len()], &url, &server.key);
            let keep_page = answered.contains(&i);
            async move {
                let resp = client
                    .post(url)
                    .bearer_auth(key)
                    .json(
                        &json!({"question": format!("Agent {i} asks"), "kind": "bool",
                        "notify": "none", "ttl_minutes": 240}),
                    )
                    .send()
                    .await?;
                if resp.status() != reqwest::StatusCode::CREATED {
                    return Err(anyhow!("create answered {}", resp.status()));
                }
                let v: Value = resp.json().await?;
                let field = |f: &str| v[f].as_str().map(String::from);
                let id = field("decision_id").context("no decision_id")?;
                let page = match keep_page {
                    true => Some(page_path(&field("web_url").context("no web_url")?)?),
                    false => None,
                };
                Ok::<_, anyhow::Error>((i, Handle { id, page }))
            }
        })
        .buffer_unordered(256)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    created.sort_unstable_by_key(|(i, _)| *i);
    eprintln!("created {n} in {:.0} s", started.elapsed().as_secs_f64());
    Ok(created.into_iter().map(|(_, h)| h).collect())
}

/// Sends every await, spread over `connections` HTTP/2 connections, each a task that returns
/// when its response has come whole.
async fn park(
    server: &Server,
    handles: &[Handle],
    connections: usize,
) -> Result<Vec<JoinHandle<Result<Woken>>>> {
    let address = server
        .base
        .strip_prefix("http://")
        .context("an http:// server")?
        .to_string();
    let auth = format!("Bearer {}", server.key);
    let per_connection = handles.len().div_ceil(connections.max(1));
    let mut parked = Vec::with_capacity(handles.len());
    for chunk in handles.chunks(per_connection) {
        let tcp = TcpStream::connect(&address).await?;
        tcp.set_nodelay(true)?;
        let (mut sender, connection) = h2::client::handshake(tcp).await?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        for h in chunk {
            let request = http::Request::get(format!(
                "http://{address}/v1/decisions/{}/await?timeout_s=7200",
                h.id
            ))
            .header(http::header::AUTHORIZATION, &auth)
            .body(())?;
            sender = sender.ready().await?;
            let (response, _) = sender.send_request(request, true)?;
            parked.push(tokio::spawn(async move {
                let response = response.await?;
                let at = Instant::now();
                let status = response.status().as_u16();
                let mut body = response.into_body();
                let mut bytes = Vec::new();
                while let Some(chunk) = body.data().await {
                    let chunk = chunk?;
                    let _ = body.flow_control().release_capacity(chunk.len());
                    bytes.extend_from_slice(&chunk);
                }
                Ok((status, Bytes::from(bytes), at))
            }));
        }
    }
    Ok(parked)
}

/// The path of a page link, `/d/…`.
fn page_path(web_url: &str) -> Result<String> {
    let url = url::Url::parse(web_url).with_context(|| format!("web_url {web_url}"))?;
    Ok(url.path().to_string())
}

/// Answers `h` on its page, returning when the answer's response arrived.
async fn answer(
    server: &Server,
    client: &reqwest::Client,
    h: &Handle,
    value: &str,
) -> Result<Instant> {
    let page = h
        .page
        .as_deref()
        .context("a decision the run does not answer")?;
    let resp = client
        .post(format!("{}{page}", server.base))
        .json(&json!({ "value": value }))
        .send()
        .await?;
    let at = Instant::now();
    if !resp.status().is_success() {
        return Err(anyhow!("an answer got {}", resp.status()));
    }
    Ok(at)
}

/// That an await returned its own decision, answered `outcome`.
fn check(status: u16, body: &[u8], id: &str, outcome: bool) -> Result<()> {
    let v: Value = serde_json::from_slice(body).context("an await's body")?;
    if status != 200
        || v["status"] != "answered"
        || v["decision_id"] != id
        || v["outcome"] != outcome
    {
        return Err(anyhow!("an await for {id} returned {status}: {v}"));
    }
    Ok(())
}
