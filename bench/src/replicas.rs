//! Several replicas on one PostgreSQL: three `sayso` processes, 30 000 waiters spread over
//! them (HTTP/2), answers arriving on one; the wake latency of the waiters on the others
//! (through LISTEN/NOTIFY), and creates per second with all three writing.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use futures::StreamExt;
use hdrhistogram::Histogram;
use serde_json::{Value, json};

use crate::load::create_rate;
use crate::report::{Row, plain_row, ratio_row};
use crate::server::{Parked, Server, returned_early};

fn h2_client() -> Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .http2_prior_knowledge()
        .timeout(Duration::from_secs(900))
        .build()?)
}

/// `waiters` spread over `replicas` processes on `database_url`; `pgbench` is the ceiling
/// for creates measured in the same run.
pub async fn replicas(
    database_url: &str,
    replicas: usize,
    waiters: usize,
    seconds: u64,
    pgbench: f64,
) -> Result<Vec<Row>> {
    let first = Server::start(database_url).await?;
    let mut servers = vec![first];
    for _ in 1..replicas {
        let next = Server::start_replica(database_url, &servers[0]).await?;
        servers.push(next);
    }
    eprintln!("{replicas} replicas up; creating {waiters} decisions");
    let creator = h2_client()?;
    let handles: Vec<Value> = futures::stream::iter(0..waiters)
        .map(|i| {
            let (client, s) = (creator.clone(), &servers[i % replicas]);
            async move {
                let resp = client
                    .post(format!("{}/v1/decisions", s.base))
                    .bearer_auth(&s.key)
                    .json(&json!({"question": format!("Replica {i}"), "kind": "bool",
                        "notify": "none", "ttl_minutes": 120}))
                    .send()
                    .await?;
                if resp.status() != reqwest::StatusCode::CREATED {
                    return Err(anyhow!("create answered {}", resp.status()));
                }
                Ok::<Value, anyhow::Error>(resp.json().await?)
            }
        })
        .buffer_unordered(128)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;

    // Each waiter on the replica its index names, over 40 HTTP/2 connections a replica.
    let clients: Vec<Vec<reqwest::Client>> = (0..replicas)
        .map(|_| (0..40).map(|_| h2_client()).collect::<Result<Vec<_>>>())
        .collect::<Result<_>>()?;
    let mut parked_tasks: Vec<Option<Parked>> = Vec::with_capacity(waiters);
    for (i, h) in handles.iter().enumerate() {
        let (r, client) = (i % replicas, &clients[i % replicas][(i / replicas) % 40]);
        let req = client
            .get(format!(
                "{}/v1/decisions/{}/await?timeout_s=600",
                servers[r].base,
                h["decision_id"].as_str().unwrap_or("")
            ))
            .bearer_auth(&servers[r].key);
        parked_tasks.push(Some(tokio::spawn(async move {
            let resp = req.send().await?;
            let at = Instant::now();
            Ok::<_, anyhow::Error>((resp.json::<Value>().await?, at))
        })));
    }
    let per_replica = waiters / replicas;
    for s in &servers {
        let parked = s.wait_until_parked(per_replica).await?;
        if parked < per_replica {
            return Err(anyhow!(
                "{parked} of {per_replica} awaits parked on {}; of those that returned: {}",
                s.base,
                returned_early(&mut parked_tasks).await
            ));
        }
    }
    eprintln!("{waiters} parked, {per_replica} on each replica");

    // Answers on replica 0, to waiters parked on the others.
    let answerer = h2_client()?;
    let mut hist = Histogram::<u64>::new(3)?;
    let mut sampled = 0;
    for (i, h) in handles.iter().enumerate() {
        if i % replicas == 0 {
            continue;
        }
        if sampled == 300 {
            break;
        }
        // The answer link names the replica that made it; any replica takes the answer, so
        // it goes to replica 0 by path.
        let link = h["web_url"].as_str().unwrap_or("");
        let path = link
            .find("/d/")
            .map(|p| &link[p..])
            .context("answer link")?;
        let resp = answerer
            .post(format!("{}{path}", servers[0].base))
            .json(&json!({"value": "yes"}))
            .send()
            .await?;
        let answered = Instant::now();
        if !resp.status().is_success() {
            return Err(anyhow!("an answer got {}", resp.status()));
        }
        let (v, woke) = parked_tasks[i].take().context("await")?.await??;
        if v["status"] != "answered" {
            return Err(anyhow!("an await on another replica returned {v}"));
        }
        hist.record(woke.saturating_duration_since(answered).as_micros() as u64)?;
        sampled += 1;
    }
    let (p50, p99) = (
        hist.value_at_quantile(0.5) as f64 / 1000.0,
        hist.value_at_quantile(0.99) as f64 / 1000.0,
    );
    eprintln!("answer on one replica → wake on another: p50 {p50:.2} ms, p99 {p99:.2} ms");
    for slot in parked_tasks.into_iter().flatten() {
        slot.abort();
    }
    drop(clients);

    // All three writing at once.
    let started = Instant::now();
    let rates = futures::future::join_all(servers.iter().map(|s| create_rate(s, seconds))).await;
    let total: f64 = rates.into_iter().collect::<Result<Vec<_>>>()?.iter().sum();
    eprintln!(
        "creates with {replicas} replicas writing: {total:.0}/s ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
    for s in servers {
        s.stop().await;
    }
    Ok(vec![
        plain_row(
            "replicas: answer → wake on another, p50",
            p50,
            "ms",
            "≤ 2 ms",
            p50 <= 2.0,
        ),
        plain_row(
            "replicas: answer → wake on another, p99",
            p99,
            "ms",
            "≤ 10 ms",
            p99 <= 10.0,
        ),
        ratio_row(
            &format!("replicas: creates, {replicas} writing vs pgbench"),
            total,
            pgbench,
            1.0,
        ),
    ])
}
