//! The real `sayso` binary as a child process on port 0, for tests that kill it or run
//! several replicas of it.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::first_run::StateDir;

/// A running `sayso serve`.
pub struct SaysoProcess {
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The first run's key, when this process made the inbox.
    pub key: Option<String>,
    /// Where the first run wrote its secrets (removed with the process).
    pub state: StateDir,
}

impl SaysoProcess {
    /// Starts `sayso serve` on `database_url` with the rate limit off (the tests' load is
    /// deliberate) and waits until it listens.
    pub async fn start(bin: &str, database_url: &str) -> SaysoProcess {
        Self::start_with_env(bin, database_url, &[]).await
    }

    /// As `start`, with `env` set on top (later entries win over the defaults above).
    pub async fn start_with_env(
        bin: &str,
        database_url: &str,
        env: &[(&str, &str)],
    ) -> SaysoProcess {
        let state = StateDir::new();
        let (name, dir) = state.env();
        let mut child = Command::new(bin)
            .env("SAYSO_DATABASE_URL", database_url)
            .env(name, dir)
            .env("SAYSO_LISTEN", "127.0.0.1:0")
            .env("SAYSO_LOG_FORMAT", "json")
            .env("SAYSO_LOG", "info,sayso::notify=warn,sayso::chat=warn")
            .env("SAYSO_RATE_LIMIT_PER_S", "0")
            .env_remove("SAYSO_PUBLIC_URL")
            .env_remove("SAYSO_SMTP_URL")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("sayso starts");
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let base = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = stderr.next_line().await.unwrap() {
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    eprintln!("sayso: {line}");
                    continue;
                };
                if v["fields"]["message"] == "sayso is listening" {
                    return format!("http://{}", v["fields"]["address"].as_str().unwrap());
                }
                if v["level"] == "ERROR" {
                    eprintln!("sayso: {line}");
                }
            }
            panic!("sayso exited before listening");
        })
        .await
        .expect("sayso listens within 60 s");
        // Keep draining stderr so the process never blocks on a full pipe; show its errors.
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                if line.contains("\"level\":\"ERROR\"") {
                    eprintln!("sayso: {line}");
                }
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
        // The first run writes its file before the server listens.
        let key = state.secrets().map(|s| s.key);
        SaysoProcess {
            child,
            base,
            key,
            state,
        }
    }

    /// SIGKILL, no shutdown of any kind, and waits until the process is gone.
    pub async fn kill(mut self) {
        self.child.kill().await.expect("sayso is killed");
    }
}
