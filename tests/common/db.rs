//! Fresh databases for tests: a temporary SQLite file, or a new PostgreSQL database on the
//! server named by `SAYSO_TEST_PG_URL`. Both are removed when their guard is dropped, also
//! when the test fails.

use std::path::PathBuf;
use std::time::Duration;

use sqlx::{AssertSqlSafe, Connection, Database, Executor, FromRow, IntoArguments, PgConnection};
use uuid::Uuid;

/// Where the PostgreSQL tests create their databases, unless `SAYSO_TEST_PG_URL` says otherwise.
pub const DEFAULT_PG_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A SQLite file in the temporary directory, deleted (with its WAL files) on drop.
pub struct SqliteTestDb {
    /// `sqlite://…`, for `SqliteStore::connect` or `SAYSO_DATABASE_URL`.
    pub url: String,
    pub path: PathBuf,
}

/// A new, empty SQLite database with a unique name.
pub fn fresh_sqlite_url() -> SqliteTestDb {
    let path = std::env::temp_dir().join(format!("sayso-test-{}.db", Uuid::new_v4().simple()));
    SqliteTestDb {
        url: format!("sqlite://{}", path.display()),
        path,
    }
}

impl Drop for SqliteTestDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut file = self.path.clone().into_os_string();
            file.push(suffix);
            let _ = std::fs::remove_file(file);
        }
    }
}

/// A PostgreSQL database made for one test, dropped (`WITH (FORCE)`) on drop.
pub struct PgTestDb {
    /// `postgres://…/sayso_t_…`, for `PgStore::connect` or `SAYSO_DATABASE_URL`.
    pub url: String,
    pub name: String,
    admin_url: String,
}

/// The server the PostgreSQL tests use.
pub fn pg_admin_url() -> String {
    std::env::var("SAYSO_TEST_PG_URL").unwrap_or_else(|_| DEFAULT_PG_URL.to_owned())
}

/// A new, empty PostgreSQL database; `None` (after a loud `SKIPPED` on stderr) when the
/// server cannot be reached, except in CI (`CI` set), where that fails the test.
pub async fn fresh_pg_url() -> Option<PgTestDb> {
    let admin_url = pg_admin_url();
    let mut admin = match connect(&admin_url).await {
        Ok(conn) => conn,
        Err(error) => {
            if std::env::var_os("CI").is_some() {
                panic!("PostgreSQL not reachable at {admin_url} (required in CI): {error}");
            }
            eprintln!(
                "SKIPPED: PostgreSQL not reachable at {admin_url} ({error}); \
                 set SAYSO_TEST_PG_URL to run the PostgreSQL tests"
            );
            return None;
        }
    };
    let name = format!("sayso_t_{}", Uuid::new_v4().simple());
    admin
        .execute(AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
    let _ = admin.close().await;
    let mut url = url::Url::parse(&admin_url).expect("SAYSO_TEST_PG_URL is a URL");
    url.set_path(&name);
    Some(PgTestDb {
        url: url.to_string(),
        name,
        admin_url,
    })
}

async fn connect(url: &str) -> Result<PgConnection, String> {
    match tokio::time::timeout(Duration::from_secs(5), PgConnection::connect(url)).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("timed out connecting".to_owned()),
    }
}

impl Drop for PgTestDb {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // Drop cannot await, and the test's runtime may be single-threaded: use a runtime of
        // its own on another thread.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                let mut admin = connect(&admin_url).await?;
                admin
                    .execute(AssertSqlSafe(sql))
                    .await
                    .map_err(|e| e.to_string())?;
                let _ = admin.close().await;
                Ok::<_, String>(())
            })
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("could not drop test database {}: {e}", self.name),
            Err(_) => eprintln!("could not drop test database {}: panicked", self.name),
        }
    }
}

/// Every decision in the database at `url` (either backend), by id: its status and how many
/// resolution events (`answered`, `declined`, `cancelled`, `expired`) the store kept for it.
pub async fn resolution_events(url: &str) -> std::collections::HashMap<String, (String, i64)> {
    const COUNT: &str = "(SELECT count(*) FROM decision_events e WHERE e.decision_id = d.id \
         AND e.kind IN ('answered', 'declined', 'cancelled', 'expired'))";
    let rows: Vec<(String, String, i64)> = if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        let rows = rows_of(
            &mut conn,
            format!("SELECT d.id, d.status, {COUNT} FROM decisions d"),
        )
        .await;
        let _ = conn.close().await;
        rows
    } else {
        let mut conn = PgConnection::connect(url).await.unwrap();
        let sql = format!("SELECT d.id::text, d.status, {COUNT} FROM decisions d");
        let rows = rows_of(&mut conn, sql).await;
        let _ = conn.close().await;
        rows
    };
    rows.into_iter()
        .map(|(id, status, n)| (id, (status, n)))
        .collect()
}

/// The rows `sql` selects over `conn`, on either backend.
pub async fn rows_of<C, O>(conn: &mut C, sql: String) -> Vec<O>
where
    C: Connection,
    for<'c> &'c mut C: Executor<'c, Database = C::Database>,
    <C::Database as Database>::Arguments: IntoArguments<C::Database>,
    O: Send + Unpin + for<'r> FromRow<'r, <C::Database as Database>::Row>,
{
    sqlx::query_as::<C::Database, O>(AssertSqlSafe(sql))
        .fetch_all(conn)
        .await
        .unwrap()
}
