//! The official Python MCP SDK as a client of one of sayso's MCP endpoints, driven a call at
//! a time (tests/seed_client.py), for the seed conformance tests: the test sends a call, may
//! answer the question through the page while it waits, then reads the result.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::db::SqliteTestDb;
use super::process::spawn_talking;
use super::server::{TestServer, fresh_server, s, send};

/// A running `seed_client.py`.
pub struct PyMcp {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

/// One tool result as the SDK reports it.
#[derive(Debug, Clone)]
pub struct Called {
    pub is_error: bool,
    pub text: String,
    pub structured: Value,
}

/// The venv's Python with the `mcp` SDK (see `common::python`).
pub fn python_with_mcp() -> Option<&'static PathBuf> {
    static VENV: super::python::Venv =
        super::python::Venv::new("mcp-venv", "mcp", &["mcp"], "the Python MCP SDK");
    VENV.python()
}

/// `tests/<script>`, a client on the Python MCP SDK, run against `srv`'s `/mcp` with its key:
/// the process, and its stdout a line at a time. `None` (after a loud SKIPPED) where the SDK
/// cannot be installed outside CI.
pub fn mcp_script(
    srv: &TestServer,
    script: &str,
) -> Option<(Child, Lines<BufReader<ChildStdout>>)> {
    let python = python_with_mcp()?;
    let mut child = tokio::process::Command::new(python)
        .arg(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join(script),
        )
        .arg(srv.url("/mcp"))
        .env("SAYSO_KEY", &srv.key)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python starts");
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    Some((child, lines))
}

/// Waits (at most 120 s) for `talk`, the test's side of an `mcp_script`'s conversation, then
/// for `script` itself to end well.
pub async fn talked(child: Child, talk: impl std::future::Future<Output = ()>, script: &str) {
    tokio::time::timeout(Duration::from_secs(120), talk)
        .await
        .expect("the Python client finished in time");
    let out = child.wait_with_output().await.unwrap();
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl PyMcp {
    /// A client of `srv`'s endpoint at `path` (`/mcp`, `/mcp/omp`, …); `None` (after a loud
    /// SKIPPED) where the SDK cannot be installed outside CI.
    pub async fn connect(srv: &TestServer, path: &str) -> Option<PyMcp> {
        let python = python_with_mcp()?;
        let tests = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests");
        let mut child = spawn_talking(
            tokio::process::Command::new(python)
                .arg(tests.join("seed_client.py"))
                .arg(srv.url(path))
                .current_dir(&tests)
                .env("SAYSO_KEY", &srv.key)
                .env("PYTHONPATH", &tests)
                .stderr(Stdio::inherit()),
            "python",
        );
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Some(PyMcp {
            child,
            stdin,
            lines,
        })
    }

    /// A server on a fresh SQLite database and a client of its endpoint at `path`; `None`
    /// where the SDK cannot be installed, as with [`PyMcp::connect`].
    pub async fn on_fresh_server(path: &str) -> Option<(SqliteTestDb, TestServer, PyMcp)> {
        python_with_mcp()?;
        let (db, srv) = fresh_server().await;
        let py = PyMcp::connect(&srv, path).await?;
        Some((db, srv, py))
    }

    async fn request(&mut self, request: Value) {
        let line = format!("{request}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn response(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(120), self.lines.next_line())
            .await
            .expect("the Python client answered in time")
            .unwrap()
            .expect("the Python client is still running (see its stderr)");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON from the client: {line}"))
    }

    /// The tools the endpoint lists: name and input schema.
    pub async fn tools(&mut self) -> Vec<Value> {
        self.request(json!({"list": true})).await;
        self.response().await["tools"].as_array().unwrap().clone()
    }

    /// Starts a call; `result` reads what it returns.
    /// The tools listed, checked to be the profile's ask tool `ask` and then what resuming
    /// needs: `await_decision`, `get_decision`, `cancel_decision`.
    pub async fn ask_tools(&mut self, ask: &str) -> Vec<Value> {
        let tools = self.tools().await;
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(
            names,
            [ask, "await_decision", "get_decision", "cancel_decision"]
        );
        tools
    }

    pub async fn start(&mut self, tool: &str, args: Value) {
        self.request(json!({"tool": tool, "args": args})).await;
    }

    /// The result of the call started last.
    pub async fn result(&mut self) -> Called {
        let r = self.response().await;
        Called {
            is_error: r["is_error"].as_bool().unwrap(),
            text: r["text"].as_str().unwrap_or_default().to_string(),
            structured: r["structured"].clone(),
        }
    }

    /// A call and its result, nobody answering in between.
    pub async fn call(&mut self, tool: &str, args: Value) -> Called {
        self.start(tool, args).await;
        self.result().await
    }

    /// Ends the client and checks it exited cleanly.
    pub async fn finish(mut self) {
        drop(self.stdin);
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("the Python client ended")
            .unwrap();
        assert!(status.success(), "seed_client.py failed: {status}");
    }
}

/// The web_url of the inbox's newest pending decision, once there is one.
pub async fn pending_web_url(srv: &TestServer) -> String {
    for _ in 0..400 {
        let (_, list) = send(
            srv.client
                .get(srv.url("/v1/decisions?status=pending"))
                .bearer_auth(&srv.key),
        )
        .await;
        if let Some(first) = list["items"].as_array().and_then(|a| a.first()) {
            return s(first, "web_url").to_string();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no pending decision appeared");
}

/// Posts the page's own form (as a browser sends it) to `web_url`; returns the status.
pub async fn post_page(srv: &TestServer, web_url: &str, fields: &[(&str, &str)]) -> u16 {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    let resp = srv
        .client
        .post(web_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    resp.status().as_u16()
}
