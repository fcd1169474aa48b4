//! A real SMTP server for the email tests: aiosmtpd (Python) with the handler in
//! `tests/smtp_sink.py`, which writes every accepted message to a directory as JSON
//! (envelope, headers, decoded text parts, raw source). Killed and cleaned up on drop.
//!
//! Needs `python3` with `aiosmtpd` (Debian: `apt-get install python3-aiosmtpd`). Without
//! them the tests print a loud `SKIPPED` and pass, except in CI (`CI` set), where they fail.
//! `SAYSO_TEST_PYTHON` names the interpreter to use; otherwise `python3` on the `PATH` is
//! tried, then `/usr/bin/python3` (where Debian's package lives when another Python is first
//! on the `PATH`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::Deserialize;
use uuid::Uuid;

use super::port::free_port;

/// A running aiosmtpd on 127.0.0.1 that keeps what it receives.
pub struct SmtpSink {
    pub port: u16,
    /// Where the messages are written, one `NNNNNN.json` each.
    pub dir: PathBuf,
    child: Child,
}

/// One message as the server received it.
#[derive(Debug, Clone, Deserialize)]
pub struct ReceivedMail {
    pub mail_from: String,
    pub rcpt_tos: Vec<String>,
    /// In order, as `(name, value)`; values decoded (RFC 2047) by Python's email package.
    pub headers: Vec<(String, String)>,
    /// The top-level MIME type, e.g. `multipart/alternative`.
    pub content_type: String,
    /// Every `text/*` leaf part, decoded.
    pub parts: Vec<ReceivedPart>,
    /// The message as sent, headers and all.
    pub raw: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ReceivedPart {
    pub content_type: String,
    pub body: String,
}

impl ReceivedMail {
    /// The first header of this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body of the first part of this type (`text/plain`, `text/html`).
    pub fn part(&self, content_type: &str) -> Option<&str> {
        self.parts
            .iter()
            .find(|p| p.content_type == content_type)
            .map(|p| p.body.as_str())
    }
}

/// The Python interpreter that has aiosmtpd; `None` (after a loud `SKIPPED`) when there is
/// none, except in CI, where that panics.
pub fn python() -> Option<&'static str> {
    static FOUND: OnceLock<Option<String>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let candidates: Vec<String> = match std::env::var("SAYSO_TEST_PYTHON") {
            Ok(p) => vec![p],
            Err(_) => vec!["python3".into(), "/usr/bin/python3".into()],
        };
        candidates.into_iter().find(|p| {
            Command::new(p)
                .args(["-c", "import aiosmtpd"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    });
    if found.is_none() {
        let why = "no python3 with aiosmtpd (apt-get install python3-aiosmtpd, \
                   or set SAYSO_TEST_PYTHON)";
        if std::env::var_os("CI").is_some() {
            panic!("{why}: the email tests need a real SMTP server in CI");
        }
        // Straight to stderr: libtest would swallow an `eprintln!` of a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: {why}; the email tests did not run"
        );
    }
    found.as_deref()
}

impl SmtpSink {
    /// Starts a server on a free port; `None` when it cannot run here (see `python`).
    pub async fn start() -> Option<SmtpSink> {
        Self::start_on(free_port()).await
    }

    /// Starts a server on `port` and waits until it accepts connections.
    pub async fn start_on(port: u16) -> Option<SmtpSink> {
        let python = python()?;
        let dir = std::env::temp_dir().join(format!("sayso-smtp-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("mail directory");
        let log = std::fs::File::create(dir.join("server.log")).expect("server log");
        let tests_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
        let child = Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-c", "smtp_sink.Sink"])
            .arg(&dir)
            .env("PYTHONPATH", &tests_dir)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("server log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {python} -m aiosmtpd: {e}"));
        let mut sink = SmtpSink { port, dir, child };
        sink.wait_until_accepting().await;
        Some(sink)
    }

    /// `smtp://127.0.0.1:{port}`: plain SMTP, for `EmailChannel::new`.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    async fn wait_until_accepting(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port))
                .await
                .is_ok()
            {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("aiosmtpd exited ({status}): {}", self.log());
            }
            if Instant::now() > deadline {
                panic!(
                    "aiosmtpd did not accept connections in time: {}",
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// Every message received so far, oldest first.
    pub fn received(&self) -> Vec<ReceivedMail> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .expect("mail directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).expect("received mail");
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            })
            .collect()
    }

    /// Waits (up to 10 s) until at least `n` messages arrived and returns them all.
    pub async fn wait_for(&self, n: usize) -> Vec<ReceivedMail> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            if Instant::now() > deadline {
                panic!(
                    "expected {n} mail(s), got {}; server log: {}",
                    got.len(),
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A sink and a notifying server on a fresh SQLite database that mails the notifications
/// of its inbox `default` to `address` through it; `None` when the sink cannot run here.
pub async fn mailing_server(
    address: &str,
) -> Option<(SmtpSink, super::db::SqliteTestDb, super::server::TestServer)> {
    let sink = SmtpSink::start().await?;
    let db = super::db::fresh_sqlite_url();
    let srv = super::server::TestServer::start_notifying(&db.url, Some(&sink.url())).await;
    srv.mail_to(address).await;
    Some((sink, db, srv))
}
