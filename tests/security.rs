//! Trust under hostile input: capability links and API keys are long, random and never kept
//! in plain text; a wrong link or key looks exactly like an absent one and costs no database
//! work; one inbox's key sees nothing of another's; guessing is rate-limited per address;
//! every page carries its security headers. (tests/api.rs, tests/pages.rs and
//! tests/hostile.rs cover the ordinary 401/404 paths, a few page headers and malformed input.)

mod common;

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};
use std::str::FromStr;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use common::db::{fresh_pg_url, fresh_sqlite_url};
use common::server::{TestServer, s, send};
use futures::StreamExt;
use rand::Rng;
use reqwest::header::HeaderMap;
use reqwest::redirect::Policy;
use reqwest::{Client, Method, StatusCode};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use sayso::http::RateLimit;
use sayso::service::Tokens;
use serde_json::{Value, json};
use sqlx::{Connection, Executor, Row};
use uuid::Uuid;

// ---------------------------------------------------------------------------------------
// Helpers

/// The database behind a test server, kept alive (and removed at the end) by its guard.
enum Db {
    Sqlite(common::db::SqliteTestDb),
    Pg(common::db::PgTestDb),
}

impl Db {
    async fn fresh(pg: bool) -> Option<Db> {
        if pg {
            fresh_pg_url().await.map(Db::Pg)
        } else {
            Some(Db::Sqlite(fresh_sqlite_url()))
        }
    }

    fn url(&self) -> &str {
        match self {
            Db::Sqlite(db) => &db.url,
            Db::Pg(db) => &db.url,
        }
    }

    /// Every value of every column of every table, as bytes: text as its UTF-8, blobs as
    /// they are, numbers as their decimal text.
    async fn dump(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        match self {
            Db::Sqlite(db) => {
                let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&db.url).unwrap();
                let mut conn = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
                let tables: Vec<String> = sqlx::query_scalar(
                    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
                )
                .fetch_all(&mut conn)
                .await
                .unwrap();
                for table in tables {
                    let columns: Vec<String> =
                        sqlx::query_scalar("SELECT name FROM pragma_table_info(?)")
                            .bind(&table)
                            .fetch_all(&mut conn)
                            .await
                            .unwrap();
                    for column in columns {
                        let sql = format!("SELECT CAST(\"{column}\" AS BLOB) FROM \"{table}\"");
                        let values: Vec<Option<Vec<u8>>> =
                            sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                                .fetch_all(&mut conn)
                                .await
                                .unwrap();
                        out.extend(
                            values
                                .into_iter()
                                .flatten()
                                .map(|v| (format!("{table}.{column}"), v)),
                        );
                    }
                }
                conn.close().await.unwrap();
            }
            Db::Pg(db) => {
                let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
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
                for row in columns {
                    let (schema, table, column): (String, String, String) =
                        (row.get(0), row.get(1), row.get(2));
                    let sql = format!(
                        "SELECT convert_to(\"{column}\"::text, 'UTF8') FROM \"{schema}\".\"{table}\""
                    );
                    let values: Vec<Option<Vec<u8>>> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                        .fetch_all(&mut conn)
                        .await
                        .unwrap();
                    out.extend(
                        values
                            .into_iter()
                            .flatten()
                            .map(|v| (format!("{table}.{column}"), v)),
                    );
                }
                conn.close().await.unwrap();
            }
        }
        out
    }

    /// The server key as stored in the settings table.
    async fn server_key_hex(&self) -> String {
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
type MakeRequest<'a> = Box<dyn Fn(&str) -> reqwest::RequestBuilder + 'a>;
/// Makes the token of one timing sample from its number.
type MakeToken<'a> = Box<dyn Fn(usize) -> String + 'a>;
/// Makes one guess (URL and API key) against a server.
type MakeGuess = Box<dyn Fn(&TestServer) -> (String, Option<String>)>;

/// The token at the end of a link (`…/d/TOKEN` or `…/inbox/TOKEN`).
fn token_of(url: &str) -> &str {
    url.rsplit('/').next().unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A random string of `n` URL-safe characters.
fn random_text(n: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut rng = rand::rng();
    (0..n)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// An `sk_` key of the right shape that no inbox has.
fn random_api_key() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    format!("sk_{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// A token of the right shape (id ‖ 160-bit MAC) with a random id and a random MAC.
fn random_token() -> String {
    let raw: [u8; 36] = rand::rng().random();
    URL_SAFE_NO_PAD.encode(raw)
}

/// `token` with one character of its MAC part changed.
fn tampered(token: &str) -> String {
    let mut bytes = token.as_bytes().to_vec();
    let i = rand::rng().random_range(24..bytes.len());
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

fn no_redirects() -> Client {
    Client::builder()
        .redirect(Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// What a client can tell about a response: status, headers other than `Date` and
/// `X-Request-Id` (fresh for every request, whatever it asked), and body.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    status: StatusCode,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
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
async fn all_look_the_same(what: &str, cases: Vec<(String, reqwest::RequestBuilder)>) -> Seen {
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

// ---------------------------------------------------------------------------------------
// Tokens and keys: long, random, never stored

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_key_is_256_random_bits_of_its_own_per_database_on_sqlite() {
    server_key_is_256_bits_and_new_per_database(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_key_is_256_random_bits_of_its_own_per_database_on_postgres() {
    server_key_is_256_bits_and_new_per_database(true).await;
}

async fn server_key_is_256_bits_and_new_per_database(pg: bool) {
    let mut keys = Vec::new();
    for _ in 0..2 {
        let Some(db) = Db::fresh(pg).await else {
            return;
        };
        let srv = TestServer::start(db.url()).await;
        let key_hex = db.server_key_hex().await;
        assert_eq!(key_hex.len(), 64, "a 256-bit key, hex: {key_hex}");
        let key: Vec<u8> = (0..32)
            .map(|i| u8::from_str_radix(&key_hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        // All-zero or all-equal bytes would mean the random source was never read.
        assert!(key.iter().collect::<BTreeSet<_>>().len() > 8, "{key_hex}");
        // The links the server hands out are made with exactly this key.
        let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
        let id = Uuid::parse_str(s(&h, "decision_id")).unwrap();
        let tokens = Tokens::from_key_hex(&key_hex).unwrap();
        assert_eq!(token_of(s(&h, "web_url")), tokens.answer_token(id));
        // Another replica on the same database reads the same key, so the link opens there too.
        let replica = TestServer::start_replica(db.url(), &srv).await;
        assert_eq!(db.server_key_hex().await, key_hex);
        let path = format!("/d/{}", token_of(s(&h, "web_url")));
        let resp = replica.client.get(replica.url(&path)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        replica.stop().await;
        srv.stop().await;
        keys.push(key_hex);
    }
    assert_ne!(keys[0], keys[1], "two fresh databases share a server key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_and_keys_carry_at_least_128_random_bits() {
    let db = Db::fresh(false).await.unwrap();
    let srv = TestServer::start(db.url()).await;
    let key_hex = db.server_key_hex().await;
    let tokens = Tokens::from_key_hex(&key_hex).unwrap();

    // Answer links: base64url of the decision id (16 bytes) and a 160-bit MAC.
    let mut macs = Vec::new();
    for i in 0..64 {
        let h = srv
            .create(json!({"question": format!("Q{i}"), "kind": "bool", "notify": "none"}))
            .await;
        let token = token_of(s(&h, "web_url")).to_string();
        let raw = URL_SAFE_NO_PAD
            .decode(&token)
            .expect("a link token is base64url");
        assert_eq!(raw.len(), 36, "{token}");
        let id = Uuid::parse_str(s(&h, "decision_id")).unwrap();
        assert_eq!(&raw[..16], id.as_bytes(), "the token starts with the id");
        assert!((raw.len() - 16) * 8 >= 128, "fewer than 128 bits of MAC");
        macs.push(raw[16..].to_vec());
    }
    assert_bits_vary("answer link MACs", &macs);
    assert_eq!(macs.iter().collect::<BTreeSet<_>>().len(), macs.len());

    // Feed links: the same shape, under another purpose.
    let mut feed_macs = Vec::new();
    for i in 0..64 {
        let inbox = srv
            .svc
            .create_inbox(&format!("inbox-{i}"), None)
            .await
            .unwrap();
        let url = srv.svc.feed_url(&inbox);
        let raw = URL_SAFE_NO_PAD.decode(token_of(&url)).unwrap();
        assert_eq!(raw.len(), 36, "{url}");
        assert_eq!(&raw[..16], inbox.id.as_bytes());
        assert_eq!(token_of(&url), tokens.feed_token(inbox.id));
        feed_macs.push(raw[16..].to_vec());
    }
    assert_bits_vary("feed link MACs", &feed_macs);

    // API keys: `sk_` and 256 bits from the OS random source.
    let mut keys = vec![URL_SAFE_NO_PAD.decode(&srv.key[3..]).unwrap()];
    for _ in 0..63 {
        let key = srv.svc.create_api_key("default").await.unwrap();
        assert!(key.starts_with("sk_"), "{key}");
        keys.push(
            URL_SAFE_NO_PAD
                .decode(&key[3..])
                .expect("base64url after sk_"),
        );
    }
    assert!(keys.iter().all(|k| k.len() * 8 >= 256));
    assert_bits_vary("API keys", &keys);
    srv.stop().await;
}

/// Each bit position takes both values across `samples`. For random bits, one position stuck
/// across 64 samples has the odds 2⁻⁶³, so this fails only for bits that are not random (a
/// constant, a counter, a timestamp).
fn assert_bits_vary(what: &str, samples: &[Vec<u8>]) {
    let len = samples[0].len();
    for bit in 0..len * 8 {
        let ones = samples
            .iter()
            .filter(|s| s[bit / 8] & (1 << (bit % 8)) != 0)
            .count();
        assert!(
            ones > 0 && ones < samples.len(),
            "{what}: bit {bit} is {} in all {} samples",
            u8::from(ones > 0),
            samples.len()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_link_or_key_is_stored_in_plain_text_on_sqlite() {
    no_secret_is_stored(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_link_or_key_is_stored_in_plain_text_on_postgres() {
    no_secret_is_stored(true).await;
}

/// A 1×1 PNG, so the image table has a row.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

async fn no_secret_is_stored(pg: bool) {
    let Some(db) = Db::fresh(pg).await else {
        return;
    };
    // With the outbox worker running, so deliveries and their outcomes are written too.
    let srv = TestServer::start_notifying(db.url(), None).await;
    let mut keys = vec![srv.key.clone()];
    keys.push(srv.svc.create_api_key("default").await.unwrap());
    let mut feeds = vec![srv.svc.feed_url(&srv.default_inbox().await)];
    for name in ["ops", "billing"] {
        let inbox = srv
            .svc
            .create_inbox(name, Some(&format!("{name}@example.com")))
            .await
            .unwrap();
        feeds.push(srv.svc.feed_url(&inbox));
        keys.push(srv.svc.create_api_key(name).await.unwrap());
    }
    let bodies = [
        json!({"question": "Deploy?", "kind": "bool", "context_md": "**now**", "context_image_b64": PNG,
               "callback_url": "http://127.0.0.1:9/hook", "metadata": {"run": 7}}),
        json!({"question": "Which?", "kind": "choose", "options": ["a", "b"], "notify": "email"}),
        json!({"question": "Why?", "kind": "text", "default_outcome": "because"}),
        json!({"question": "Form", "kind": "form", "schema": {"properties": {"n": {"type": "integer"}}}}),
        json!({"question": "Tidy up", "kind": "todo", "project": "home"}),
    ];
    let mut links = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        let key = &keys[i % keys.len()];
        let (status, h) = send(
            srv.client
                .post(srv.url("/v1/decisions"))
                .bearer_auth(key)
                .header("Idempotency-Key", format!("idem-{i}"))
                .json(body),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{h}");
        // The same key again: the stored first handle comes back, link and all.
        let (status, again) = send(
            srv.client
                .post(srv.url("/v1/decisions"))
                .bearer_auth(key)
                .header("Idempotency-Key", format!("idem-{i}"))
                .json(body),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{again}");
        assert_eq!(again["web_url"], h["web_url"]);
        links.push(h["web_url"].as_str().unwrap().to_string());
    }
    // Viewed, answered, declined, cancelled: every kind of event is written.
    for link in &links {
        srv.client.get(link).send().await.unwrap();
    }
    for (link, answer) in [
        (&links[0], json!({"value": true, "remark": "fine"})),
        (&links[1], json!({"action": "decline"})),
        (&links[4], json!({"action": "done"})),
    ] {
        let (status, body) = srv.answer(link, answer).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, body) = send(
        srv.client
            .post(srv.url(&format!(
                "/v1/decisions/{}/cancel",
                Uuid::from_slice(&URL_SAFE_NO_PAD.decode(token_of(&links[2])).unwrap()[..16])
                    .unwrap()
            )))
            .bearer_auth(&keys[2]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for feed in &feeds {
        assert_eq!(srv.client.get(feed).send().await.unwrap().status(), 200);
    }
    // Give the outbox worker time to try the webhook and record its outcome.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let dump = db.dump().await;
    let mut needles: Vec<(String, Vec<u8>)> = Vec::new();
    let add_token = |what: &str, token: &str, needles: &mut Vec<(String, Vec<u8>)>| {
        let raw = URL_SAFE_NO_PAD.decode(token).unwrap();
        let mac = &raw[16..];
        for (form, bytes) in [
            ("as sent", token.as_bytes().to_vec()),
            ("MAC, base64url", URL_SAFE_NO_PAD.encode(mac).into_bytes()),
            ("MAC, base64", STANDARD.encode(mac).into_bytes()),
            ("MAC, hex", hex(mac).into_bytes()),
            ("MAC, HEX", hex(mac).to_uppercase().into_bytes()),
            ("MAC, raw", mac.to_vec()),
        ] {
            needles.push((format!("{what} {token} ({form})"), bytes));
        }
    };
    for link in &links {
        add_token("answer link", token_of(link), &mut needles);
    }
    for feed in &feeds {
        add_token("feed link", token_of(feed), &mut needles);
    }
    for key in &keys {
        let raw = URL_SAFE_NO_PAD.decode(&key[3..]).unwrap();
        for (form, bytes) in [
            ("as sent", key.as_bytes().to_vec()),
            ("without sk_", key.as_bytes()[3..].to_vec()),
            ("base64", STANDARD.encode(&raw).into_bytes()),
            ("hex", hex(&raw).into_bytes()),
            ("raw", raw.clone()),
        ] {
            needles.push((format!("API key {key} ({form})"), bytes));
        }
    }
    for (column, value) in &dump {
        for (what, needle) in &needles {
            assert!(
                !value.windows(needle.len()).any(|w| w == needle.as_slice()),
                "{what} is stored in {column}: {}",
                String::from_utf8_lossy(value)
            );
        }
    }
    // The scan reads what it should: each key's hash, each decision id and the image are there.
    let contains = |needle: &[u8]| {
        dump.iter()
            .any(|(_, v)| v.windows(needle.len()).any(|w| w == needle))
    };
    for key in &keys {
        let hash = sayso::service::tokens::hash_api_key(key);
        assert!(contains(hash.as_bytes()), "the hash of {key} is not stored");
    }
    for link in &links {
        let raw = URL_SAFE_NO_PAD.decode(token_of(link)).unwrap();
        let id = Uuid::from_slice(&raw[..16]).unwrap().to_string();
        assert!(
            contains(id.as_bytes()),
            "decision {id} not found in the dump"
        );
    }
    assert!(
        contains(b"IHDR") || contains(b"\\x89504e47"),
        "the image is not in the dump"
    );
    srv.stop().await;
}

// ---------------------------------------------------------------------------------------
// A wrong link or key is told apart from nothing

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_link_looks_exactly_like_a_link_to_nothing() {
    let db = Db::fresh(false).await.unwrap();
    let srv = TestServer::start(db.url()).await;
    let h = srv
        .create(json!({"question": "Q", "kind": "bool", "context_image_b64": PNG}))
        .await;
    let real = token_of(s(&h, "web_url")).to_string();
    let inbox = srv.default_inbox().await;
    let feed = token_of(&srv.svc.feed_url(&inbox)).to_string();
    let tokens = Tokens::from_key_hex(&db.server_key_hex().await).unwrap();
    let foreign = Tokens::from_key_hex(&Tokens::generate_key_hex()).unwrap();
    let id = Uuid::parse_str(s(&h, "decision_id")).unwrap();

    // Wrong: made without the server key, or for another purpose. Absent: a genuine link to a
    // decision or inbox that does not exist (as after a deletion).
    let answer_cases = vec![
        (
            "absent: genuine link, no such decision",
            tokens.answer_token(Uuid::now_v7()),
        ),
        ("wrong MAC for an existing decision", tampered(&real)),
        (
            "another server's link to the same id",
            foreign.answer_token(id),
        ),
        ("the inbox's feed token", feed.clone()),
        ("random id and MAC", random_token()),
        ("48 letters", "A".repeat(48)),
        ("short", "x".into()),
        ("long", random_text(300)),
        ("percent-encoded junk", "%ff%00abc".into()),
    ];
    let feed_cases = [
        (
            "absent: genuine link, no such inbox",
            tokens.feed_token(Uuid::now_v7()),
        ),
        ("wrong MAC for the existing inbox", tampered(&feed)),
        (
            "another server's link to the same inbox",
            foreign.feed_token(inbox.id),
        ),
        ("an answer token", real.clone()),
        ("random id and MAC", random_token()),
        ("short", "x".into()),
        ("long", random_text(300)),
    ];
    // A usable subscription (the P-256 base point as the browser's key), so that only the
    // link decides the answer.
    let p256_base_point = [
        "04",
        "6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296",
        "4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5",
    ]
    .concat();
    let point: Vec<u8> = (0..65)
        .map(|i| u8::from_str_radix(&p256_base_point[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let subscription = json!({
        "endpoint": "https://push.example.com/x",
        "keys": {"p256dh": URL_SAFE_NO_PAD.encode(point), "auth": URL_SAFE_NO_PAD.encode([7u8; 16])}
    });
    let client = no_redirects();
    let json_answer = json!({"action": "answer", "value": "yes"});
    let requests: Vec<(&str, MakeRequest)> = vec![
        (
            "GET /d/…",
            Box::new(|t: &str| client.get(srv.url(&format!("/d/{t}")))),
        ),
        (
            "POST /d/… (JSON)",
            Box::new(|t: &str| client.post(srv.url(&format!("/d/{t}"))).json(&json_answer)),
        ),
        (
            "POST /d/… (form)",
            Box::new(|t: &str| {
                client
                    .post(srv.url(&format!("/d/{t}")))
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body("value=yes")
            }),
        ),
        (
            "GET /d/…/image",
            Box::new(|t: &str| client.get(srv.url(&format!("/d/{t}/image")))),
        ),
    ];
    for (what, request) in &requests {
        let cases = answer_cases
            .iter()
            .map(|(name, t)| (name.to_string(), request(t)))
            .collect();
        let seen = all_look_the_same(what, cases).await;
        assert_eq!(seen.status, StatusCode::NOT_FOUND, "{what}");
    }
    let feed_requests: Vec<(&str, MakeRequest)> = vec![
        (
            "GET /inbox/…",
            Box::new(|t: &str| client.get(srv.url(&format!("/inbox/{t}")))),
        ),
        (
            "POST /inbox/…/push",
            Box::new(|t: &str| {
                client
                    .post(srv.url(&format!("/inbox/{t}/push")))
                    .json(&subscription)
            }),
        ),
    ];
    for (what, request) in &feed_requests {
        let cases = feed_cases
            .iter()
            .map(|(name, t)| (name.to_string(), request(t)))
            .collect();
        let seen = all_look_the_same(what, cases).await;
        assert_eq!(seen.status, StatusCode::NOT_FOUND, "{what}");
    }
    // Nothing of this reached the decision.
    assert_eq!(srv.get(&id.to_string()).await["status"], "pending");
    drop((requests, feed_requests));
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_api_key_looks_exactly_like_no_key() {
    let db = Db::fresh(false).await.unwrap();
    let srv = TestServer::start(db.url()).await;
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let id = s(&h, "decision_id").to_string();
    let wrong: Vec<(&str, Option<String>)> = vec![
        ("no Authorization", None),
        (
            "a well-formed key no inbox has",
            Some(format!("Bearer {}", random_api_key())),
        ),
        (
            "the key with one character changed",
            Some(format!("Bearer {}", tampered(&srv.key))),
        ),
        (
            "the key cut short",
            Some(format!("Bearer {}", &srv.key[..20])),
        ),
        ("a key that is not sk_", Some("Bearer not-a-key".into())),
        ("an empty bearer", Some("Bearer ".into())),
        (
            "the key in another scheme",
            Some(format!("Basic {}", srv.key)),
        ),
        (
            "a feed token",
            Some(format!(
                "Bearer {}",
                token_of(&srv.svc.feed_url(&srv.default_inbox().await))
            )),
        ),
        (
            "a 10 KB key",
            Some(format!("Bearer sk_{}", random_text(10_000))),
        ),
    ];
    for (method, path) in [
        (Method::GET, "/v1/decisions".to_string()),
        (Method::POST, "/v1/decisions".to_string()),
        (Method::GET, format!("/v1/decisions/{id}")),
        (Method::GET, format!("/v1/decisions/{}", Uuid::now_v7())),
        (Method::GET, format!("/v1/decisions/{id}/await?timeout_s=1")),
        (Method::POST, format!("/v1/decisions/{id}/cancel")),
        (Method::GET, format!("/v1/decisions/{id}/events")),
        (Method::GET, "/v1/events".to_string()),
        (Method::GET, "/v1/usage".to_string()),
    ] {
        let cases = wrong
            .iter()
            .map(|(name, auth)| {
                let mut req = srv.client.request(method.clone(), srv.url(&path));
                if method == Method::POST {
                    req = req.json(&json!({"question": "Q", "kind": "bool"}));
                }
                if let Some(a) = auth {
                    req = req.header("authorization", a);
                }
                (name.to_string(), req)
            })
            .collect();
        let seen = all_look_the_same(&format!("{method} {path}"), cases).await;
        assert_eq!(seen.status, StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // Nothing was created or cancelled.
    assert_eq!(srv.get(&id).await["status"], "pending");
    let (_, list) = send(srv.req(Method::GET, "/v1/decisions")).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    srv.stop().await;
}

/// A link is checked by recomputing its MAC before any database work. Shown without timing:
/// with the decisions and inboxes tables locked by another transaction, every request that
/// reaches the database waits, yet every wrong link is still answered 404 at once. The
/// genuine links, sent first, wait for the lock: proof that the lock holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_link_is_refused_before_the_database_is_asked() {
    let Some(db) = fresh_pg_url().await else {
        return;
    };
    let srv = TestServer::start(&db.url).await;
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    let web_url = s(&h, "web_url").to_string();
    let feed_url = srv.svc.feed_url(&srv.default_inbox().await);

    let mut locker = sqlx::PgConnection::connect(&db.url).await.unwrap();
    locker.execute("BEGIN").await.unwrap();
    locker
        .execute("LOCK TABLE decisions, inboxes IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();

    let genuine: Vec<_> = [web_url.clone(), feed_url.clone()]
        .into_iter()
        .map(|url| {
            let client = srv.client.clone();
            tokio::spawn(async move { client.get(&url).send().await.map(|r| r.status()) })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let blocked = |g: &[tokio::task::JoinHandle<_>]| g.iter().all(|t| !t.is_finished());
    assert!(
        blocked(&genuine),
        "a genuine link was answered while its table was locked"
    );

    let real = token_of(&web_url);
    let feed = token_of(&feed_url);
    let wrong = [
        format!("/d/{}", tampered(real)),
        format!("/d/{}", random_token()),
        format!("/d/{feed}"),
        "/d/garbage".to_string(),
        format!("/inbox/{}", tampered(feed)),
        format!("/inbox/{}", random_token()),
        format!("/inbox/{real}"),
    ];
    for path in &wrong {
        for post in [false, true] {
            let req = if post {
                srv.client
                    .post(srv.url(path))
                    .json(&json!({"action": "answer", "value": "yes"}))
            } else {
                srv.client.get(srv.url(path))
            };
            let resp = tokio::time::timeout(Duration::from_secs(10), req.send())
                .await
                .unwrap_or_else(|_| panic!("{path} waited for the database"))
                .unwrap();
            // POST /inbox/… has no route: 405 before any handler, which is fine too.
            assert!(
                matches!(
                    resp.status(),
                    StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
                ),
                "{path}: {}",
                resp.status()
            );
        }
    }
    assert!(
        blocked(&genuine),
        "a genuine link was answered while its table was locked"
    );
    locker.execute("ROLLBACK").await.unwrap();
    for g in genuine {
        assert_eq!(g.await.unwrap().unwrap(), StatusCode::OK);
    }
    locker.close().await.unwrap();
    srv.stop().await;
}

/// Timing, as a second view of the same property. It protects against a link check whose
/// cost depends on what the link names: a lookup of the id before the MAC check (or an early
/// exit on the first wrong MAC byte at a scale a network could show) would let a guesser learn
/// which decision ids exist. The three kinds of wrong link are sent interleaved, so load on the
/// machine falls on all alike; their medians must agree within a factor of 3, far wider than
/// the noise of this shared machine, so the test does not fail by chance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_links_take_the_same_time_whether_or_not_the_decision_exists() {
    let db = Db::fresh(false).await.unwrap();
    let srv = TestServer::start_rate_limited(db.url(), RateLimit::OFF).await;
    let mut real = Vec::new();
    for i in 0..20 {
        let h = srv
            .create(json!({"question": format!("Q{i}"), "kind": "bool", "notify": "none"}))
            .await;
        real.push(token_of(s(&h, "web_url")).to_string());
    }
    let client = Client::new();
    let classes: [(&str, MakeToken); 3] = [
        (
            "wrong MAC, existing decision",
            Box::new(|i| tampered(&real[i % real.len()])),
        ),
        ("wrong MAC, no such decision", Box::new(|_| random_token())),
        ("garbage", Box::new(|i| random_text(1 + i % 80))),
    ];
    let mut samples: [Vec<Duration>; 3] = Default::default();
    for round in 0..330 {
        let mut order = [0, 1, 2];
        order.rotate_left(round % 3);
        for c in order {
            let url = srv.url(&format!("/d/{}", (classes[c].1)(round)));
            let start = Instant::now();
            let resp = client.get(&url).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::NOT_FOUND);
            resp.bytes().await.unwrap();
            // The first rounds warm up connections and caches.
            if round >= 30 {
                samples[c].push(start.elapsed());
            }
        }
    }
    let medians: Vec<Duration> = samples
        .iter_mut()
        .map(|s| {
            s.sort();
            s[s.len() / 2]
        })
        .collect();
    for (i, (name, _)) in classes.iter().enumerate() {
        eprintln!("median {name}: {:?}", medians[i]);
    }
    let (lo, hi) = (medians.iter().min().unwrap(), medians.iter().max().unwrap());
    assert!(
        hi.as_secs_f64() <= 3.0 * lo.as_secs_f64(),
        "wrong links differ in cost by what they name: {medians:?}"
    );
    srv.stop().await;
}

// ---------------------------------------------------------------------------------------
// One inbox's key sees nothing of another inbox

/// rmcp's client on the server's `/mcp` with `key`.
async fn mcp(srv: &TestServer, key: &str) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(srv.url("/mcp")).auth_header(key),
    );
    ().serve(transport).await.expect("MCP connected")
}

async fn call(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name} failed: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_inboxs_key_finds_nothing_on_sqlite() {
    let db = Db::fresh(false).await.unwrap();
    another_inboxs_key_finds_nothing(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_inboxs_key_finds_nothing_on_postgres() {
    let Some(db) = Db::fresh(true).await else {
        return;
    };
    another_inboxs_key_finds_nothing(&db).await;
}

async fn another_inboxs_key_finds_nothing(db: &Db) {
    let srv = TestServer::start(db.url()).await;
    let owner = srv.key.clone();
    let stranger = srv.other_inbox_key("stranger").await;
    let h = srv
        .create(json!({"question": "Ship it?", "kind": "bool", "project": "p"}))
        .await;
    let id = s(&h, "decision_id").to_string();
    let todo = srv
        .create(json!({"question": "Water the plants", "kind": "todo"}))
        .await;
    let todo_id = s(&todo, "decision_id").to_string();
    let nobody = Uuid::now_v7().to_string();
    let (_, before) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}"))).await;
    let (_, trail_before) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/events"))).await;

    // The stranger's streams are open before anything resolves.
    let mut stranger_events = srv
        .client
        .get(srv.url("/v1/events"))
        .bearer_auth(&stranger)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    assert_eq!(stranger_events.status(), StatusCode::OK);

    // Each call on the owner's decision is answered as for an id that does not exist.
    for (method, path) in [
        (Method::GET, "/v1/decisions/{}"),
        (Method::GET, "/v1/decisions/{}/await?timeout_s=1"),
        (Method::POST, "/v1/decisions/{}/cancel"),
        (Method::GET, "/v1/decisions/{}/events"),
    ] {
        let cases = [&id, &todo_id, &nobody]
            .iter()
            .map(|target| {
                let url = srv.url(&path.replace("{}", target));
                let req = srv
                    .client
                    .request(method.clone(), url)
                    .bearer_auth(&stranger)
                    .json(&json!({"reason": "mine now"}));
                (format!("{method} {path} on {target}"), req)
            })
            .collect();
        let seen = all_look_the_same(&format!("{method} {path}"), cases).await;
        assert_eq!(seen.status, StatusCode::NOT_FOUND, "{method} {path}");
        let body: Value = serde_json::from_slice(&seen.body).unwrap();
        assert_eq!(body["error"]["code"], "not_found");
    }
    for query in [
        "",
        "?status=pending",
        "?kind=todo",
        "?project=p",
        "?limit=200",
    ] {
        let (status, list) = send(
            srv.client
                .get(srv.url(&format!("/v1/decisions{query}")))
                .bearer_auth(&stranger),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(list["items"], json!([]), "{query}: {list}");
    }
    let (_, usage) = send(srv.client.get(srv.url("/v1/usage")).bearer_auth(&stranger)).await;
    let (_, owner_usage) = send(srv.req(Method::GET, "/v1/usage")).await;
    assert_ne!(usage, owner_usage, "usage is not per inbox: {usage}");
    assert!(!usage.to_string().contains(&id));

    // MCP: the same, tool by tool.
    let client = mcp(&srv, &stranger).await;
    for (tool, args) in [
        ("get_decision", json!({})),
        ("await_decision", json!({"timeout_s": 1})),
        ("cancel_decision", json!({"reason": "mine now"})),
    ] {
        let mut results = Vec::new();
        for target in [&id, &todo_id, &nobody] {
            let mut args = args.clone();
            args["decision_id"] = json!(target);
            let r = call(&client, tool, args).await;
            assert_eq!(r.is_error, Some(true), "{tool} on {target}: {r:?}");
            results.push(serde_json::to_value(&r).unwrap());
        }
        assert_eq!(
            results[0], results[2],
            "{tool}: the owner's decision is told apart"
        );
        assert_eq!(
            results[1], results[2],
            "{tool}: the owner's to-do is told apart"
        );
        assert!(
            results[0].to_string().contains("not_found"),
            "{}",
            results[0]
        );
        assert!(!results[0].to_string().contains("forbidden"));
    }
    let todos = call(&client, "list_todos", json!({})).await;
    assert!(
        !serde_json::to_string(&todos)
            .unwrap()
            .contains("Water the plants"),
        "{todos:?}"
    );
    client.cancel().await.unwrap();
    let owner_client = mcp(&srv, &owner).await;
    let todos = call(&owner_client, "list_todos", json!({})).await;
    assert!(
        serde_json::to_string(&todos)
            .unwrap()
            .contains("Water the plants")
    );
    owner_client.cancel().await.unwrap();

    // Nothing changed: the decision and its audit trail are as they were.
    let (_, after) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}"))).await;
    assert_eq!(after, before);
    let (_, trail_after) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/events"))).await;
    assert_eq!(trail_after, trail_before);
    assert_eq!(srv.get(&todo_id).await["status"], "pending");

    // The owner's answer reaches the owner's stream, never the stranger's.
    let mut owner_events = srv
        .client
        .get(srv.url("/v1/events"))
        .bearer_auth(&owner)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    let (status, _) = srv.answer(s(&h, "web_url"), json!({"value": "yes"})).await;
    assert_eq!(status, StatusCode::OK);
    let mut seen_by_owner = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !seen_by_owner.contains(&id) {
        let chunk = tokio::time::timeout_at(deadline, owner_events.chunk())
            .await
            .expect("the owner's stream got the resolution")
            .unwrap()
            .expect("stream open");
        seen_by_owner.push_str(&String::from_utf8_lossy(&chunk));
    }
    let mut seen_by_stranger = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while let Ok(chunk) = tokio::time::timeout_at(deadline, stranger_events.chunk()).await {
        match chunk.unwrap() {
            Some(c) => seen_by_stranger.push_str(&String::from_utf8_lossy(&c)),
            None => break,
        }
    }
    assert!(
        !seen_by_stranger.contains("decision.resolved") && !seen_by_stranger.contains(&id),
        "{seen_by_stranger}"
    );
    srv.stop().await;
}

// ---------------------------------------------------------------------------------------
// Guessing is rate-limited per address

/// Sends `requests` from the address `from` (a loopback address of its own), 16 at a time,
/// and returns how many were refused with 429 and how many were not, and how long it took.
async fn burst(
    from: IpAddr,
    requests: Vec<(String, Option<String>)>,
) -> (usize, usize, Duration, Vec<reqwest::Response>) {
    let client = Client::builder()
        .local_address(from)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let start = Instant::now();
    let responses: Vec<reqwest::Response> = futures::stream::iter(requests)
        .map(|(url, key)| {
            let mut req = client.get(url);
            if let Some(k) = key {
                req = req.bearer_auth(k);
            }
            async move { req.send().await.expect("request sent") }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let elapsed = start.elapsed();
    let refused: Vec<_> = responses
        .into_iter()
        .filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS)
        .collect();
    let refused_count = refused.len();
    (refused_count, 1000 - refused_count, elapsed, refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_wrong_links_or_keys_from_one_address_are_rate_limited() {
    let limit = RateLimit::DEFAULT;
    let scenarios: [(&str, MakeGuess); 3] = [
        (
            "GET /d/<wrong>",
            Box::new(|srv| (srv.url(&format!("/d/{}", random_token())), None)),
        ),
        (
            "GET /inbox/<wrong>",
            Box::new(|srv| (srv.url(&format!("/inbox/{}", random_token())), None)),
        ),
        (
            "GET /v1/decisions with a new wrong key each time",
            Box::new(|srv| (srv.url("/v1/decisions"), Some(random_api_key()))),
        ),
    ];
    let guesser = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
    let neighbour = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    for (what, make) in &scenarios {
        let db = fresh_sqlite_url();
        let srv = TestServer::start_rate_limited(&db.url, limit).await;
        let requests = (0..1000).map(|_| make(&srv)).collect();
        let (refused, passed, elapsed, refusals) = burst(guesser, requests).await;
        eprintln!("{what}: {passed} passed, {refused} refused with 429 in {elapsed:?}");
        // No more got through than the burst and what the rate earns back over the run.
        let allowed = f64::from(limit.burst) + f64::from(limit.per_second) * elapsed.as_secs_f64();
        assert!(
            passed as f64 <= allowed + 32.0,
            "{what}: {passed} of 1000 passed in {elapsed:?}; the limit allows {allowed:.0}"
        );
        // A thousand requests in under 5 s exceed the 900 the limit allows in that time.
        if elapsed < Duration::from_secs(5) {
            assert!(refused > 0, "{what}: none refused in {elapsed:?}");
        }
        let resp = refusals.into_iter().next().expect("a refusal to look at");
        let retry_after: u64 = resp.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=60).contains(&retry_after), "{retry_after}");
        let err: Value = resp.json().await.unwrap();
        assert_eq!(err["error"]["code"], "rate_limited");

        // Another address is not held back, and with the right key gets its answer.
        let other = Client::builder().local_address(neighbour).build().unwrap();
        let resp = other
            .get(srv.url("/v1/decisions"))
            .bearer_auth(&srv.key)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{what}");
        let resp = other
            .get(srv.url(&format!("/d/{}", random_token())))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{what}");
        srv.stop().await;
    }
}

// ---------------------------------------------------------------------------------------
// Every page carries its security headers

/// One row of the header table: what is fetched, and what status it must have.
struct PageCase {
    name: String,
    method: Method,
    url: String,
    form: Option<&'static str>,
    cross_site: bool,
    status: StatusCode,
}

fn case(name: impl Into<String>, url: impl Into<String>, status: StatusCode) -> PageCase {
    PageCase {
        name: name.into(),
        method: Method::GET,
        url: url.into(),
        form: None,
        cross_site: false,
        status,
    }
}

fn post(
    name: impl Into<String>,
    url: impl Into<String>,
    form: &'static str,
    status: StatusCode,
) -> PageCase {
    PageCase {
        method: Method::POST,
        form: Some(form),
        ..case(name, url, status)
    }
}

/// The headers an HTML page must carry, and what its body must not hold.
fn check_page(name: &str, h: &HeaderMap, body: &str) {
    let csp = h
        .get("content-security-policy")
        .unwrap_or_else(|| panic!("{name}: no Content-Security-Policy"))
        .to_str()
        .unwrap();
    let directives: Vec<&str> = csp.split(';').map(str::trim).collect();
    assert!(
        directives.contains(&"frame-ancestors 'none'"),
        "{name}: {csp}"
    );
    assert!(directives.contains(&"default-src 'none'"), "{name}: {csp}");
    let script = directives
        .iter()
        .find(|d| d.starts_with("script-src "))
        .unwrap_or_else(|| panic!("{name}: no script-src in {csp}"));
    for unsafe_source in [
        "'unsafe-inline'",
        "'unsafe-eval'",
        "data:",
        "*",
        "http:",
        "https:",
    ] {
        assert!(
            !script.split_whitespace().any(|s| s == unsafe_source),
            "{name}: {script}"
        );
    }
    assert_eq!(h["referrer-policy"], "no-referrer", "{name}");
    assert_eq!(h["x-content-type-options"], "nosniff", "{name}");
    // No inline script, which the policy would block anyway: every <script> has a src.
    let lower = body.to_ascii_lowercase();
    for (i, _) in lower.match_indices("<script") {
        let tag_end = lower[i..].find('>').map_or(lower.len(), |e| i + e);
        assert!(
            lower[i..tag_end].contains(" src="),
            "{name}: inline script at byte {i}"
        );
    }
    assert!(!lower.contains("javascript:"), "{name}: a javascript: URL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_in_every_state_carries_the_security_headers() {
    let db = Db::fresh(false).await.unwrap();
    let srv = TestServer::start_rate_limited(db.url(), RateLimit::OFF).await;
    let kinds = [
        ("bool", json!({"kind": "bool"}), "value=yes"),
        (
            "choose",
            json!({"kind": "choose", "options": ["a", "b"]}),
            "value=a",
        ),
        ("text", json!({"kind": "text"}), "value=hello"),
        (
            "form",
            json!({"kind": "form", "schema": {"properties": {"n": {"type": "integer"}}}}),
            "n=3",
        ),
        ("todo", json!({"kind": "todo"}), "action=done"),
    ];
    let mut cases = Vec::new();
    for (kind, spec, answer) in &kinds {
        let mut body = spec.clone();
        body["question"] = json!(format!("A {kind} question"));
        body["context_md"] = json!("Some *context*");
        let pending = s(&srv.create(body.clone()).await, "web_url").to_string();
        let answered = s(&srv.create(body.clone()).await, "web_url").to_string();
        let expiring = {
            let mut b = body.clone();
            b["ttl_seconds"] = json!(10);
            srv.create(b).await
        };
        cases.push(case(format!("{kind}: pending"), &pending, StatusCode::OK));
        cases.push(post(
            format!("{kind}: unknown action"),
            &pending,
            "action=explode",
            StatusCode::UNPROCESSABLE_ENTITY,
        ));
        cases.push(post(
            format!("{kind}: answered (303 to the page)"),
            &answered,
            answer,
            StatusCode::SEE_OTHER,
        ));
        cases.push(case(format!("{kind}: answered"), &answered, StatusCode::OK));
        cases.push(post(
            format!("{kind}: answered again"),
            &answered,
            answer,
            StatusCode::CONFLICT,
        ));
        cases.push(PageCase {
            cross_site: true,
            ..post(
                format!("{kind}: cross-site post"),
                &pending,
                answer,
                StatusCode::FORBIDDEN,
            )
        });
        // Expired ones last, once their ten seconds have passed.
        cases.push(case(
            format!("{kind}: expired"),
            s(&expiring, "web_url"),
            StatusCode::OK,
        ));
        cases.push(post(
            format!("{kind}: answered after expiry"),
            s(&expiring, "web_url"),
            answer,
            StatusCode::GONE,
        ));
    }
    // A form answer that fails validation is shown again with its errors.
    let form = srv
        .create(json!({"question": "Q", "kind": "form", "schema": {"properties": {"n": {"type": "integer"}}, "required": ["n"]}}))
        .await;
    cases.push(post(
        "form: invalid answer",
        s(&form, "web_url"),
        "n=not-a-number",
        StatusCode::UNPROCESSABLE_ENTITY,
    ));
    let with_image = srv
        .create(json!({"question": "Q", "kind": "bool", "context_image_b64": PNG}))
        .await;
    let image = format!("{}/image", s(&with_image, "web_url"));
    let feed = srv.svc.feed_url(&srv.default_inbox().await);
    let todo = srv.create(json!({"question": "T", "kind": "todo"})).await;
    let todo_link = s(&todo, "web_url").to_string();
    cases.extend([
        case(
            "unknown link",
            srv.url(&format!("/d/{}", random_token())),
            StatusCode::NOT_FOUND,
        ),
        post(
            "answer to an unknown link",
            srv.url(&format!("/d/{}", random_token())),
            "value=yes",
            StatusCode::NOT_FOUND,
        ),
        case("feed", &feed, StatusCode::OK),
        case(
            "feed, one project",
            format!("{feed}?project=none"),
            StatusCode::OK,
        ),
        post(
            "done from the feed (303 back)",
            &todo_link,
            "action=done&return=feed",
            StatusCode::SEE_OTHER,
        ),
        case(
            "unknown feed",
            srv.url(&format!("/inbox/{}", random_token())),
            StatusCode::NOT_FOUND,
        ),
        case("docs", srv.url("/docs/"), StatusCode::OK),
    ]);
    // The context image: an image, never sniffed as anything else.
    let resp = srv.client.get(&image).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "image/png");
    assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
    assert!(resp.headers().contains_key("content-security-policy"));

    // Let the ten-second decisions expire before the table is walked.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let client = no_redirects();
    for c in &cases {
        let mut req = client.request(c.method.clone(), &c.url);
        if let Some(form) = c.form {
            req = req
                .header("content-type", "application/x-www-form-urlencoded")
                .header(
                    "sec-fetch-site",
                    if c.cross_site {
                        "cross-site"
                    } else {
                        "same-origin"
                    },
                )
                .body(form);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), c.status, "{}", c.name);
        let headers = resp.headers().clone();
        let body = resp.text().await.unwrap();
        if c.status != StatusCode::SEE_OTHER {
            let ct = headers["content-type"].to_str().unwrap();
            assert!(ct.starts_with("text/html"), "{}: {ct}", c.name);
        }
        check_page(&c.name, &headers, &body);
    }

    // The pages' own assets: their type as declared and never sniffed.
    for (path, ty) in [
        ("/static/sayso.css", "text/css"),
        ("/static/feed.js", "text/javascript"),
        ("/static/icon.svg", "image/svg+xml"),
        ("/sw.js", "text/javascript"),
        ("/manifest.webmanifest", "application/manifest+json"),
    ] {
        let resp = client.get(srv.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        let h = resp.headers();
        assert!(
            h["content-type"].to_str().unwrap().starts_with(ty),
            "{path}"
        );
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_database_and_its_wal_are_readable_by_their_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let db = common::db::fresh_sqlite_url();
    let srv = common::server::TestServer::start(&db.url).await;
    srv.create(serde_json::json!({"question": "Private?", "kind": "bool", "notify": "none"}))
        .await;
    for suffix in ["", "-wal", "-shm"] {
        let mut file = db.path.clone().into_os_string();
        file.push(suffix);
        let mode = std::fs::metadata(&file)
            .unwrap_or_else(|e| panic!("{file:?}: {e}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{file:?} has mode {:o}", mode & 0o777);
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_url_naming_an_inner_address_is_refused_at_create() {
    let db = fresh_sqlite_url();
    let srv = TestServer::start_public_only(&db.url).await;
    for url in [
        "http://0/hook",
        "http://0.0.0.0:8080/hook",
        "http://[::]/hook",
        "http://127.1/hook",
        "http://[::ffff:7f00:1]/hook",
        "https://10.1.2.3/hook",
        "http://169.254.169.254/latest/meta-data",
    ] {
        let (status, body) = send(srv.req(reqwest::Method::POST, "/v1/decisions").json(
            &serde_json::json!({"question": "Q?", "kind": "bool", "notify": "none", "callback_url": url}),
        ))
        .await;
        assert_eq!(
            status,
            reqwest::StatusCode::UNPROCESSABLE_ENTITY,
            "{url}: {body}"
        );
        let details = body["error"]["details"].to_string();
        assert!(
            details.contains("callback_url") && details.contains("SAYSO_ALLOW_PRIVATE_WEBHOOKS=1"),
            "{url}: {body}"
        );
    }
    // A name that leads inward is accepted with a warning: it is checked again when sent.
    let h = srv
        .create(
            serde_json::json!({"question": "Q?", "kind": "bool", "notify": "none",
            "callback_url": "http://localhost:9/hook"}),
        )
        .await;
    let warnings = h["warnings"].to_string();
    assert!(
        warnings.contains("localhost resolves to the inner address"),
        "{h}"
    );
    // A public one passes without a word.
    let h = srv
        .create(
            serde_json::json!({"question": "Q?", "kind": "bool", "notify": "none",
            "callback_url": "https://8.8.8.8/hook"}),
        )
        .await;
    assert_eq!(h["warnings"], serde_json::json!([]), "{h}");
    srv.stop().await;
}
