//! The throughput scenarios: many clients at once for a bounded time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use serde_json::json;

use crate::server::Server;

/// Concurrent clients for the throughput scenarios.
pub const CONCURRENCY: usize = 64;

/// Runs `op` from `CONCURRENCY` workers for `seconds` and returns completions per second.
pub async fn rate<F, Fut>(seconds: u64, op: F) -> Result<f64>
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

pub async fn create_rate(server: &Server, seconds: u64) -> Result<f64> {
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

pub async fn get_rate(server: &Server, seconds: u64) -> Result<f64> {
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
