//! A `sayso serve` process on port 0, and the admin commands run as people run them.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::common::first_run::StateDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_sayso");

/// A `sayso serve` process on port 0.
pub struct Replica {
    pub child: Child,
    pub base: String,
    /// The first-run key, when this process made the inbox.
    pub key: Option<String>,
    /// Where the first run wrote its secrets (removed with the replica).
    pub state: StateDir,
}

pub async fn start_replica(database_url: &str) -> Replica {
    start_replica_with(database_url, &[]).await
}

pub async fn start_replica_with(database_url: &str, env: &[(&str, &str)]) -> Replica {
    let state = StateDir::new();
    let (name, dir) = state.env();
    let mut child = Command::new(BIN)
        .env(name, dir)
        .envs(env.iter().copied())
        .env("SAYSO_DATABASE_URL", database_url)
        .env("SAYSO_LISTEN", "127.0.0.1:0")
        .env("SAYSO_LOG_FORMAT", "json")
        .env("SAYSO_LOG", "info,sayso::notify=warn,sayso::chat=warn")
        .env_remove("SAYSO_PUBLIC_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("sayso starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if v["fields"]["message"] == "sayso is listening" {
                return format!("http://{}", v["fields"]["address"].as_str().unwrap());
            }
        }
        panic!("sayso exited before listening");
    })
    .await
    .expect("sayso listens within 30 s");
    // Keep draining stderr so the process never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    // The first run writes its file before the server listens.
    let key = state.secrets().map(|s| s.key);
    Replica {
        child,
        base,
        key,
        state,
    }
}

pub async fn sayso(args: &[&str], database_url: &str) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("SAYSO_DATABASE_URL", database_url)
        .env_remove("SAYSO_LISTEN")
        .env_remove("SAYSO_PUBLIC_URL")
        .output()
        .await
        .unwrap()
}
