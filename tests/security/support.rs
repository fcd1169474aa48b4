//! What the security tests share: the database behind a server, random and tampered
//! tokens, what a client can tell about a response, and a real `sayso serve` whose output
//! is kept whole.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::Rng;
use reqwest::redirect::Policy;
use reqwest::{Client, StatusCode};
use sqlx::{Connection, Row};

use crate::common;
use crate::common::db::{fresh_pg_url, fresh_sqlite_url, rows_of};
use crate::common::server::TestServer;

/// The database behind a test server, kept alive (and removed at the end) by its guard.
pub enum Db {
    Sqlite(common::db::SqliteTestDb),
    Pg(common::db::PgTestDb),
}

impl Db {
    pub async fn fresh(pg: bool) -> Option<Db> {
        if pg {
            fresh_pg_url().await.map(Db::Pg)
        } else {
            Some(Db::Sqlite(fresh_sqlite_url()))
        }
    }

    pub fn url(&self) -> &str {
        match self {
            Db::Sqlite(db) => &db.url,
            Db::Pg(db) => &db.url,
        }
    }

    /// Every value of every column of every table, as bytes: text as its UTF-8, blobs as
    /// they are, numbers as their decimal text.
    pub async fn dump(&self) -> Vec<(String, Vec<u8>)> {
        let columns = match self {
            Db::Sqlite(db) => sqlite_columns(&db.url).await,
            Db::Pg(db) => pg_columns(&db.url).await,
        };
        columns
            .into_iter()
            .flat_map(|(column, values)| {
                values
                    .into_iter()
                    .flatten()
                    .map(move |v| (column.clone(), v))
            })
            .collect()
    }

    /// The server key as stored in the settings table.
    pub async fn server_key_hex(&self) -> String {
        let sql = "SELECT value FROM settings WHERE name = 'token_key'";
        match self {
            Db::Sqlite(db) => {
                let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&db.url).unwrap();
                let mut conn = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
                sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap()
            }
            Db::Pg(db) => {
                let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
                sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap()
            }
        }
    }
}

/// Makes a request for one token.
pub type MakeRequest<'a> = Box<dyn Fn(&str) -> reqwest::RequestBuilder + 'a>;
/// Makes the token of one timing sample from its number.
pub type MakeToken<'a> = Box<dyn Fn(usize) -> String + 'a>;
/// Makes one guess (URL and API key) against a server.
pub type MakeGuess = Box<dyn Fn(&TestServer) -> (String, Option<String>)>;

/// A 1×1 PNG, so the image table has a row.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// Each column of a SQLite database (`table.column`) with its values as bytes (`None` for
/// NULL).
async fn sqlite_columns(url: &str) -> Vec<(String, Vec<Option<Vec<u8>>>)> {
    let opts = sqlx::sqlite::SqliteConnectOptions::from_str(url).unwrap();
    let mut conn = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    let mut out = Vec::new();
    for table in tables {
        let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info(?)")
            .bind(&table)
            .fetch_all(&mut conn)
            .await
            .unwrap();
        for column in columns {
            let sql = format!("SELECT CAST(\"{column}\" AS BLOB) FROM \"{table}\"");
            let values: Vec<(Option<Vec<u8>>,)> = rows_of(&mut conn, sql).await;
            out.push((format!("{table}.{column}"), firsts(values)));
        }
    }
    conn.close().await.unwrap();
    out
}

/// Each column of a PostgreSQL database's tables (`table.column`) with its values as the
/// UTF-8 of their text (`None` for NULL).
async fn pg_columns(url: &str) -> Vec<(String, Vec<Option<Vec<u8>>>)> {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let columns = sqlx::query(
        "SELECT table_schema::text, table_name::text, column_name::text \
         FROM information_schema.columns \
         WHERE table_schema NOT IN ('pg_catalog', 'information_schema') \
         ORDER BY 1, 2, 3",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(!columns.is_empty(), "no columns found");
    let mut out = Vec::new();
    for row in columns {
        let (schema, table, column): (String, String, String) =
            (row.get(0), row.get(1), row.get(2));
        let sql =
            format!("SELECT convert_to(\"{column}\"::text, 'UTF8') FROM \"{schema}\".\"{table}\"");
        let values: Vec<(Option<Vec<u8>>,)> = rows_of(&mut conn, sql).await;
        out.push((format!("{table}.{column}"), firsts(values)));
    }
    conn.close().await.unwrap();
    out
}

/// How many awaits are parked on the server now.
pub async fn parked(srv: &TestServer) -> usize {
    let text = srv.svc.scrape_metrics().await;
    text.lines()
        .find_map(|l| l.strip_prefix("sayso_awaits_parked "))
        .and_then(|n| n.trim().parse().ok())
        .expect("the parked gauge")
}

/// The seconds a refusal's `Retry-After` asks the client to wait, checked to be 1 to 60.
pub fn retry_after(resp: &reqwest::Response) -> u64 {
    let seconds: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&seconds), "{seconds}");
    seconds
}

/// The one column of each row.
fn firsts<T>(rows: Vec<(T,)>) -> Vec<T> {
    rows.into_iter().map(|(v,)| v).collect()
}

/// The token at the end of a link (`…/d/TOKEN` or `…/inbox/TOKEN`).
pub fn token_of(url: &str) -> &str {
    url.rsplit('/').next().unwrap()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A random string of `n` URL-safe characters.
pub fn random_text(n: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut rng = rand::rng();
    (0..n)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// An `sk_` key of the right shape that no inbox has.
pub fn random_api_key() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    format!("sk_{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// A token of the right shape (id ‖ 160-bit MAC) with a random id and a random MAC.
pub fn random_token() -> String {
    let raw: [u8; 36] = rand::rng().random();
    URL_SAFE_NO_PAD.encode(raw)
}

/// `token` with one character of its MAC part changed.
pub fn tampered(token: &str) -> String {
    let mut bytes = token.as_bytes().to_vec();
    let i = rand::rng().random_range(24..bytes.len());
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

pub fn no_redirects() -> Client {
    Client::builder()
        .redirect(Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// What a client can tell about a response: status, headers other than `Date` and
/// `X-Request-Id` (fresh for every request, whatever it asked), and body.
#[derive(Debug, PartialEq, Eq)]
pub struct Seen {
    pub status: StatusCode,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

async fn seen(req: reqwest::RequestBuilder) -> Seen {
    let resp = req.send().await.expect("request sent");
    let status = resp.status();
    let headers = resp
        .headers()
        .iter()
        .filter(|(name, _)| *name != "date" && *name != "x-request-id")
        .map(|(n, v)| (n.to_string(), String::from_utf8_lossy(v.as_bytes()).into()))
        .collect();
    let body = resp.bytes().await.expect("body read").to_vec();
    Seen {
        status,
        headers,
        body,
    }
}

/// Every one of `cases` must be seen exactly as the first one is.
pub async fn all_look_the_same(what: &str, cases: Vec<(String, reqwest::RequestBuilder)>) -> Seen {
    let mut first: Option<(String, Seen)> = None;
    for (name, req) in cases {
        let got = seen(req).await;
        match &first {
            None => first = Some((name, got)),
            Some((first_name, expected)) => assert_eq!(
                &got, expected,
                "{what}: {name} is told apart from {first_name}"
            ),
        }
    }
    first.expect("at least one case").1
}

pub const BIN: &str = env!("CARGO_BIN_EXE_sayso");

/// A real `sayso serve` whose stdout and stderr are pipes (as under systemd or Docker), both
/// kept whole.
pub struct Piped {
    child: tokio::process::Child,
    pub base: String,
    pub output: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Piped {
    /// Starts `sayso serve` on `db_url` under `sh -c "umask …; exec sayso serve"`, with every
    /// crate logging at trace, and waits until it listens (`None` if it exits first).
    pub async fn start(
        db_url: &str,
        umask: &str,
        env: &[(&str, &Path)],
    ) -> (Option<Piped>, String) {
        use tokio::io::{AsyncBufReadExt, BufReader};
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", &format!("umask {umask} && exec \"$0\" serve"), BIN])
            .env("SAYSO_DATABASE_URL", db_url)
            .env("SAYSO_LISTEN", "127.0.0.1:0")
            .env("SAYSO_LOG_FORMAT", "json")
            .env("SAYSO_LOG", "trace")
            .env_remove("SAYSO_STATE_DIR")
            .env_remove("SAYSO_PUBLIC_URL")
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let output = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let keep = |pipe: Box<dyn tokio::io::AsyncRead + Unpin + Send>,
                    tx: Option<tokio::sync::oneshot::Sender<String>>| {
            let output = output.clone();
            tokio::spawn(async move {
                let mut tx = tx;
                let mut lines = BufReader::new(pipe).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if line.contains("sayso is listening")
                        && let Some(tx) = tx.take()
                    {
                        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                        let _ = tx.send(v["fields"]["address"].as_str().unwrap().to_string());
                    }
                    let mut all = output.lock().unwrap();
                    all.push_str(&line);
                    all.push('\n');
                }
            });
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        keep(Box::new(child.stdout.take().unwrap()), None);
        keep(Box::new(child.stderr.take().unwrap()), Some(tx));
        match tokio::time::timeout(Duration::from_secs(60), rx).await {
            Ok(Ok(address)) => {
                let base = format!("http://{address}");
                let piped = Piped {
                    child,
                    base,
                    output: output.clone(),
                };
                (Some(piped), String::new())
            }
            Ok(Err(_)) => {
                let _ = child.wait().await;
                // Let the readers take the last lines.
                tokio::time::sleep(Duration::from_millis(200)).await;
                let said = output.lock().unwrap().clone();
                (None, said)
            }
            Err(_) => panic!("sayso did not listen within 60 s"),
        }
    }

    pub async fn stop(mut self) -> String {
        self.child.kill().await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        self.output.lock().unwrap().clone()
    }
}
