//! The mail queue across a kill and across two replicas: each mail sent once.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::{Client, StatusCode};
use serde_json::json;

use crate::common;
use crate::common::server::{init_tls, s, send};
use crate::replica::{sayso, start_replica_with};

/// Creates `n` email decisions through the given replicas in turn, four at a time.
async fn create_email_decisions(bases: &[String], key: &str, n: usize) -> Vec<String> {
    let client = Client::new();
    futures::stream::iter(0..n)
        .map(|i| {
            let client = client.clone();
            let url = format!("{}/v1/decisions", bases[i % bases.len()]);
            let key = key.to_string();
            async move {
                let (status, h) = send(client.post(url).bearer_auth(key).json(
                    &json!({"question": format!("Mail {i}?"), "kind": "bool", "notify": "email"}),
                ))
                .await;
                assert_eq!(status, StatusCode::CREATED, "{h}");
                s(&h, "decision_id").to_string()
            }
        })
        .buffer_unordered(4)
        .collect::<Vec<_>>()
        .await
}

/// How many mails each decision got, by its Message-ID.
fn mails_per_decision(sink: &common::smtp::SmtpSink) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for mail in sink.received() {
        if let Some(id) = mail.header("Message-ID") {
            *counts.entry(id.to_string()).or_default() += 1;
        }
    }
    counts
}

async fn wait_for_distinct(sink: &common::smtp::SmtpSink, n: usize, limit: Duration) {
    let started = Instant::now();
    while mails_per_decision(sink).len() < n {
        assert!(
            started.elapsed() < limit,
            "only {} of {n} mails arrived",
            mails_per_decision(sink).len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_queued_when_the_server_is_killed_arrives_after_the_restart() {
    init_tls();
    let Some(sink) = common::smtp::SmtpSink::start().await else {
        return;
    };
    let db = common::db::fresh_sqlite_url();
    let smtp = sink.url();
    let env = [
        ("SAYSO_SMTP_URL", smtp.as_str()),
        ("SAYSO_MAIL_FROM", "sayso <sayso@example.com>"),
        ("SAYSO_OUTBOX_RETRY_BASE_MS", "100"),
        ("SAYSO_OUTBOX_LEASE_S", "2"),
        // Every mail counted, none gathered into another by the person's budget.
        ("SAYSO_NOTIFY_PER_MINUTE", "0"),
    ];
    let mut a = start_replica_with(&db.url, &env).await;
    let key = a.key.clone().unwrap();
    // A slow mail server: each message takes a quarter of a second to accept.
    let out = sayso(
        &["inbox", "set", "default", "--email", "slow@example.com"],
        &db.url,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let ids = create_email_decisions(std::slice::from_ref(&a.base), &key, 200).await;
    wait_for_distinct(&sink, 10, Duration::from_secs(60)).await;
    a.child.kill().await.unwrap(); // SIGKILL, mid-queue
    let before = mails_per_decision(&sink).len();
    assert!(
        before < 200,
        "the kill came after everything was sent ({before})"
    );

    let _b = start_replica_with(&db.url, &env).await;
    wait_for_distinct(&sink, 200, Duration::from_secs(120)).await;
    let counts = mails_per_decision(&sink);
    for id in &ids {
        assert!(
            counts
                .keys()
                .any(|m| m.contains(&format!("decision-{id}@"))),
            "no mail for {id}"
        );
    }
    let repeats: usize = counts.values().map(|c| c - 1).sum();
    eprintln!(
        "killed after {before} of 200 mails; {repeats} repeated by the crash, deduplicated by Message-ID"
    );
    // Only deliveries in flight at the kill can repeat: at most one claimed batch.
    assert!(repeats <= 50, "{repeats} repeats");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_queue_send_each_mail_once() {
    init_tls();
    let Some(sink) = common::smtp::SmtpSink::start().await else {
        return;
    };
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let smtp = sink.url();
    let env = [
        ("SAYSO_SMTP_URL", smtp.as_str()),
        ("SAYSO_MAIL_FROM", "sayso <sayso@example.com>"),
        ("SAYSO_NOTIFY_PER_MINUTE", "0"),
    ];
    let a = start_replica_with(&db.url, &env).await;
    let key = a.key.clone().unwrap();
    let out = sayso(
        &["inbox", "set", "default", "--email", "person@example.com"],
        &db.url,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let b = start_replica_with(&db.url, &env).await;
    let ids = create_email_decisions(&[a.base.clone(), b.base.clone()], &key, 100).await;
    wait_for_distinct(&sink, 100, Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let counts = mails_per_decision(&sink);
    assert_eq!(counts.len(), ids.len());
    assert!(
        counts.values().all(|c| *c == 1),
        "a mail was sent twice: {counts:?}"
    );
}
