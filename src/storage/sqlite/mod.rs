//! The SQLite store: the embedded default, one process writing one file.
//!
//! Ids are stored as lowercase hyphenated text (whose order is the UUID's byte order),
//! times as integer milliseconds since the epoch, JSON as text. Writes that read first run
//! in `BEGIN IMMEDIATE` transactions, so two writers never deadlock upgrading a read lock.

mod allowance_uses;
mod allowances;
mod checkpoints;
mod connect;
mod creates;
mod decisions;
mod events;
mod inboxes;
mod limits;
mod notices;
mod outbox;
mod readers;
mod resolves;
mod retention;
mod rows;
mod usage;

use async_trait::async_trait;
use sqlx::sqlite::SqlitePool;

use super::rows::ping_pool;
use super::{SignalSink, Store, StoreError};

/// A store on one SQLite file.
///
/// SQLite lets one writer in at a time and makes the others wait in its busy handler, which
/// sleeps in steps of milliseconds. Every write therefore goes through `writer`, a pool of one
/// connection, so writers queue in the process (in order, without sleeping) and SQLite never
/// sees two. Reads use `pool`; in WAL mode they never wait for the writer.
pub struct SqliteStore {
    pool: SqlitePool,
    /// The hottest reads, run on the request's thread (readers.rs); none for a memory
    /// database, whose only connection is the writer.
    readers: Option<readers::Readers>,
    writer: SqlitePool,
    /// Checkpoints the WAL off the writer's path (checkpoints.rs); none for a memory database.
    _checkpoints: Option<checkpoints::Checkpoints>,
    /// Creates go in groups, through the writer (creates.rs).
    creates: creates::Creates,
    /// So do resolutions and votes (resolves.rs).
    resolves: resolves::Resolves,
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        ping_pool(&self.pool).await
    }

    /// Signals from other processes: none. A SQLite database is used by one process, whose
    /// own resolutions wake its waiters directly, so there is nothing to listen for.
    fn listen(&self, _sink: SignalSink) -> Option<tokio::task::JoinHandle<()>> {
        None
    }
}

/// Creates the database file readable and writable by its owner only, before SQLite opens it:
/// it holds the key that signs answer links and the inboxes' webhook secrets. SQLite gives its
/// `-wal` and `-shm` files the mode of the database file. An existing file keeps its mode.
fn create_private(path: &std::path::Path) -> Result<(), StoreError> {
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    match open.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Other(format!(
            "cannot create the database file {}: {e}",
            path.display()
        ))),
    }
}
