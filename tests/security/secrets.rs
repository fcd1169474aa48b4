//! Tokens and keys: long, random, never stored in plain text; the SQLite files are the
//! owner's alone.

use std::collections::BTreeSet;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use reqwest::StatusCode;
use sayso::service::Tokens;
use serde_json::json;
use uuid::Uuid;

use crate::common;
use crate::common::server::{TestServer, s, send};
use crate::support::{Db, PNG, hex, token_of};

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
        let (resp, _) = crate::common::server::open_feed(feed).await;
        assert_eq!(resp.status(), 200);
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
