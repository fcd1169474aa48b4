//! Migration 0011 gives each passkey already stored a person: the inbox's own person when
//! no one else could have added it, and none (it is removed) when another person of the
//! inbox existed by then. Each backend is migrated to just before 0011, given passkeys the
//! old way, and opened as a store, which applies the rest.

use std::path::Path;

use sqlx::AssertSqlSafe;
use sqlx::migrate::Migrator;
use uuid::Uuid;

use sayso::storage::{PgStore, SqliteStore, Store};

use crate::common;

/// An inbox alone, an inbox with ana (added at 2 s), and passkeys: `solo` (1 s) in the
/// first, `before_ana` (1 s) and `after_ana` (3 s) in the second. `at(s)` is a time literal.
fn old_rows(solo: Uuid, shared: Uuid, ana: Uuid, at: impl Fn(i64) -> String) -> Vec<String> {
    vec![
        format!(
            "INSERT INTO inboxes (id, name, created_at) VALUES ('{solo}', 'solo', {})",
            at(0)
        ),
        format!(
            "INSERT INTO inboxes (id, name, created_at) VALUES ('{shared}', 'shared', {})",
            at(0)
        ),
        format!(
            "INSERT INTO people (id, inbox_id, name, created_at) \
             VALUES ('{ana}', '{shared}', 'ana', {})",
            at(2)
        ),
        format!(
            "INSERT INTO passkeys (credential_id, inbox_id, public_key, sign_count, created_at) \
             VALUES ('solo', '{solo}', 'k', 0, {}), ('before_ana', '{shared}', 'k', 0, {}), \
             ('after_ana', '{shared}', 'k', 0, {})",
            at(1),
            at(1),
            at(3)
        ),
    ]
}

async fn check(store: &dyn Store, solo: Uuid, shared: Uuid, ana: Uuid) {
    let ids = |p: Vec<sayso::storage::StoredPasskey>| {
        p.into_iter().map(|p| p.credential_id).collect::<Vec<_>>()
    };
    assert_eq!(ids(store.passkeys(solo).await.unwrap()), ["solo"]);
    assert_eq!(ids(store.passkeys(shared).await.unwrap()), ["before_ana"]);
    assert!(store.passkeys(ana).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_passkeys_go_to_the_inbox_own_person_when_no_one_else_could_have_added_them() {
    let db = common::db::fresh_sqlite_url();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
    let pool = sqlx::SqlitePool::connect(&format!("{}?mode=rwc", db.url))
        .await
        .unwrap();
    Migrator::new(dir)
        .await
        .unwrap()
        .run_to(10, &pool)
        .await
        .unwrap();
    let (solo, shared, ana) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    for sql in old_rows(solo, shared, ana, |s| (s * 1000).to_string()) {
        sqlx::query(AssertSqlSafe(sql))
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
    let store = SqliteStore::connect(&db.url).await.unwrap();
    check(&store, solo, shared, ana).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_passkeys_go_to_the_inbox_own_person_when_no_one_else_could_have_added_them() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres");
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    Migrator::new(dir)
        .await
        .unwrap()
        .run_to(10, &pool)
        .await
        .unwrap();
    let (solo, shared, ana) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let at = |s: i64| format!("to_timestamp({s})");
    for sql in old_rows(solo, shared, ana, at) {
        sqlx::query(AssertSqlSafe(sql))
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    check(&store, solo, shared, ana).await;
}
