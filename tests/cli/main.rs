//! The command-line client as scripts run it: the real `sayso` binary against a real server,
//! its output and its exit codes, and a `--wait` that outlives a server restart.

#[path = "../common/mod.rs"]
mod common;

mod asks;
mod exits;
mod outages;
mod receipts;

use std::process::{Output, Stdio};
use std::time::Duration;

use common::cli::{BIN, agent_json, output, output_with_input, stderr, stdout_json};
use common::process::{drain, listening_address, serve_command, stderr_lines};
use common::server::{TestServer, fresh_server, s};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

/// `sayso ARGS` against `base` with `key` (no key when `None`), as a script would run it.
fn client(base: &str, key: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = common::cli::client(base, key, args);
    // A shell without job control starts its background commands with SIGINT ignored, and
    // the client would inherit that; what it does on SIGINT itself is what is tested here.
    // SAFETY: only an async-signal-safe call between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            use nix::sys::signal::{SigHandler, Signal, signal};
            signal(Signal::SIGINT, SigHandler::SigDfl)
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
    cmd
}

async fn run(srv: &TestServer, args: &[&str]) -> Output {
    output(client(&srv.base, Some(&srv.key), args)).await
}

/// A client waiting for an answer (`ask --wait` or `await`), with the decision it waits on.
struct Waiting {
    child: Child,
    id: String,
    link: String,
    rest_of_stderr: JoinHandle<String>,
}

/// Starts `sayso ask … --wait` and reads the decision's id and link from its stderr.
async fn start_waiting(base: &str, key: &str, args: &[&str]) -> Waiting {
    let mut child = client(base, Some(key), args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sayso runs");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (id, link) = tokio::time::timeout(Duration::from_secs(30), async {
        let mut id = None;
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix("sayso: waiting for the answer to decision ") {
                id = Some(rest.trim_end_matches(':').to_string());
            } else if line.starts_with("http") {
                return (id.expect("the id comes before the link"), line);
            }
        }
        panic!("sayso exited before it waited");
    })
    .await
    .expect("the client prints the link within 30 s");
    let rest_of_stderr = tokio::spawn(async move {
        let mut rest = String::new();
        while let Ok(Some(line)) = lines.next_line().await {
            rest.push_str(&line);
            rest.push('\n');
        }
        rest
    });
    Waiting {
        child,
        id,
        link,
        rest_of_stderr,
    }
}

impl Waiting {
    /// Waits for the client to exit: its exit code, the JSON it printed and its stderr.
    async fn finish(mut self) -> (i32, Value, String) {
        let mut stdout = String::new();
        let mut pipe = self.child.stdout.take().unwrap();
        let status = tokio::time::timeout(Duration::from_secs(60), async {
            pipe.read_to_string(&mut stdout).await.unwrap();
            self.child.wait().await.unwrap()
        })
        .await
        .expect("the waiting client exits within 60 s");
        let err = self.rest_of_stderr.await.unwrap();
        let json = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout:?}; stderr: {err}"));
        (status.code().expect("exited, not killed"), json, err)
    }
}

/// Asks with `--wait`, answers through the link with `answer`, returns the client's result.
async fn ask_and_answer(srv: &TestServer, args: &[&str], answer: Value) -> (i32, Value) {
    let w = start_waiting(&srv.base, &srv.key, args).await;
    let id = w.id.clone();
    srv.answer_ok(&w.link, answer).await;
    let (code, out, err) = w.finish().await;
    assert_eq!(out["decision_id"], id.as_str(), "{err}");
    (code, out)
}
