//! The real `sayso` binary as a child process on port 0, for tests that kill it or run
//! several replicas of it.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, Command};

use super::first_run::StateDir;

/// The log level of a test's server: info, but for the notifiers and chats.
pub const LOG: &str = "info,sayso::notify=warn,sayso::chat=warn";

/// `bin` serving `database_url` as the tests start it: its first run writing into `state`,
/// listening at `listen` (where it chooses by itself when `None`), JSON logs, no public URL
/// taken from the test run's environment, stdout and stderr piped, killed on drop.
pub fn serve_command(
    bin: &str,
    state: &StateDir,
    database_url: &str,
    listen: Option<&str>,
) -> Command {
    let mut cmd = Command::new(bin);
    let (name, dir) = state.env();
    cmd.env(name, dir)
        .env("SAYSO_DATABASE_URL", database_url)
        .env("SAYSO_LOG_FORMAT", "json")
        .env_remove("SAYSO_PUBLIC_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    match listen {
        Some(listen) => cmd.env("SAYSO_LISTEN", listen),
        None => cmd.env_remove("SAYSO_LISTEN"),
    };
    cmd
}

/// The stderr of `child` (piped), line by line.
pub fn stderr_lines(child: &mut Child) -> Lines<BufReader<ChildStderr>> {
    BufReader::new(child.stderr.take().expect("stderr is piped")).lines()
}

/// Reads sayso's JSON log lines until it says it listens, showing each one first to `seen`
/// with its JSON (`Null` when it is none); the address it listens on (`HOST:PORT`). Panics
/// when sayso exits before, or is not listening `within`.
pub async fn listening_address(
    lines: &mut Lines<BufReader<ChildStderr>>,
    within: Duration,
    mut seen: impl FnMut(&str, &Value),
) -> String {
    tokio::time::timeout(within, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let v = serde_json::from_str::<Value>(&line).unwrap_or_default();
            seen(&line, &v);
            if v["fields"]["message"] == "sayso is listening" {
                return v["fields"]["address"].as_str().unwrap().to_string();
            }
        }
        panic!("sayso exited before listening");
    })
    .await
    .unwrap_or_else(|_| panic!("sayso listens within {} s", within.as_secs()))
}

/// Reads what is left of `lines`, so that the process never blocks on a full pipe.
pub fn drain<R: AsyncBufRead + Unpin + Send + 'static>(mut lines: Lines<R>) {
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
}

/// Starts `cmd` as a program the test talks with: its stdin and stdout piped (its stderr
/// as `cmd` says), killed on drop. Panics, naming `what`, when it does not start.
pub fn spawn_talking(cmd: &mut Command, what: &str) -> Child {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{what} does not start: {e}"))
}

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
        let mut cmd = serve_command(bin, &state, database_url, Some("127.0.0.1:0"));
        cmd.env("SAYSO_LOG", LOG)
            .env("SAYSO_RATE_LIMIT_PER_S", "0")
            .env_remove("SAYSO_SMTP_URL")
            .envs(env.iter().copied());
        Self::launch(cmd, state).await
    }

    /// Starts `cmd` (a `serve_command` whose first run writes into `state`) and waits until
    /// it listens. Its errors are shown on the test's stderr.
    pub async fn launch(mut cmd: Command, state: StateDir) -> SaysoProcess {
        let mut child = cmd.spawn().expect("sayso starts");
        let mut stderr = stderr_lines(&mut child);
        let address = listening_address(&mut stderr, Duration::from_secs(60), |line, v| {
            if v.is_null() || v["level"] == "ERROR" {
                eprintln!("sayso: {line}");
            }
        })
        .await;
        // Keep draining stderr so the process never blocks on a full pipe; show its errors.
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                if line.contains("\"level\":\"ERROR\"") {
                    eprintln!("sayso: {line}");
                }
            }
        });
        drain(BufReader::new(child.stdout.take().unwrap()).lines());
        // The first run writes its file before the server listens.
        let key = state.secrets().map(|s| s.key);
        SaysoProcess {
            child,
            base: format!("http://{address}"),
            key,
            state,
        }
    }

    /// SIGKILL, no shutdown of any kind, and waits until the process is gone.
    pub async fn kill(mut self) {
        self.child.kill().await.expect("sayso is killed");
    }
}
