//! The `sayso` server the benchmark drives: the release binary beside the benchmark's own,
//! started as a child process, or one started by hand.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::load::CONCURRENCY;

/// The bench's own server serves `/metrics` with this token.
const METRICS_TOKEN: &str = "bench";

/// The release server as a child process on port 0.
pub struct Server {
    /// None for a server started by someone else, which `stop` leaves running.
    child: Option<Child>,
    pub base: String,
    pub key: String,
    pub client: reqwest::Client,
    /// The database of a server this benchmark started, for the `sayso` commands a
    /// scenario runs against it as an operator would; `None` for one started by hand.
    pub database_url: Option<String>,
}

impl Server {
    pub async fn start(database_url: &str) -> Result<Server> {
        Self::start_with_env(database_url, &[]).await
    }

    /// As `start`, with `env` set on top of the bench's settings.
    pub async fn start_with_env(database_url: &str, env: &[(&str, String)]) -> Result<Server> {
        Self::start_full(database_url, env, None).await
    }

    /// Another replica on the database of `first`, with its key.
    pub async fn start_replica(database_url: &str, first: &Server) -> Result<Server> {
        Self::start_full(database_url, &[], Some(first.key.clone())).await
    }

    /// A server on a database that already has its key (one this bench started before and
    /// stopped, to write into its tables while nothing else did).
    pub async fn restart(database_url: &str, env: &[(&str, String)], key: &str) -> Result<Server> {
        Self::start_full(database_url, env, Some(key.to_string())).await
    }

    async fn start_full(
        database_url: &str,
        env: &[(&str, String)],
        key: Option<String>,
    ) -> Result<Server> {
        let exe = Self::exe();
        // The first run writes its secrets here (never to stdout, which is no terminal).
        let state =
            std::env::temp_dir().join(format!("sayso-bench-state-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&state).with_context(|| format!("making {}", state.display()))?;
        let mut child = Command::new(&exe)
            .env("SAYSO_DATABASE_URL", database_url)
            .env("SAYSO_STATE_DIR", &state)
            .env("SAYSO_LISTEN", "127.0.0.1:0")
            .env("SAYSO_LOG", "warn,sayso::cli=info")
            .env("SAYSO_LOG_FORMAT", "json")
            .env("SAYSO_RATE_LIMIT_PER_S", "0")
            // The fleet's 19 000 HTTP/1.1 waiters and its HTTP/2 connections, under the
            // 20 000 files a process may open here.
            .env("SAYSO_MAX_CONNECTIONS", "19600")
            // The fleet parks its 119 000 awaits with one key, and 19 000 of them on a
            // connection each: the per-key and connection limits of waiting requests (kept
            // for people's pages) are raised to let it, up to a million awaits. Its burst of
            // notifications measures delivery, not a person's budget, which is off.
            .env("SAYSO_WAITING_PER_KEY", "1000000")
            .env("SAYSO_WAITING_CONNECTIONS", "19500")
            .env("SAYSO_NOTIFY_PER_MINUTE", "0")
            .env("SAYSO_METRICS_TOKEN", METRICS_TOKEN)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| {
                format!(
                    "starting {} (build it with `cargo build --release -p sayso`)",
                    exe.display()
                )
            })?;
        let mut err = BufReader::new(child.stderr.take().context("stderr")?).lines();
        let base = loop {
            let line = err
                .next_line()
                .await?
                .context("sayso exited before listening")?;
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["fields"]["message"] == "sayso is listening"
            {
                break format!("http://{}", v["fields"]["address"].as_str().unwrap_or(""));
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = err.next_line().await {} });
        let mut out = BufReader::new(child.stdout.take().context("stdout")?).lines();
        tokio::spawn(async move { while let Ok(Some(_)) = out.next_line().await {} });
        // The file is written before the server listens; a replica's first run made nothing.
        let first_run = std::fs::read_to_string(state.join("first-run.txt"));
        let _ = std::fs::remove_dir_all(&state);
        let key = match (key, first_run) {
            (Some(key), _) => key,
            (None, Ok(text)) => text
                .split_whitespace()
                .find(|w| w.starts_with("sk_"))
                .map(String::from)
                .context("no API key in the first run's file")?,
            (None, Err(e)) => return Err(anyhow!("no first-run file (a used database?): {e}")),
        };
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(CONCURRENCY * 2)
            .timeout(Duration::from_secs(900))
            .build()?;
        Ok(Server {
            child: Some(child),
            base,
            key,
            client,
            database_url: Some(database_url.to_string()),
        })
    }

    /// A server started by someone else.
    pub fn external(base: &str, key: &str) -> Server {
        Server {
            child: None,
            base: base.trim_end_matches('/').to_string(),
            key: key.to_string(),
            client: reqwest::Client::new(),
            database_url: None,
        }
    }

    /// The release `sayso` binary beside the benchmark's own.
    pub fn exe() -> std::path::PathBuf {
        std::env::current_exe()
            .map(|p| p.with_file_name("sayso"))
            .unwrap_or_else(|_| "sayso".into())
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    pub async fn create(&self, body: &Value) -> Result<Value> {
        let resp = self
            .client
            .post(format!("{}/v1/decisions", self.base))
            .bearer_auth(&self.key)
            .json(body)
            .send()
            .await?;
        if resp.status() != reqwest::StatusCode::CREATED {
            return Err(anyhow!("create answered {}", resp.status()));
        }
        Ok(resp.json().await?)
    }

    /// Awaits parked on the server now, from its `/metrics`.
    pub async fn parked_awaits(&self) -> Result<usize> {
        Ok(self.gauge("sayso_awaits_parked").await? as usize)
    }

    /// The server's resident memory as its own gauge counts it, in bytes.
    pub async fn resident_bytes(&self) -> Result<u64> {
        Ok(self.gauge("sayso_resident_memory_bytes").await? as u64)
    }

    /// A gauge of the server's `/metrics`.
    async fn gauge(&self, name: &str) -> Result<f64> {
        let text = self
            .client
            .get(format!("{}/metrics", self.base))
            .bearer_auth(METRICS_TOKEN)
            .send()
            .await?
            .text()
            .await?;
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .with_context(|| format!("no {name} in /metrics"))
    }

    /// Waits until `sayso_awaits_parked` reaches `n`, or stops rising for 20 s (a slow
    /// machine parks slowly, a stuck one not at all), and returns it.
    pub async fn wait_until_parked(&self, n: usize) -> Result<usize> {
        let mut last = (0, Instant::now());
        loop {
            let parked = self.parked_awaits().await?;
            if parked >= n {
                return Ok(parked);
            }
            if parked > last.0 {
                last = (parked, Instant::now());
            } else if last.1.elapsed() > Duration::from_secs(20) {
                eprintln!("parked awaits stopped at {parked} of {n} on {}", self.base);
                return Ok(parked);
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    pub async fn stop(mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill().await;
        }
    }
}

/// The resident memory of a process, in kB (0 when it cannot be read).
pub fn rss_kb(pid: Option<u32>) -> u64 {
    let Some(pid) = pid else { return 0 };
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// An await sent and not yet returned: the decision it returned and when.
pub type Parked = tokio::task::JoinHandle<Result<(serde_json::Value, std::time::Instant)>>;

/// What the awaits that have already returned got, counted by kind (a status and error code,
/// or the client's error), so that a stalled run says why.
pub async fn returned_early(parked: &mut [Option<Parked>]) -> String {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for slot in parked.iter_mut() {
        let Some(task) = slot.take_if(|t| t.is_finished()) else {
            continue;
        };
        let outcome = match task.await {
            Ok(Ok((v, _))) => match v["error"]["code"].as_str() {
                Some(code) => format!("error {code}"),
                None => format!("status {}", v["status"]),
            },
            Ok(Err(e)) => format!("client error: {e}"),
            Err(e) => format!("task: {e}"),
        };
        *seen.entry(outcome).or_default() += 1;
    }
    if seen.is_empty() {
        return "none returned".into();
    }
    seen.into_iter()
        .map(|(outcome, n)| format!("{n} × {outcome}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Waits (up to 60 s) until the servers are idle: what a request leaves behind (an answer's
/// receipt and outbox message, a create's notifications) is done after its response, so a
/// burst of them leaves work that would otherwise fall on the next measurement. Idle: under
/// 2 % of a core over a quarter of a second, from `/proc/PID/stat`.
pub async fn quiet(servers: &[&Server]) {
    let cpu = |pid: Option<u32>| -> u64 {
        let Some(pid) = pid else { return 0 };
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                // After the command's closing parenthesis: utime and stime are fields 14, 15.
                let rest = s.rsplit_once(')')?.1;
                let f: Vec<&str> = rest.split_whitespace().collect();
                Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
            })
            .unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last: Vec<u64> = servers.iter().map(|s| cpu(s.pid())).collect();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now: Vec<u64> = servers.iter().map(|s| cpu(s.pid())).collect();
        // Clock ticks of 10 ms: 0 or 1 in 250 ms is idle.
        if now.iter().zip(&last).all(|(n, l)| n - l <= 1) {
            return;
        }
        last = now;
    }
}
