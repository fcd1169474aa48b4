//! A server started before its database waits for it and says why.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use tokio::process::Command;

use crate::common::cluster::PgCluster;
use crate::common::first_run::StateDir;
use crate::common::server::{init_tls, send};
use crate::load::create;
use crate::replica::{BIN, collect_logs, command, drain_stdout, wait_for_log, wait_listening};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_started_before_its_database_waits_for_it_and_says_why() {
    init_tls();
    let Some(cluster) = PgCluster::start() else {
        return;
    };
    let url = cluster.url();
    cluster.stop().await;

    // An admin command does not wait: it fails at once and says why.
    let started = Instant::now();
    let out = Command::new(BIN)
        .args(["key", "create"])
        .env("SAYSO_DATABASE_URL", &url)
        .output()
        .await
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot reach the database") && err.contains("refused"),
        "{err}"
    );
    // Bounded by the connect timeout (3 s), not by a client giving up.
    assert!(took < Duration::from_secs(10), "{took:?}");
    eprintln!(
        "admin command without its database: failed in {} ms: {}",
        took.as_millis(),
        err.trim()
    );

    // The server waits for it, saying why, and starts once it is there.
    let state = StateDir::new();
    let mut child = command(&url, &state, &[("SAYSO_DB_WAIT_S", "60")])
        .spawn()
        .expect("sayso starts");
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut listening = collect_logs(&mut child, Arc::clone(&log));
    let line = wait_for_log(&log, "waiting for it", Duration::from_secs(15)).await;
    assert!(line.contains("refused"), "{line}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(listening.borrow().is_none(), "listening without a database");
    assert!(child.try_wait().unwrap().is_none(), "gave up too soon");
    cluster.start_again().await;
    let up = Instant::now();
    let base = wait_listening(&mut listening, Duration::from_secs(30)).await;
    let listening_after = up.elapsed();
    drain_stdout(&mut child);
    let key = state.secrets().expect("the first run writes its file").key;
    let client = Client::new();
    create(&client, &base, &key, "Started before its database").await;
    let (status, _) = send(client.get(format!("{base}/readyz"))).await;
    assert_eq!(status, StatusCode::OK);
    eprintln!(
        "server started before its database: listening {} ms after the database came up",
        listening_after.as_millis()
    );
    child.kill().await.unwrap();

    // It does not wait forever: past SAYSO_DB_WAIT_S it exits, saying why.
    cluster.stop().await;
    let started = Instant::now();
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        command(&url, &state, &[("SAYSO_DB_WAIT_S", "2")]).output(),
    )
    .await
    .expect("sayso gives up")
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot reach the database (waited") && err.contains("refused"),
        "{err}"
    );
    eprintln!(
        "server without its database gave up after {} ms",
        started.elapsed().as_millis()
    );
}
