//! A person's feed with many pending items: the server time of its first page, and every
//! item reached exactly once by following its "Next" links.
//!
//! The scenario makes its own inbox with `sayso inbox create` and `sayso key create` against
//! the server's database, as an operator would, so its feed holds only what it asked,
//! whatever else the database holds (another scenario may fill it first). It asks `pending`
//! decisions through the API with expiries in another order than their creation, binds a
//! client to the inbox's person by opening the feed link, and reads the server's own time
//! for each page from the feed's `Server-Timing: app;dur=…` header.

use std::collections::HashMap;
use std::process::Stdio;

use anyhow::{Context, Result, anyhow};
use futures::StreamExt;
use hdrhistogram::Histogram;
use serde_json::json;
use tokio::process::Command;

use crate::report::{Row, plain_row};
use crate::server::Server;

/// How many times the first page is fetched for its time.
const FETCHES: usize = 50;
/// The first page's budget, in milliseconds of server time.
const BUDGET_MS: f64 = 50.0;
/// Each question starts with this, then seven digits: the item's number.
const MARK: &str = "FEEDQ";

/// The feed scenario's rows: with `pending` decisions waiting, the first page's server time
/// (p50 and max of `FETCHES`) against 50 ms, and whether paging reached each one once.
pub async fn feed_rows(server: &Server, pending: usize) -> Result<Vec<Row>> {
    let db = server
        .database_url
        .as_deref()
        .context("the feed scenario runs `sayso` against the server's database: start it here")?;
    let name = format!("feed-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let link = sayso(db, &["inbox", "create", &name]).await?;
    let path = link
        .find("/inbox/")
        .map(|at| link[at..].trim().to_string())
        .with_context(|| format!("no feed link in {link:?}"))?;
    let key = sayso(db, &["key", "create", "--inbox", &name])
        .await?
        .trim()
        .to_string();
    eprintln!("feed: asking {pending} decisions in the inbox {name}");
    ask(server, &key, pending).await?;

    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let opened = client.get(format!("{}{path}", server.base)).send().await?;
    let cookie = opened
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.contains("sayso_device=") && !c.contains("Max-Age=0"))
        .and_then(|c| c.split(';').next())
        .map(str::to_string)
        .with_context(|| format!("the feed link bound nothing ({})", opened.status()))?;

    // The asks leave their notifications and checkpoints to finish after their responses:
    // the pages are timed once the server has done with them.
    crate::server::quiet(&[server]).await;
    let mut hist = Histogram::<u64>::new(3)?;
    let mut first_html = 0;
    let mut times = Vec::with_capacity(FETCHES);
    for _ in 0..FETCHES {
        let (ms, html) = page(&client, &server.base, "/inbox", &cookie).await?;
        hist.record((ms * 1000.0) as u64)?;
        times.push(format!("{ms:.1}"));
        first_html = html.len();
    }
    eprintln!("feed: first page times, in order (ms): {}", times.join(" "));
    let p50 = hist.value_at_quantile(0.5) as f64 / 1000.0;
    let max = hist.max() as f64 / 1000.0;
    eprintln!("feed: first page {first_html} B, server time p50 {p50:.2} ms, max {max:.2} ms");

    // Every page in turn: each item once, and the pages' own times.
    let mut seen: HashMap<u32, usize> = HashMap::new();
    let mut url = Some("/inbox".to_string());
    let mut pages = 0;
    let mut slowest: f64 = 0.0;
    while let Some(u) = url {
        let (ms, html) = page(&client, &server.base, &u, &cookie).await?;
        slowest = slowest.max(ms);
        for n in numbers(&html) {
            *seen.entry(n).or_default() += 1;
        }
        url = next_link(&html);
        pages += 1;
        if pages > pending + 1 {
            return Err(anyhow!("the feed's pages never end"));
        }
    }
    let once = (0..pending as u32)
        .filter(|n| seen.get(n) == Some(&1))
        .count();
    let twice = seen.values().filter(|c| **c > 1).count();
    eprintln!(
        "feed: {pages} pages, {once} of {pending} items once, {twice} more than once, \
         slowest page {slowest:.2} ms"
    );
    let budget = format!("≤ {BUDGET_MS:.0} ms");
    Ok(vec![
        plain_row(
            &format!("feed: first page server time p50, {pending} pending"),
            p50,
            "ms",
            &budget,
            p50 <= BUDGET_MS,
        ),
        plain_row(
            &format!("feed: first page server time max, {pending} pending"),
            max,
            "ms",
            &budget,
            max <= BUDGET_MS,
        ),
        plain_row(
            "feed: pending reached by paging",
            once as f64,
            "items",
            &format!("= {pending}, each once"),
            once == pending && twice == 0 && seen.len() == pending,
        ),
    ])
}

/// Asks `n` decisions with `key`, 64 at a time, expiring in another order than they are
/// made (the feed runs by expiry, ids by creation).
async fn ask(server: &Server, key: &str, n: usize) -> Result<()> {
    let results: Vec<Result<()>> = futures::stream::iter(0..n)
        .map(|i| async move {
            let ttl = 3600 + (i * 7919) % n.max(1);
            let resp = server
                .client
                .post(format!("{}/v1/decisions", server.base))
                .bearer_auth(key)
                .json(
                    &json!({"question": format!("{MARK}{i:07} ship it?"), "kind": "bool",
                              "notify": "none", "ttl_seconds": ttl}),
                )
                .send()
                .await?;
            if resp.status() != reqwest::StatusCode::CREATED {
                return Err(anyhow!("create answered {}", resp.status()));
            }
            Ok(())
        })
        .buffer_unordered(64)
        .collect()
        .await;
    results.into_iter().collect()
}

/// One feed page: the server's time for it (from `Server-Timing`) and its HTML.
async fn page(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    cookie: &str,
) -> Result<(f64, String)> {
    let resp = client
        .get(format!("{base}{path}"))
        .header(reqwest::header::COOKIE, cookie)
        .send()
        .await?;
    if resp.status() != reqwest::StatusCode::OK {
        return Err(anyhow!("the feed page {path} answered {}", resp.status()));
    }
    let timing = resp
        .headers()
        .get("server-timing")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let ms = metric(&timing, "app")
        .with_context(|| format!("the feed sent no Server-Timing app;dur=… ({timing:?})"))?;
    Ok((ms, resp.text().await?))
}

/// The duration of `name` in a `Server-Timing` value (`data;dur=1.2, app;dur=3.4`).
fn metric(timing: &str, name: &str) -> Option<f64> {
    timing.split(',').find_map(|m| {
        let mut parts = m.trim().split(';');
        (parts.next()? == name)
            .then(|| parts.find_map(|p| p.trim().strip_prefix("dur=")?.parse().ok()))
            .flatten()
    })
}

/// The numbers of the items a page lists.
fn numbers(html: &str) -> Vec<u32> {
    html.split(MARK)
        .skip(1)
        .filter_map(|rest| rest.get(..7)?.parse().ok())
        .collect()
}

/// The page's "Next" link.
fn next_link(html: &str) -> Option<String> {
    let at = html.find(r#"rel="next""#)?;
    let before = &html[..at];
    let href = before.rfind("href=\"")? + 6;
    let end = before[href..].find('"')? + href;
    Some(
        before[href..end]
            .replace("&amp;", "&")
            .replace("&#38;", "&"),
    )
}

/// Runs `sayso ARGS` against `database_url` and returns what it printed.
async fn sayso(database_url: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(Server::exe())
        .args(args)
        .env("SAYSO_DATABASE_URL", database_url)
        .stdin(Stdio::null())
        .output()
        .await
        .with_context(|| format!("running sayso {}", args.join(" ")))?;
    if !out.status.success() {
        return Err(anyhow!(
            "sayso {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
