//! The `sayso` binary run as a person or a script runs it: a command of its own, with none of
//! the test run's `SAYSO_*` settings but those a test gives, and what it printed.

use std::process::{Output, Stdio};

use serde_json::Value;
use tokio::process::Command;

use crate::common::server::TestServer;

pub const BIN: &str = env!("CARGO_BIN_EXE_sayso");

/// `sayso ARGS` with no settings of the test run's environment, no stdin, killed on drop.
pub fn sayso(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::null()).kill_on_drop(true);
    for name in [
        "SAYSO_URL",
        "SAYSO_KEY",
        "SAYSO_DATABASE_URL",
        "SAYSO_LISTEN",
        "SAYSO_PUBLIC_URL",
    ] {
        cmd.env_remove(name);
    }
    cmd
}

/// `sayso ARGS` against `base`, with `key` when one is given, as a script runs it.
pub fn client(base: &str, key: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = sayso(args);
    cmd.env("SAYSO_URL", base);
    if let Some(key) = key {
        cmd.env("SAYSO_KEY", key);
    }
    cmd
}

/// `sayso ARGS` as the agent of `srv`'s inbox `default` runs it: the server's URL and key.
pub fn agent(srv: &TestServer, args: &[&str]) -> Command {
    client(&srv.base, Some(&srv.key), args)
}

/// The test run's `PATH` with this build's `sayso` first, as a person who installed it has.
pub fn path_with_sayso() -> String {
    let bin_dir = std::path::Path::new(BIN).parent().unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    format!("{}:{path}", bin_dir.display())
}

/// Runs `cmd` to its end.
pub async fn output(mut cmd: Command) -> Output {
    cmd.output().await.expect("sayso runs")
}

/// Runs `cmd` to its end with `input` on its stdin.
pub async fn output_with_input(mut cmd: Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sayso runs");
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, input.as_bytes())
        .await
        .unwrap();
    // Closed, so that the command reads to its end.
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Stdout as one JSON value.
pub fn stdout_json(out: &Output) -> Value {
    serde_json::from_str(stdout(out).trim())
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {out:?}"))
}

/// `sayso ARGS` as the agent of `srv` runs it (`agent`), which must end with 0; what it
/// printed, as JSON.
pub async fn agent_json(srv: &TestServer, args: &[&str]) -> Value {
    let out = output(agent(srv, args)).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    stdout_json(&out)
}
