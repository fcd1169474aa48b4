//! A real Synapse for a test: the pinned one (tests/chat/synapse/requirements.txt), installed
//! once per machine by install.sh, started by run.sh on a free loopback port with a
//! configuration of its own, and stopped (and its files removed) when the test drops it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

/// The synapse scripts' folder.
pub fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chat/synapse")
}

/// The venv's Python with Synapse and matrix-nio; `None` after a loud SKIPPED when it cannot
/// be installed, except in CI (`CI` set), where that fails the test.
pub fn python() -> Option<&'static PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| match install() {
            Ok(p) => Some(p),
            Err(why) => {
                if std::env::var_os("CI").is_some() {
                    panic!("Synapse and matrix-nio are required in CI: {why}");
                }
                eprintln!("SKIPPED: Synapse and matrix-nio unavailable ({why})");
                None
            }
        })
        .as_ref()
}

fn install() -> Result<PathBuf, String> {
    let started = Instant::now();
    let out = std::process::Command::new("bash")
        .arg(scripts().join("install.sh"))
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("install.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!("install.sh failed ({})", out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = stdout.lines().last().unwrap_or_default().trim().to_string();
    let python = Path::new(&dir).join("bin/python");
    if !python.exists() {
        return Err(format!("install.sh named {dir:?}, which has no bin/python"));
    }
    println!(
        "Synapse venv ready in {:.1} s at {dir}",
        started.elapsed().as_secs_f64()
    );
    Ok(python)
}

/// A running Synapse, server name `sayso.test`.
pub struct Homeserver {
    pub url: String,
    pub port: u16,
    dir: PathBuf,
    python: PathBuf,
    child: Option<Child>,
}

impl Homeserver {
    /// Starts one; `None` when Synapse cannot be installed here (outside CI).
    pub async fn start() -> Option<Homeserver> {
        let python = python()?.clone();
        crate::common::server::init_tls();
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("synapse-runs")
            .join(uuid::Uuid::new_v4().simple().to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let mut hs = Homeserver {
            url: format!("http://127.0.0.1:{port}"),
            port,
            dir,
            python,
            child: None,
        };
        hs.run().await;
        Some(hs)
    }

    /// Starts Synapse on the same files and port and waits until it answers.
    pub async fn run(&mut self) {
        let started = Instant::now();
        let child = Command::new("bash")
            .arg(scripts().join("run.sh"))
            .arg(&self.dir)
            .arg(self.port.to_string())
            .env("SAYSO_SYNAPSE_PYTHON", &self.python)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(self.dir.join("stderr")).unwrap(),
            ))
            .kill_on_drop(true)
            .spawn()
            .expect("run.sh starts");
        self.child = Some(child);
        let versions = format!("{}/_matrix/client/versions", self.url);
        let client = reqwest::Client::new();
        loop {
            if let Ok(r) = client.get(&versions).send().await
                && r.status().is_success()
            {
                break;
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!(
                    "Synapse exited ({status}) before answering:\n{}",
                    self.logs()
                );
            }
            if started.elapsed() > Duration::from_secs(90) {
                panic!("Synapse did not answer within 90 s:\n{}", self.logs());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        println!(
            "Synapse answering on port {} after {:.1} s",
            self.port,
            started.elapsed().as_secs_f64()
        );
    }

    /// Stops Synapse (the homeserver is down until `run`).
    pub async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
            let _ = child.wait().await;
        }
    }

    /// Registers users by shared secret; each one's password is `{name}-password`.
    pub async fn register(&self, names: &[&str]) -> HashMap<String, String> {
        let secret = std::fs::read_to_string(self.dir.join("registration_secret")).unwrap();
        let out = Command::new(&self.python)
            .arg(scripts().join("person.py"))
            .args(["register", &self.url, secret.trim()])
            .args(names)
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "registration failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    pub fn python(&self) -> &Path {
        &self.python
    }

    fn logs(&self) -> String {
        let read = |name: &str| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        format!("{}\n{}", read("stderr"), read("homeserver.log"))
    }
}

impl Drop for Homeserver {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.start_kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
