//! A `sayso serve` process of the test's own: started on port 0, its first-run key (from
//! its state directory) and its log lines kept.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;

use crate::common::first_run::StateDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_sayso");

/// A `sayso serve` process on port 0, with its log lines.
pub struct Replica {
    child: Child,
    pub base: String,
    pub key: Option<String>,
    pub log: Arc<Mutex<Vec<String>>>,
    _state: StateDir,
}

impl Replica {
    pub fn assert_healthy(&mut self, name: &str) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "replica {name} exited"
        );
        let log = self.log.lock().unwrap();
        let bad: Vec<&String> = log
            .iter()
            // (tower_http logs each 5xx response as an error; those are checked above.)
            .filter(|l| {
                l.contains("panicked")
                    || (l.contains("\"ERROR\"") && !l.contains("\"target\":\"tower_http"))
            })
            .collect();
        assert!(bad.is_empty(), "replica {name} logged: {bad:#?}");
    }
}

/// `sayso serve` on `database_url`, its first run writing into `state`.
pub fn command(database_url: &str, state: &StateDir, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    let (name, dir) = state.env();
    cmd.arg("serve")
        .env(name, dir)
        .envs(env.iter().copied())
        .env("SAYSO_DATABASE_URL", database_url)
        .env("SAYSO_LISTEN", "127.0.0.1:0")
        .env("SAYSO_LOG_FORMAT", "json")
        .env(
            "SAYSO_LOG",
            "info,sayso::notify=warn,sayso::chat=warn,tower_http=warn",
        )
        .env_remove("SAYSO_PUBLIC_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Keeps every log line of `child` in `log`; sends the address once it listens.
pub fn collect_logs(
    child: &mut Child,
    log: Arc<Mutex<Vec<String>>>,
) -> watch::Receiver<Option<String>> {
    let (tx, rx) = watch::channel(None);
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["fields"]["message"] == "sayso is listening"
            {
                let _ = tx.send(Some(format!(
                    "http://{}",
                    v["fields"]["address"].as_str().unwrap()
                )));
            }
            log.lock().unwrap().push(line);
        }
    });
    rx
}

pub async fn start_replica(database_url: &str) -> Replica {
    let state = StateDir::new();
    let mut child = command(database_url, &state, &[])
        .spawn()
        .expect("sayso starts");
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut listening = collect_logs(&mut child, Arc::clone(&log));
    let base = wait_listening(&mut listening, Duration::from_secs(30)).await;
    drain_stdout(&mut child);
    let key = state.secrets().map(|s| s.key);
    Replica {
        child,
        base,
        key,
        log,
        _state: state,
    }
}

/// The address once the server listens; panics if it exits or takes longer than `limit`.
pub async fn wait_listening(
    listening: &mut watch::Receiver<Option<String>>,
    limit: Duration,
) -> String {
    tokio::time::timeout(limit, async {
        loop {
            if let Some(base) = listening.borrow_and_update().clone() {
                return base;
            }
            listening
                .changed()
                .await
                .expect("sayso exited before listening");
        }
    })
    .await
    .unwrap_or_else(|_| panic!("sayso did not listen within {limit:?}"))
}

/// Reads stdout away, so the process never blocks on a full pipe.
pub fn drain_stdout(child: &mut Child) {
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
}

/// Waits (up to `limit`) for a log line containing `needle`; returns it.
pub async fn wait_for_log(log: &Mutex<Vec<String>>, needle: &str, limit: Duration) -> String {
    let started = Instant::now();
    loop {
        if let Some(line) = log.lock().unwrap().iter().find(|l| l.contains(needle)) {
            return line.clone();
        }
        assert!(
            started.elapsed() < limit,
            "no log line with {needle:?} within {limit:?}: {:#?}",
            log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
