//! Tokens and keys: long, random, never stored in plain text; the SQLite files are the
//! owner's alone; the first run's secrets and every link stay out of stdout and the log.

use std::collections::BTreeSet;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use reqwest::{Client, StatusCode};
use sayso::service::Tokens;
use serde_json::json;
use uuid::Uuid;

use crate::common;
use crate::common::server::{TestServer, fresh_server, s, send};
use crate::support::{BIN, Db, PNG, Piped, hex, token_of};

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
    let mut feeds = vec![srv.feed_url().await];
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
        let create = || {
            srv.client
                .post(srv.url("/v1/decisions"))
                .bearer_auth(key)
                .header("Idempotency-Key", format!("idem-{i}"))
                .json(body)
        };
        let (status, h) = send(create()).await;
        assert_eq!(status, StatusCode::CREATED, "{h}");
        // The same key again: the stored first handle comes back, link and all.
        let (status, again) = send(create()).await;
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
        srv.answer_ok(link, answer).await;
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
    let (db, srv) = fresh_server().await;
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

// --- The first run's secrets and the logs ---

/// The attack: a member of `adm` or `systemd-journal` reads the journal, where a service's
/// stdout and stderr go. The first run's API key, feed link and webhook secret must not be
/// there, nor any link a request used; they are in a file of mode 0600 (whatever the umask)
/// next to the database, and the log says where.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_run_and_the_requests_after_it_leave_no_secret_in_the_log() {
    use std::os::unix::fs::PermissionsExt;
    use tokio::io::AsyncWriteExt;
    common::server::init_tls();
    let state = common::first_run::StateDir::new();
    let db_path = state.path().join("sayso.db");
    let db_url = format!("sqlite://{}", db_path.display());
    // With no umask at all, the file is still its owner's alone.
    let (srv, said) = Piped::start(&db_url, "000", &[]).await;
    let srv = srv.unwrap_or_else(|| panic!("sayso did not start: {said}"));
    let started = srv.output.lock().unwrap().clone();
    if let Some(key) = started
        .split(|c: char| !(c.is_ascii_alphanumeric() || "_-".contains(c)))
        .find(|w| w.starts_with("sk_") && w.len() > 40)
    {
        panic!("the first run's API key {key} is in the log: {started}");
    }

    let file = state.file();
    let mode = std::fs::metadata(&file)
        .unwrap_or_else(|e| panic!("no first-run file {}: {e}", file.display()))
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o777,
        0o600,
        "{} has mode {:o}",
        file.display(),
        mode & 0o777
    );
    let first = state.secrets().unwrap();
    assert!(first.key.starts_with("sk_"), "{first:?}");
    assert!(
        first.feed.starts_with(&format!("{}/inbox/", srv.base)),
        "{first:?}"
    );
    assert!(first.webhook_secret.starts_with("whsec_"), "{first:?}");

    // Use every secret, and every kind of link, so each passes through the request logging.
    let client = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let (status, plain) = send(
        client
            .post(format!("{}/v1/decisions", srv.base))
            .bearer_auth(&first.key)
            .json(&json!({"question": "Log me?", "kind": "bool", "notify": "none"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{plain}");
    let answer_link = s(&plain, "web_url").to_string();
    assert_eq!(client.get(&answer_link).send().await.unwrap().status(), 200);
    let (status, body) = send(client.post(&answer_link).json(&json!({"value": true}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, approval) = send(
        client
            .post(format!("{}/v1/decisions", srv.base))
            .bearer_auth(&first.key)
            .json(&json!({
                "question": "Claude Code wants to run: make deploy", "kind": "choose",
                "options": ["Allow", "Deny"], "allow_other": false, "notify": "none",
                "approval": {"harness": "claude", "tool_name": "Bash",
                    "tool_input": {"command": "make deploy"}}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{approval}");
    // The feed link binds this client and sends it on to /inbox.
    let feed = client.get(&first.feed).send().await.unwrap();
    assert_eq!(feed.status(), StatusCode::SEE_OTHER);
    let db = Db::Sqlite(common::db::SqliteTestDb {
        url: db_url.clone(),
        path: db_path.clone(),
    });
    let tokens = Tokens::from_key_hex(&db.server_key_hex().await).unwrap();
    std::mem::forget(db); // The state directory removes the database.
    let inbox = tokens.open_feed_token(token_of(&first.feed)).unwrap();
    let id = Uuid::parse_str(s(&approval, "decision_id")).unwrap();
    let approve = tokens.approve_token(id, sayso::domain::PersonChannel::Ntfy, inbox);
    let approve_link = format!("{}/a/{approve}", srv.base);
    assert_eq!(
        client.get(&approve_link).send().await.unwrap().status(),
        200
    );
    let (status, body) = send(client.post(&approve_link).json(&json!({"value": "Deny"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // And over a raw connection, a request line the router never matches.
    let mut raw = tokio::net::TcpStream::connect(srv.base.trim_start_matches("http://"))
        .await
        .unwrap();
    raw.write_all(
        format!(
            "GET /inbox/{}/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            token_of(&first.feed)
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let _ = tokio::io::AsyncReadExt::read_to_end(&mut raw, &mut Vec::new()).await;

    let log = srv.stop().await;
    // Everything the server logs at its most verbose, every request of every route included.
    for route in ["/d/{token}", "/a/{token}", "/inbox/{token}", "(no route)"] {
        assert!(
            log.contains(route),
            "no request on {route} is in the log: {log}"
        );
    }
    assert!(
        log.contains(&file.display().to_string()),
        "the log names the first run's file: {log}"
    );
    let secrets = [
        ("the API key", first.key.clone()),
        ("the API key without sk_", first.key[3..].to_string()),
        ("the feed link's token", token_of(&first.feed).to_string()),
        ("the webhook secret", first.webhook_secret.clone()),
        (
            "the webhook secret without whsec_",
            first.webhook_secret[6..].to_string(),
        ),
        ("an answer link's token", token_of(&answer_link).to_string()),
        ("an approval link's token", approve),
    ];
    for (what, secret) in &secrets {
        assert!(
            !log.contains(secret.as_str()),
            "{what} ({secret}) is in the log"
        );
    }
}

/// On a terminal (a person running `sayso` by hand), the first run shows what it made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_run_prints_its_secrets_on_a_terminal() {
    use tokio::io::AsyncReadExt;
    let state = common::first_run::StateDir::new();
    let db_url = format!("sqlite://{}", state.path().join("sayso.db").display());
    // `script` runs the server with a pseudo-terminal as its stdout.
    let mut child = crate::common::process::spawn_talking(
        tokio::process::Command::new("script")
            .args(["-q", "-e", "-c"])
            .arg(format!("{BIN} serve"))
            .arg("/dev/null")
            .env("SAYSO_DATABASE_URL", &db_url)
            .env("SAYSO_LISTEN", "127.0.0.1:0")
            .env_remove("SAYSO_STATE_DIR")
            .stderr(std::process::Stdio::null()),
        "script(1) (util-linux)",
    );
    let mut out = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();
    let shown = tokio::time::timeout(Duration::from_secs(60), async {
        let mut buf = [0u8; 4096];
        let mut named = false;
        loop {
            let n = out.read(&mut buf).await.unwrap();
            assert!(n > 0, "sayso exited: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen);
            // On a terminal the first run asks the person's name (unless CI): take its default.
            if !named && text.contains("Your name") {
                tokio::io::AsyncWriteExt::write_all(&mut stdin, b"\n")
                    .await
                    .unwrap();
                named = true;
            }
            if text.contains("sayso is listening") {
                return text.into_owned();
            }
        }
    })
    .await
    .expect("sayso listens within 60 s");
    child.kill().await.unwrap();
    let first = state
        .secrets()
        .expect("the file is written on a terminal too");
    for secret in [&first.key, &first.feed, &first.webhook_secret] {
        assert!(
            shown.contains(secret.as_str()),
            "{secret} not shown: {shown}"
        );
    }
    assert!(shown.contains("delete it"), "{shown}");
}

/// A file planted where the first run writes (a symbolic link to a file of the attacker's,
/// or a leftover): never followed, never overwritten; the server refuses to start and says
/// why, before it makes anything, and starts once the file is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_planted_where_the_first_run_writes_is_refused_and_never_followed() {
    common::server::init_tls();
    let state = common::first_run::StateDir::new();
    let elsewhere = common::first_run::StateDir::new();
    let target = elsewhere.path().join("stolen.txt");
    std::os::unix::fs::symlink(&target, state.file()).unwrap();
    let db_url = format!("sqlite://{}", elsewhere.path().join("sayso.db").display());
    let env = [("SAYSO_STATE_DIR", state.path())];
    let (srv, said) = Piped::start(&db_url, "022", &env).await;
    assert!(srv.is_none(), "sayso started with a link planted: {said}");
    assert!(
        said.contains(&state.file().display().to_string()) && said.contains("delete it"),
        "{said}"
    );
    assert!(!target.exists(), "the link was followed");
    assert!(!said.contains("sk_"), "{said}");

    // The database stayed empty, so once the link is gone the first run happens.
    std::fs::remove_file(state.file()).unwrap();
    let (srv, said) = Piped::start(&db_url, "022", &env).await;
    let srv = srv.unwrap_or_else(|| panic!("sayso did not start: {said}"));
    assert!(state.secrets().unwrap().key.starts_with("sk_"));
    srv.stop().await;
}
