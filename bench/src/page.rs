//! The answer page's weight and server time.

use std::time::Instant;

use anyhow::Result;
use hdrhistogram::Histogram;
use serde_json::json;

use crate::report::{Row, plain_row};
use crate::server::Server;

/// The answer page: its server time and the bytes it needs (HTML and stylesheet).
pub async fn page_weight(server: &Server) -> Result<Row> {
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
