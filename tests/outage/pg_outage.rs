//! The PostgreSQL cluster stopped for 20 s under load on two replicas.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Client;
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};
use tokio::sync::watch;

use crate::common::cluster::PgCluster;
use crate::common::server::init_tls;
use crate::load::{
    Acknowledged, Op, Record, Records, Worker, answer_when_possible, await_woken, create, load,
    millis, park_await, probe_ready,
};
use crate::replica::{start_replica, wait_for_log};

/// How long the database stays down.
const OUTAGE: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_gives_fast_503s_and_the_service_recovers_by_itself() {
    init_tls();
    let Some(cluster) = PgCluster::start() else {
        return;
    };
    let url = cluster.url();
    let mut a = start_replica(&url).await;
    let key = a.key.clone().expect("the first replica makes the inbox");
    let mut b = start_replica(&url).await;
    let bases = [a.base.clone(), b.base.clone()];
    let client = Client::builder()
        .timeout(Duration::from_secs(30))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();

    // Awaits parked before the outage, to be answered after it on the other replica.
    let (across_a, across_a_token) = create(&client, &bases[0], &key, "Parked on A").await;
    let (across_b, across_b_token) = create(&client, &bases[1], &key, "Parked on B").await;
    let parked_a = park_await(&client, &bases[0], &key, &across_a);
    let parked_b = park_await(&client, &bases[1], &key, &across_b);

    let records: Records = Arc::default();
    let acked: Arc<Mutex<Acknowledged>> = Arc::default();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = Vec::new();
    for (replica, base) in bases.iter().enumerate() {
        for worker in 0..2 {
            let w = Worker {
                client: client.clone(),
                base: base.clone(),
                key: key.clone(),
                replica,
                worker,
                records: Arc::clone(&records),
                acked: Arc::clone(&acked),
            };
            tasks.push(tokio::spawn(load(w, stop_rx.clone())));
        }
        tasks.push(tokio::spawn(probe_ready(
            client.clone(),
            base.clone(),
            replica,
            Arc::clone(&records),
            stop_rx.clone(),
        )));
    }
    tokio::time::sleep(Duration::from_secs(3)).await;

    let stop_began = Instant::now();
    cluster.stop().await;
    let down = Instant::now();
    eprintln!("database stopped in {}", millis(down - stop_began));
    tokio::time::sleep(OUTAGE).await;
    assert!(!parked_a.is_finished() && !parked_b.is_finished());
    let start_began = Instant::now();
    cluster.start_again().await;
    let up = Instant::now();
    eprintln!("database started again in {}", millis(up - start_began));

    // The await parked on A across the outage, answered on B as soon as B takes answers:
    // likely before A's listener is back, so A must re-read on re-subscribing.
    let answered = answer_when_possible(&client, &bases[1], &across_a_token, true).await;
    let across_a_wake = await_woken(parked_a, answered, "parked on A across the outage").await;
    let answered = answer_when_possible(&client, &bases[0], &across_b_token, false).await;
    let across_b_wake = await_woken(parked_b, answered, "parked on B across the outage").await;

    // Keep the load on for a while after the return.
    tokio::time::sleep(Duration::from_secs(8)).await;
    stop_tx.send(true).unwrap();
    for t in tasks {
        t.await.unwrap();
    }

    // Awaits parked after the outage, woken by the other replica's NOTIFY on the
    // re-subscribed listeners, in both directions.
    let mut fresh_wakes = Vec::new();
    for i in 0..4 {
        let (parked_on, answered_on) = if i % 2 == 0 { (0, 1) } else { (1, 0) };
        let (id, token) = create(&client, &bases[parked_on], &key, "After the outage").await;
        let parked = park_await(&client, &bases[parked_on], &key, &id);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!parked.is_finished(), "an await returned before its answer");
        let answered = answer_when_possible(&client, &bases[answered_on], &token, true).await;
        fresh_wakes.push(await_woken(parked, answered, "parked after the outage").await);
    }

    let records = records.lock().unwrap().clone();
    let acked = std::mem::take(&mut *acked.lock().unwrap());

    // No 500s, no hangs, no refused connections: only the statuses of the load.
    for r in &records {
        assert!(
            matches!(r.status, 200 | 201 | 409 | 503),
            "unexpected response: {r:?}"
        );
        if r.status == 409 {
            assert_eq!(r.op, Op::Answer, "{r:?}");
        }
        if r.status == 503 {
            assert_eq!(r.code.as_deref(), Some("unavailable"), "{r:?}");
            assert!(r.retry_after, "a 503 without Retry-After: {r:?}");
        }
    }
    // Before the stop, everything succeeds.
    let before: Vec<&Record> = records.iter().filter(|r| r.ended() < stop_began).collect();
    assert!(before.len() >= 20, "too little load before the outage");
    assert!(
        before.iter().all(|r| r.status != 503),
        "503 before the outage: {:?}",
        before.iter().find(|r| r.status == 503)
    );
    // While the database is down, everything is a 503, and a fast one: the pool gives up
    // after its acquire timeout (3 s) instead of waiting for the client to give up. The
    // bound leaves room for a busy machine; it protects against requests that hang.
    let during: Vec<&Record> = records
        .iter()
        .filter(|r| r.started > down && r.ended() < start_began)
        .collect();
    let during_api = during.iter().filter(|r| r.op != Op::Ready).count();
    assert!(
        during_api >= 10,
        "only {during_api} API requests while the database was down"
    );
    for replica in 0..2 {
        for op in [Op::Create, Op::Get, Op::Answer, Op::Ready] {
            assert!(
                during.iter().any(|r| r.op == op && r.replica == replica),
                "no {op:?} on replica {replica} while the database was down"
            );
        }
    }
    for r in &during {
        assert_eq!(r.status, 503, "during the outage: {r:?}");
        assert!(r.took < Duration::from_secs(6), "a slow 503: {r:?}");
    }
    let mut took: Vec<Duration> = during.iter().map(|r| r.took).collect();
    took.sort();
    // After the return, each replica serves again within seconds, by itself.
    let mut recovered = Vec::new();
    for replica in 0..2 {
        let first_ok = records
            .iter()
            .filter(|r| r.replica == replica && r.op == Op::Ready && r.started >= up)
            .filter(|r| r.status == 200)
            .map(Record::ended)
            .min()
            .unwrap_or_else(|| panic!("/readyz of replica {replica} never said 200 again"));
        let first_create = records
            .iter()
            .filter(|r| r.replica == replica && r.op == Op::Create && r.started >= up)
            .filter(|r| r.status == 201)
            .map(Record::ended)
            .min()
            .unwrap_or_else(|| panic!("replica {replica} never created again"));
        recovered.push((first_ok - up, first_create.saturating_duration_since(up)));
        let late_failures: Vec<&Record> = records
            .iter()
            .filter(|r| r.replica == replica && r.started > first_ok.max(first_create))
            .filter(|r| r.status == 503)
            .collect();
        assert!(
            late_failures.is_empty(),
            "replica {replica} failed again after recovering: {late_failures:?}"
        );
    }
    for (ready, create) in &recovered {
        // Generous: the listener's and the pool's retries are at most a few seconds apart.
        assert!(*ready < Duration::from_secs(15) && *create < Duration::from_secs(15));
    }

    // Nothing acknowledged is lost: every 201 is in the database, every accepted answer
    // with its value.
    let mut db = PgConnection::connect(&url).await.unwrap();
    let rows: Vec<(String, String, Option<Value>)> =
        sqlx::query_as("SELECT id::text, status, outcome FROM decisions")
            .fetch_all(&mut db)
            .await
            .unwrap();
    let stored: HashMap<String, (String, Option<Value>)> =
        rows.into_iter().map(|(id, st, o)| (id, (st, o))).collect();
    for id in &acked.created {
        assert!(stored.contains_key(id), "the created decision {id} is lost");
    }
    for (id, value) in &acked.answered {
        let (status, outcome) = &stored[id];
        assert_eq!(status, "answered", "the answer to {id} is lost");
        assert_eq!(outcome.as_ref(), Some(&json!(value)), "{id}");
    }
    let _ = db.close().await;
    // Both listeners saw the outage (and, by the wakes above, came back).
    for replica in [&a, &b] {
        wait_for_log(
            &replica.log,
            "lost the PostgreSQL listener",
            Duration::from_secs(1),
        )
        .await;
    }
    a.assert_healthy("A");
    b.assert_healthy("B");

    let count = |op: Op, status: u16| {
        records
            .iter()
            .filter(|r| r.op == op && r.status == status)
            .count()
    };
    eprintln!(
        "load: {} creates acknowledged, {} answers acknowledged; 503s: {} creates, {} gets, \
         {} answers, {} readyz",
        acked.created.len(),
        acked.answered.len(),
        count(Op::Create, 503),
        count(Op::Get, 503),
        count(Op::Answer, 503),
        count(Op::Ready, 503),
    );
    eprintln!(
        "during the outage: {} requests, all 503 in {} (median) / {} (max), min {}",
        took.len(),
        millis(took[took.len() / 2]),
        millis(took[took.len() - 1]),
        millis(took[0]),
    );
    for (replica, (ready, create)) in recovered.iter().enumerate() {
        eprintln!(
            "replica {replica} after the database returned: /readyz 200 in {}, first 201 in {}",
            millis(*ready),
            millis(*create)
        );
    }
    eprintln!(
        "awaits parked across the outage woken {} (A, answered on B) and {} (B, answered on \
         A) after the answer; awaits parked after it: {:?}",
        millis(across_a_wake),
        millis(across_b_wake),
        fresh_wakes.iter().map(|d| millis(*d)).collect::<Vec<_>>()
    );
    // Woken by the listener (NOTIFY or re-subscription), not by the 300 s await timeout.
    for d in fresh_wakes.iter().chain([&across_a_wake, &across_b_wake]) {
        assert!(*d < Duration::from_secs(10), "a slow wake: {d:?}");
    }
}
