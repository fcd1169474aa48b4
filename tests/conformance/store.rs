//! The store as a whole: ping, settings, what each backend does on its own (listening,
//! connecting, an in-memory SQLite) and backups.

use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use serde_json::json;
use sqlx::{Connection, Row};
use uuid::Uuid;

use sayso::domain::Resolution;
use sayso::storage::{Decisions, PgStore, Resolutions, Signal, SqliteStore, Store, StoreError};

use crate::common;
use crate::support::{T0, answer, inbox, insert, lost, swept_ids, won};
use crate::{pg_store, sqlite_store};

pub async fn ping_answers(store: &dyn Store) {
    store.ping().await.unwrap();
}

pub async fn settings_keep_their_first_value(store: &dyn Store) {
    assert_eq!(store.setting_or_init("secret", "one").await.unwrap(), "one");
    assert_eq!(store.setting_or_init("secret", "two").await.unwrap(), "one");
    assert_eq!(
        store.setting_or_init("other", "three").await.unwrap(),
        "three"
    );
    assert_eq!(
        store.setting_or_init("secret", "four").await.unwrap(),
        "one"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_listener_hears_resolutions_from_another_store() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let listening = PgStore::connect(&db.url).await.unwrap();
    let other = PgStore::connect(&db.url).await.unwrap();
    let heard = Arc::new(Mutex::new(Vec::<Signal>::new()));
    let sink = {
        let heard = heard.clone();
        Arc::new(move |s: Signal| heard.lock().unwrap().push(s))
    };
    let task = listening.listen(sink).expect("PostgreSQL listens");
    let home = inbox(&other, "home").await;

    let heard_of = |id: Uuid| {
        let heard = heard.clone();
        async move {
            for _ in 0..50 {
                if heard.lock().unwrap().contains(&Signal::Resolved(id)) {
                    return true;
                }
                tokio::time::sleep(StdDuration::from_millis(20)).await;
            }
            false
        }
    };

    // The listener subscribes in the background: resolve until it hears one.
    let mut subscribed = false;
    for _ in 0..10 {
        let d = insert(&other, home, "Heard?").await;
        won(other.resolve(d.id, &answer(json!(true)), T0).await.unwrap());
        if heard_of(d.id).await {
            subscribed = true;
            break;
        }
    }
    assert!(subscribed, "the listener never heard a resolution");

    let cancelled = insert(&other, home, "Cancelled?").await;
    won(other
        .resolve(cancelled.id, &Resolution::cancel(None), T0)
        .await
        .unwrap());
    assert!(heard_of(cancelled.id).await, "cancel was not heard");

    let expiring = insert(&other, home, "Expired?").await;
    won(other
        .expire(expiring.id, expiring.expires_at)
        .await
        .unwrap());
    assert!(heard_of(expiring.id).await, "expire was not heard");

    let due = insert(&other, home, "Due?").await;
    assert_eq!(
        swept_ids(other.expire_due(due.expires_at, 10).await.unwrap()),
        vec![due.id]
    );
    assert!(heard_of(due.id).await, "expire_due was not heard");

    // A lost resolution says nothing.
    lost(
        other
            .resolve(due.id, &answer(json!(true)), T0)
            .await
            .unwrap(),
    );
    assert!(!task.is_finished());
    // The first subscription is announced once (waiters parked before it re-read), and
    // nothing since.
    let reconnects = |heard: &Mutex<Vec<Signal>>| {
        heard
            .lock()
            .unwrap()
            .iter()
            .filter(|s| **s == Signal::Reconnected)
            .count()
    };
    assert_eq!(reconnects(&heard), 1);

    // Losing the connection is announced, and the listener carries on.
    let mut admin = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let killed: Vec<(bool,)> = sqlx::query_as(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    )
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert_eq!(killed, vec![(true,)]);
    let mut reconnected = false;
    for _ in 0..100 {
        if reconnects(&heard) > 1 {
            reconnected = true;
            break;
        }
        tokio::time::sleep(StdDuration::from_millis(50)).await;
    }
    assert!(
        reconnected,
        "no Reconnected signal after the connection was killed"
    );
    let after = insert(&other, home, "Still listening?").await;
    won(other
        .resolve(after.id, &answer(json!(true)), T0)
        .await
        .unwrap());
    assert!(heard_of(after.id).await, "nothing heard after reconnecting");
    assert!(!task.is_finished());
    task.abort();
}

#[tokio::test]
async fn postgres_unreachable_is_unavailable() {
    let started = std::time::Instant::now();
    let r = PgStore::connect("postgres://postgres@127.0.0.1:1/sayso").await;
    assert!(
        matches!(r, Err(StoreError::Unavailable(_))),
        "{:?}",
        r.err()
    );
    assert!(started.elapsed() < StdDuration::from_secs(10));
}

#[tokio::test]
async fn sqlite_listens_to_nobody() {
    let t = sqlite_store().await.unwrap();
    assert!(t.store.listen(Arc::new(|_| {})).is_none());
}

#[tokio::test]
async fn sqlite_in_memory_works() {
    let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
    let home = inbox(&store, "home").await;
    let d = insert(&store, home, "memory?").await;
    assert_eq!(store.decision(None, d.id).await.unwrap(), Some(d));
}

#[tokio::test]
async fn unknown_scheme_is_refused() {
    let r = sayso::storage::connect("mysql://localhost/sayso").await;
    let Err(StoreError::Other(message)) = r else {
        panic!("expected a refusal");
    };
    assert!(message.contains("mysql"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_backup_is_a_working_copy_and_never_overwrites() {
    let t = sqlite_store().await.unwrap();
    let store = &*t.store;
    let home = inbox(store, "home").await;
    let d = insert(store, home, "Back me up").await;
    let copy = common::db::fresh_sqlite_url();
    store.backup_to(&copy.path).await.unwrap();
    let again = store.backup_to(&copy.path).await.unwrap_err();
    assert!(matches!(again, StoreError::Conflict(_)), "{again:?}");
    let restored = SqliteStore::connect(&copy.url).await.unwrap();
    let read = restored.decision(None, d.id).await.unwrap().unwrap();
    assert_eq!(read.spec.question, "Back me up");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&copy.path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_backup_says_to_use_pg_dump() {
    let Some(t) = pg_store().await else { return };
    let path = std::env::temp_dir().join(format!("sayso-backup-{}.db", Uuid::new_v4().simple()));
    let err = t.store.backup_to(&path).await.unwrap_err();
    assert!(err.to_string().contains("pg_dump"), "{err}");
    assert!(!path.exists());
}

/// The decision table's CHECK constraints are comparisons (migration 0010): written as
/// `IN (…)` lists, SQLite built a temporary index of each list for every row inserted. They
/// still refuse what they refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_checks_a_new_decision_without_temporary_indexes() {
    let db = common::db::fresh_sqlite_url();
    let store = SqliteStore::connect(&db.url).await.unwrap();
    let home = inbox(&store, "home").await;
    let mut conn = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    let insert = |kind: &str, status: &str, via: &str| {
        format!(
            "INSERT INTO decisions (id, inbox_id, kind, question, spec, status, created_at, \
             expires_at, answered_via) VALUES ('{}', '{}', '{kind}', 'q', '{{}}', '{status}', \
             1, 2, {via})",
            Uuid::new_v4(),
            home
        )
    };
    let program: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(format!(
        "EXPLAIN {}",
        insert("bool", "pending", "NULL")
    )))
    .fetch_all(&mut conn)
    .await
    .unwrap()
    .iter()
    .map(|op| op.get("opcode"))
    .collect();
    assert!(
        !program.iter().any(|op| op == "OpenEphemeral"),
        "the insert builds a temporary index: {program:?}"
    );
    for (kind, status, via, column) in [
        ("maybe", "pending", "NULL", "kind"),
        ("bool", "pondering", "NULL", "status"),
        ("bool", "answered", "'carrier pigeon'", "answered_via"),
    ] {
        let refused = sqlx::query(sqlx::AssertSqlSafe(insert(kind, status, via)))
            .execute(&mut conn)
            .await
            .expect_err("a value outside the constraint");
        assert!(
            refused.to_string().contains("CHECK constraint failed")
                && refused.to_string().contains(column),
            "{refused}"
        );
    }
    sqlx::query(sqlx::AssertSqlSafe(insert("todo", "cancelled", "'api'")))
        .execute(&mut conn)
        .await
        .unwrap();
}
