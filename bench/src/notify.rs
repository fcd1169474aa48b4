//! Notifications measured end to end, with the receivers on this machine: a real SMTP server
//! (aiosmtpd, Python), and an HTTP receiver in this process standing in for an ntfy server
//! and a webhook endpoint. For email and ntfy, from the create's request to the message's
//! arrival; for webhooks (sent on resolution), from the answer's request to the webhook's
//! arrival. Each at 1 and at 200 a second, then as fast as the outbox goes, then webhooks
//! again while one receiver never answers.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use futures::StreamExt;
use hdrhistogram::Histogram;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::report::{Row, plain_row};
use crate::server::Server;

/// When each message arrived, by the question it carried.
type Arrivals = Arc<Mutex<HashMap<String, Instant>>>;

/// The receivers of one run.
pub struct Receivers {
    pub smtp_port: u16,
    /// `http://127.0.0.1:PORT`: `/` takes ntfy's JSON publishes, `/hook` webhooks, `/dead`
    /// connections it never answers.
    pub http_base: String,
    mails: Arrivals,
    ntfy: Arrivals,
    hooks: Arrivals,
    _smtp: Child,
}

impl Receivers {
    pub async fn start() -> Result<Receivers> {
        let (mails, ntfy, hooks) = (
            Arrivals::default(),
            Arrivals::default(),
            Arrivals::default(),
        );
        let app = Router::new()
            .route("/", post(record_ntfy))
            .route("/hook", post(record_hook))
            .route(
                "/dead",
                post(|| async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }),
            )
            .with_state((ntfy.clone(), hooks.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let http_base = format!("http://{}", listener.local_addr()?);
        tokio::spawn(async move { axum::serve(listener, app).await });
        let (smtp, smtp_port) = start_smtp(mails.clone()).await?;
        Ok(Receivers {
            smtp_port,
            http_base,
            mails,
            ntfy,
            hooks,
            _smtp: smtp,
        })
    }
}

async fn record_ntfy(State((ntfy, _)): State<(Arrivals, Arrivals)>, body: Bytes) {
    let at = Instant::now();
    if let Ok(v) = serde_json::from_slice::<Value>(&body)
        && let Some(message) = v["message"].as_str()
    {
        // The question is the message's first line; when it expires follows.
        let q = message.lines().next().unwrap_or_default();
        ntfy.lock().unwrap().entry(q.to_string()).or_insert(at);
    }
}

async fn record_hook(State((_, hooks)): State<(Arrivals, Arrivals)>, body: Bytes) {
    let at = Instant::now();
    if let Ok(v) = serde_json::from_slice::<Value>(&body)
        && let Some(q) = v["question"].as_str()
    {
        hooks.lock().unwrap().entry(q.to_string()).or_insert(at);
    }
}

/// aiosmtpd on a free port, printing each mail's subject; arrivals are taken as the lines
/// come in.
async fn start_smtp(mails: Arrivals) -> Result<(Child, u16)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let script = r#"
import email, sys, threading
from aiosmtpd.controller import Controller
class Handler:
    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.original_content or envelope.content)
        print(msg.get("Subject", ""), flush=True)
        return "250 OK"
controller = Controller(Handler(), hostname="127.0.0.1", port=int(sys.argv[1]))
controller.start()
print("READY", flush=True)
threading.Event().wait()
"#;
    // Debian's aiosmtpd lives in the system Python, which may not be the first on the PATH.
    let python = ["/usr/bin/python3", "python3"]
        .into_iter()
        .find(|p| {
            std::process::Command::new(p)
                .args(["-c", "import aiosmtpd"])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .context("no python3 with aiosmtpd (apt-get install python3-aiosmtpd)")?;
    let mut child = Command::new(python)
        .args(["-c", script, &port.to_string()])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    match lines.next_line().await? {
        Some(l) if l == "READY" => {}
        other => return Err(anyhow!("aiosmtpd did not start: {other:?}")),
    }
    tokio::spawn(async move {
        while let Ok(Some(subject)) = lines.next_line().await {
            let at = Instant::now();
            let q = subject.trim_start_matches("[sayso] ").to_string();
            mails.lock().unwrap().entry(q).or_insert(at);
        }
    });
    Ok((child, port))
}

/// One run's question numbers, so every question is new to the receivers.
static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn question(tag: &str) -> String {
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{tag} {n}")
}

/// Sets the inbox's email address and ntfy topic through the command line, as an operator
/// would.
pub async fn set_up_inbox(database_url: &str, rx: &Receivers) -> Result<()> {
    let status = Command::new(Server::exe())
        .args(["inbox", "set", "default", "--email", "bench@example.com"])
        .args(["--ntfy-url", &format!("{}/bench-topic", rx.http_base)])
        .env("SAYSO_DATABASE_URL", database_url)
        .stdout(Stdio::null())
        .status()
        .await?;
    if !status.success() {
        return Err(anyhow!("sayso inbox set failed: {status}"));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Channel {
    Email,
    Ntfy,
    Webhook,
}

impl Channel {
    fn name(self) -> &'static str {
        match self {
            Channel::Email => "email",
            Channel::Ntfy => "ntfy",
            Channel::Webhook => "webhook",
        }
    }
}

/// Sends `n` of `channel`'s trigger at `per_s` a second (0: as fast as 64 at a time go) and
/// returns each one's start and its question.
async fn trigger(
    server: &Server,
    rx: &Receivers,
    channel: Channel,
    n: usize,
    per_s: f64,
    callback: &str,
) -> Result<Vec<(String, Instant)>> {
    let questions: Vec<String> = (0..n).map(|_| question(channel.name())).collect();
    // Webhooks go on resolution: their decisions are made first, and the answer is the trigger.
    let mut handles = HashMap::new();
    if let Channel::Webhook = channel {
        let made = futures::stream::iter(&questions)
            .map(|q| async move {
                let h = server
                    .create(&json!({"question": q, "kind": "bool", "notify": "none",
                        "callback_url": format!("{}{callback}", rx.http_base)}))
                    .await?;
                Ok::<_, anyhow::Error>((q.clone(), h))
            })
            .buffer_unordered(32)
            .collect::<Vec<_>>()
            .await;
        for m in made {
            let (q, h) = m?;
            handles.insert(q, h);
        }
    }
    let handles = Arc::new(handles);
    let started = Instant::now();
    let sent = futures::stream::iter(questions.into_iter().enumerate())
        .map(|(i, q)| {
            let handles = Arc::clone(&handles);
            async move {
                if per_s > 0.0 {
                    let due = started + Duration::from_secs_f64(i as f64 / per_s);
                    tokio::time::sleep_until(due.into()).await;
                }
                let at = Instant::now();
                match channel {
                    Channel::Email | Channel::Ntfy => {
                        let notify = if let Channel::Email = channel {
                            "email"
                        } else {
                            "push"
                        };
                        server
                            .create(&json!({"question": q, "kind": "bool", "notify": notify}))
                            .await?;
                    }
                    Channel::Webhook => {
                        let web_url = handles[&q]["web_url"].as_str().unwrap_or("").to_string();
                        let resp = server
                            .client
                            .post(web_url)
                            .json(&json!({"value": "yes"}))
                            .send()
                            .await?;
                        if !resp.status().is_success() {
                            return Err(anyhow!("an answer got {}", resp.status()));
                        }
                    }
                }
                Ok::<_, anyhow::Error>((q, at))
            }
        })
        .buffer_unordered(64)
        .collect::<Vec<_>>()
        .await;
    sent.into_iter().collect()
}

/// Waits (up to `limit`) for every question of `sent` to arrive on `channel`, and returns
/// the latencies' histogram (µs) and when the last arrived.
async fn arrivals(
    rx: &Receivers,
    channel: Channel,
    sent: &[(String, Instant)],
    limit: Duration,
) -> Result<(Histogram<u64>, Instant)> {
    let log = match channel {
        Channel::Email => &rx.mails,
        Channel::Ntfy => &rx.ntfy,
        Channel::Webhook => &rx.hooks,
    };
    let deadline = Instant::now() + limit;
    loop {
        let got = {
            let log = log.lock().unwrap();
            sent.iter().filter(|(q, _)| log.contains_key(q)).count()
        };
        if got == sent.len() {
            break;
        }
        if Instant::now() > deadline {
            return Err(anyhow!(
                "{}: {got} of {} arrived within {limit:?}",
                channel.name(),
                sent.len()
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let log = log.lock().unwrap();
    let mut hist = Histogram::<u64>::new(3)?;
    let mut last = sent[0].1;
    for (q, at) in sent {
        let arrived = log[q];
        last = last.max(arrived);
        hist.record(arrived.saturating_duration_since(*at).as_micros() as u64)?;
    }
    Ok((hist, last))
}

fn ms(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

/// Latency rows at 1/s and 200/s and a throughput row, for each channel; then webhooks at
/// 200/s beside a receiver that never answers.
pub async fn notifications(server: &Server, rx: &Receivers, seconds: u64) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let mut webhook_p99_at_200 = 0.0;
    for channel in [Channel::Email, Channel::Ntfy, Channel::Webhook] {
        for per_s in [1.0, 200.0] {
            let n = (per_s * seconds as f64).max(5.0) as usize;
            let sent = trigger(server, rx, channel, n, per_s, "/hook").await?;
            let (h, _) = arrivals(rx, channel, &sent, Duration::from_secs(120)).await?;
            let (p50, p99) = (ms(&h, 0.5), ms(&h, 0.99));
            eprintln!(
                "{} at {per_s}/s ({n}): p50 {p50:.1} ms, p99 {p99:.1} ms",
                channel.name()
            );
            if per_s > 1.0 && matches!(channel, Channel::Webhook) {
                webhook_p99_at_200 = p99;
            }
            let what = match channel {
                Channel::Webhook => "answer → webhook",
                Channel::Email => "create → email accepted",
                Channel::Ntfy => "create → ntfy received",
            };
            rows.push(plain_row(
                &format!("{what} at {per_s:.0}/s, p50"),
                p50,
                "ms",
                "(reported)",
                true,
            ));
            rows.push(plain_row(
                &format!("{what} at {per_s:.0}/s, p99"),
                p99,
                "ms",
                "(reported)",
                true,
            ));
        }
        let n = 1000;
        let sent = trigger(server, rx, channel, n, 0.0, "/hook").await?;
        let first = sent
            .iter()
            .map(|(_, at)| *at)
            .min()
            .context("nothing sent")?;
        let (_, last) = arrivals(rx, channel, &sent, Duration::from_secs(300)).await?;
        let rate = n as f64 / last.duration_since(first).as_secs_f64();
        eprintln!("{}: {n} delivered at {rate:.0}/s", channel.name());
        rows.push(plain_row(
            &format!("{} deliveries, as fast as they go", channel.name()),
            rate,
            "msg/s",
            "(reported)",
            true,
        ));
    }

    // One receiver that never answers, then the good ones at 200/s.
    let dead = trigger(server, rx, Channel::Webhook, 1, 0.0, "/dead").await?;
    drop(dead);
    let n = (200 * seconds).max(5) as usize;
    let sent = trigger(server, rx, Channel::Webhook, n, 200.0, "/hook").await?;
    let (h, _) = arrivals(rx, Channel::Webhook, &sent, Duration::from_secs(120)).await?;
    let p99 = ms(&h, 0.99);
    eprintln!("webhooks at 200/s beside a dead receiver: p99 {p99:.1} ms");
    rows.push(plain_row(
        "answer → webhook 200/s, one dead beside, p99",
        p99,
        "ms",
        "≤ 2 × without it, + 5 ms",
        p99 <= 2.0 * webhook_p99_at_200 + 5.0,
    ));
    Ok(rows)
}
