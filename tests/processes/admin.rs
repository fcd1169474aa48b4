//! First run and the admin commands: the first key, revoking keys, an unknown database,
//! a backup under load.

use std::time::Duration;

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::process::Command;

use crate::common;
use crate::common::cli::output_with_input;
use crate::common::server::{init_tls, s, send};
use crate::replica::{BIN, Replica, sayso, start_replica, start_replica_with, two_replicas};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_run_writes_a_working_key_and_admin_commands_print_alone() {
    init_tls();
    let db = common::db::fresh_sqlite_url();
    let mut a = start_replica(&db.url).await;
    let key = a.key.clone().expect("the first run writes a key");
    let client = Client::new();
    let (status, h) = send(
        client
            .post(format!("{}/v1/decisions", a.base))
            .bearer_auth(&key)
            .json(&json!({"question": "Works?", "kind": "bool"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{h}");
    // Listening on port 0, the links name the port actually bound.
    assert!(
        s(&h, "web_url").starts_with(&format!("{}/d/", a.base)),
        "{h}"
    );
    a.child.kill().await.unwrap();

    // A second start on the same database writes no key.
    let mut again = start_replica(&db.url).await;
    assert_eq!(again.key, None);
    again.child.kill().await.unwrap();

    let out = sayso(&["key", "create"], &db.url).await;
    assert!(out.status.success(), "{out:?}");
    let new_key = String::from_utf8(out.stdout).unwrap();
    assert!(new_key.starts_with("sk_") && new_key.trim().lines().count() == 1);

    let out = sayso(
        &["inbox", "create", "ops", "--email", "ops@example.com"],
        &db.url,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let link = String::from_utf8(out.stdout).unwrap();
    // The link is on the public URL the last server recorded, not on a default address.
    assert!(
        link.trim().starts_with(&format!("{}/inbox/", again.base)),
        "{link}"
    );

    let out = sayso(&["inbox", "create", "ops"], &db.url).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    let out = sayso(&["key", "create", "--inbox", "nobody"], &db.url).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no inbox named"));
}

/// Revokes `key` with the admin command and checks that every replica refuses it at once,
/// while a second key of the same inbox goes on working.
async fn revoke_and_check(database_url: &str, replicas: &[&Replica], key: &str) {
    let out = sayso(&["key", "create"], database_url).await;
    assert!(out.status.success(), "{out:?}");
    let other = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let client = Client::new();
    let list = |base: &str, key: &str| {
        client
            .get(format!("{base}/v1/decisions"))
            .bearer_auth(key.to_string())
    };
    for r in replicas {
        assert_eq!(send(list(&r.base, key)).await.0, StatusCode::OK);
    }
    // A decision read through the key, twice on each replica (the second read finds the view
    // the first made, `service/shown.rs`): once revoked, the key reads it no more.
    let (status, created) = send(
        client
            .post(format!("{}/v1/decisions", replicas[0].base))
            .bearer_auth(key.to_string())
            .json(&serde_json::json!({"question": "Still mine?", "kind": "bool"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let read = |base: &str, key: &str| {
        client
            .get(format!(
                "{base}/v1/decisions/{}",
                created["decision_id"].as_str().unwrap_or_default()
            ))
            .bearer_auth(key.to_string())
    };
    for r in replicas {
        for _ in 0..2 {
            assert_eq!(send(read(&r.base, key)).await.0, StatusCode::OK);
        }
    }

    // From stdin, so the key stays out of the process list.
    let mut revoke = Command::new(BIN);
    revoke
        .args(["key", "revoke", "-"])
        .env("SAYSO_DATABASE_URL", database_url);
    let out = output_with_input(revoke, &format!("{key}\n")).await;
    assert!(out.status.success(), "{out:?}");

    // The very next request, on any replica, is refused; the other key still works.
    for r in replicas {
        let (status, body) = send(list(&r.base, key)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"]["code"], "unauthorized", "{body}");
        let (status, body) = send(read(&r.base, key)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(send(list(&r.base, &other)).await.0, StatusCode::OK);
        assert_eq!(send(read(&r.base, &other)).await.0, StatusCode::OK);
    }

    // Revoking it again says so; revoking a whole inbox stops its last key.
    let out = sayso(&["key", "revoke", key], database_url).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no live API key matches"));
    let out = sayso(&["key", "revoke", "--all-of", "default"], database_url).await;
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("revoked 1 key(s)"));
    for r in replicas {
        assert_eq!(
            send(list(&r.base, &other)).await.0,
            StatusCode::UNAUTHORIZED
        );
    }
    let out = sayso(&["key", "revoke", "--all-of", "nobody"], database_url).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no inbox named"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_stops_working_at_once_on_sqlite() {
    init_tls();
    let db = common::db::fresh_sqlite_url();
    let a = start_replica(&db.url).await;
    let key = a.key.clone().expect("the first run writes a key");
    revoke_and_check(&db.url, &[&a], &key).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_stops_working_at_once_on_every_replica() {
    let Some((db, a, b, key)) = two_replicas().await else {
        return;
    };
    revoke_and_check(&db.url, &[&a, &b], &key).await;
}

#[tokio::test]
async fn an_unknown_database_scheme_is_refused_clearly() {
    let out = sayso(&["key", "create"], "mysql://root@localhost/x").await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown database scheme") && err.contains("mysql"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_write_load_holds_every_acknowledged_decision_and_exports() {
    init_tls();
    let db = common::db::fresh_sqlite_url();
    let mut live = start_replica_with(&db.url, &[("SAYSO_RATE_LIMIT_PER_S", "0")]).await;
    let key = live.key.clone().expect("the first run writes a key");
    let client = Client::new();
    // Writers create decisions without pause while the backup runs; the ids acknowledged
    // before the backup started must all be in the copy.
    let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4 {
        let (client, base, key) = (client.clone(), live.base.clone(), key.clone());
        let (acknowledged, stop) = (acknowledged.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let (status, h) = send(
                    client
                        .post(format!("{base}/v1/decisions"))
                        .bearer_auth(&key)
                        .json(&json!({"question": format!("w{w} #{n}"), "kind": "bool", "notify": "none"})),
                )
                .await;
                assert_eq!(status, StatusCode::CREATED, "{h}");
                acknowledged.lock().unwrap().push(s(&h, "decision_id").to_string());
                n += 1;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before: Vec<String> = acknowledged.lock().unwrap().clone();
    let copy = common::db::fresh_sqlite_url();
    let out = sayso(&["backup", copy.path.to_str().unwrap()], &db.url).await;
    assert!(out.status.success(), "{out:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    live.child.kill().await.unwrap();
    assert!(
        before.len() >= 10,
        "the writers were writing: {}",
        before.len()
    );

    // A second backup to the same file is refused, never overwriting it.
    let again = sayso(&["backup", copy.path.to_str().unwrap()], &db.url).await;
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));

    // A server on the copy has every decision acknowledged before the backup began.
    // Its rate limit off: the check reads every decision at once.
    let mut restored = start_replica_with(&copy.url, &[("SAYSO_RATE_LIMIT_PER_S", "0")]).await;
    assert_eq!(restored.key, None, "the copy has the inbox already");
    for id in &before {
        let resp = client
            .get(format!("{}/v1/decisions/{id}", restored.base))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(
            resp.status(),
            StatusCode::OK,
            "{id} is missing from the backup"
        );
    }
    restored.child.kill().await.unwrap();

    // The export of the copy has each of them once, with its audit trail.
    let out = sayso(&["export", "--inbox", "default"], &copy.url).await;
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let exported: std::collections::HashSet<&str> = lines
        .iter()
        .map(|l| l["decision"]["decision_id"].as_str().unwrap())
        .collect();
    assert_eq!(exported.len(), lines.len(), "each decision once");
    for id in &before {
        assert!(exported.contains(id.as_str()), "{id} is not exported");
    }
    assert!(lines.iter().all(|l| l["events"][0]["kind"] == "created"));
    let none = sayso(
        &["export", "--inbox", "default", "--since", "2999-01-01"],
        &copy.url,
    )
    .await;
    assert!(none.status.success() && none.stdout.is_empty(), "{none:?}");
    let bad = sayso(&["export", "--inbox", "nobody"], &copy.url).await;
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no inbox named"));
}
