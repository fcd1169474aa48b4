//! The waiting side: held awaits and their memory, answer → wake latency, a fan-in of answers.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use futures::StreamExt;
use hdrhistogram::Histogram;
use serde_json::{Value, json};

use crate::load::CONCURRENCY;
use crate::report::{Row, plain_row};
use crate::server::{Server, rss_kb};

/// A parked await: its Decision and when its response arrived.
type Parked = tokio::task::JoinHandle<Result<(Value, Instant)>>;

/// Held awaits and their memory, answer → wake latency with them parked, and a fan-in of
/// answers; checks that every await got its answer exactly once.
pub async fn waiting(server: &Server, n: usize) -> Result<Vec<Row>> {
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
        // A fresh process's HTTP/1.1 long-poll: the connection holds no hyper buffer while it
        // waits (vendor/hyper), so 16 KB (docs/PERFORMANCE.md, "An HTTP/1.1 connection holds
        // no buffer while its request waits").
        plain_row(
            "server memory per waiting request",
            per_await,
            "bytes",
            "≤ 16 KB",
            per_await <= 16.0 * 1024.0,
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
