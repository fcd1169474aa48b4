//! Opening the SQLite file: its pools (one writer, the readers), its pragmas and migrations,
//! and the write transaction every store method starts from.

use std::str::FromStr;
use std::time::Duration;

use sqlx::Sqlite;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use super::super::rows::{migrate_error, pool_state, store_error};
use super::*;
use crate::metrics::PoolState;

/// Read-only connections kept for the hottest reads (readers.rs), beside the pool's
/// `READ_POOL`: about one for each thread that runs requests.
const READERS: usize = 8;

/// The read pool's connections (sqlx), for the reads that scan lists or run per page.
const READ_POOL: u32 = 8;

impl SqliteStore {
    /// Opens (creating if missing) the database at `url` — `sqlite://PATH`, or
    /// `sqlite::memory:` for a database that lives as long as the store — and migrates it.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Other(format!("database URL {url:?}: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        if !in_memory {
            create_private(options.get_filename())?;
        }
        // The checkpointer takes the WAL's checkpoints (checkpoints.rs); on the read-only
        // connections the setting changes nothing.
        let options = options.pragma("wal_autocheckpoint", "0");
        // One connection that never closes: the writer, and for a memory database (each
        // connection to which is its own database) the reader too.
        let single = || {
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .acquire_timeout(Duration::from_secs(10))
        };
        // The writer keeps 64 MB of pages rather than SQLite's 2 MB: every create and
        // answer writes into indexes keyed at random (token hashes), and with a million
        // decisions those no longer fit in 2 MB, so each write read its pages again
        // (docs/PERFORMANCE.md, "Flat as the data grows"). The cache fills only as the
        // database grows into it.
        let writer = single()
            .connect_with(options.clone().pragma("cache_size", "-65536"))
            .await
            .map_err(store_error)?;
        sqlx::migrate!("migrations/sqlite")
            .run(&writer)
            .await
            .map_err(migrate_error)?;
        let (pool, readers, checkpoints) = if in_memory {
            (writer.clone(), None, None)
        } else {
            let read_only = options.read_only(true);
            // The read connections are opened at start and kept, each with the schema read:
            // a connection opened on a request cost that request its opening and SQLite's
            // parse of the whole schema (a person's first feed page, which reads on several
            // at once, took 50 ms on a fresh server against 4 ms after).
            let pool = SqlitePoolOptions::new()
                .max_connections(READ_POOL)
                .min_connections(READ_POOL)
                .idle_timeout(None)
                .max_lifetime(None)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        sqlx::query("SELECT count(*) FROM sqlite_schema")
                            .execute(conn)
                            .await
                            .map(drop)
                    })
                })
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(read_only.clone())
                .await
                .map_err(store_error)?;
            let path = read_only.get_filename().to_path_buf();
            let checkpoints = checkpoints::Checkpoints::start(path.clone())?;
            (
                pool,
                Some(readers::Readers::open(path, READERS)?),
                Some(checkpoints),
            )
        };
        let mut thread = crate::storage::batching::BatchingThread::new("sayso-sqlite-writes")?;
        let creates = creates::Creates::start(writer.clone(), &mut thread);
        let resolves = resolves::Resolves::start(writer.clone(), &mut thread);
        thread.start()?;
        Ok(SqliteStore {
            pool,
            readers,
            writer,
            _checkpoints: checkpoints,
            creates,
            resolves,
        })
    }

    /// The pool reads use; `sql/` reads through it.
    pub(in crate::storage) fn reads(&self) -> &sqlx::SqlitePool {
        &self.pool
    }

    /// The one writer's pool: every write, and the reads that must see the last write.
    pub(in crate::storage) fn writes(&self) -> &sqlx::SqlitePool {
        &self.writer
    }

    /// A write transaction that takes SQLite's write lock at once (`BEGIN IMMEDIATE`), so it
    /// never fails half-way on a lock another writer took after its first read.
    pub(in crate::storage) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, Sqlite>, StoreError> {
        self.writer
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(store_error)
    }

    /// The pools the metrics report (`Gauges`): the readers' and the writer's.
    pub(in crate::storage) fn pool_states(&self) -> Vec<PoolState> {
        vec![
            pool_state("read", &self.pool),
            pool_state("write", &self.writer),
        ]
    }
}
