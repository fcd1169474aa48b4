//! The read-only connections of the hottest reads (a decision by key, an inbox by key),
//! handed out without sqlx's pool.
//!
//! sqlx runs each SQLite connection on a thread of its own, so every statement is a message to
//! that thread and a wake-up back. Its pool adds a second one to every read: a connection
//! given back is returned by a task of its own, which pings the connection's thread first
//! (`PoolConnection`'s drop), so a one-statement read cost two hand-offs and a spawned task.
//! Here a connection goes back to the idle list at once, in the guard's drop, and only one
//! hand-off is left: the statement's own.
//!
//! The ping is sqlx's guard against a connection left mid-transaction by a cancelled
//! future. These connections are read-only and never begin a transaction; a statement a
//! cancelled request left running finishes on its thread before the next one starts there. A
//! connection whose statement failed is closed rather than given back, and its place is
//! opened again when next needed.

use std::sync::Mutex;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Connection};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::storage::StoreError;
use crate::storage::rows::store_error;

/// Up to `size` read-only connections, opened as needed and kept.
pub(super) struct Readers {
    options: SqliteConnectOptions,
    idle: Mutex<Vec<SqliteConnection>>,
    permits: Semaphore,
}

/// A connection lent by `Readers`; it goes back when dropped.
pub(super) struct Reader<'a> {
    conn: Option<SqliteConnection>,
    readers: &'a Readers,
    _permit: SemaphorePermit<'a>,
}

impl Readers {
    /// `options` must open the database read-only.
    pub(super) fn new(options: SqliteConnectOptions, size: usize) -> Self {
        Readers {
            options,
            idle: Mutex::new(Vec::with_capacity(size)),
            permits: Semaphore::new(size),
        }
    }

    /// An idle connection, or a new one while fewer than `size` are open; else waits for one.
    pub(super) async fn acquire(&self) -> Result<Reader<'_>, StoreError> {
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| StoreError::Unavailable("the store is closed".into()))?;
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.options.connect().await.map_err(store_error)?,
        };
        Ok(Reader {
            conn: Some(conn),
            readers: self,
            _permit: permit,
        })
    }
}

impl Reader<'_> {
    /// The connection, to run one statement on.
    pub(super) fn conn(&mut self) -> &mut SqliteConnection {
        self.conn
            .as_mut()
            .expect("a lent reader holds its connection")
    }

    /// Closes the connection instead of giving it back: its statement failed, and the next
    /// read should not find it in whatever state that left.
    pub(super) fn discard(mut self) {
        if let Some(conn) = self.conn.take() {
            // The close is a message to the connection's thread; nobody waits for it.
            tokio::spawn(async move {
                let _ = conn.close().await;
            });
        }
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.readers
                .idle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(conn);
        }
    }
}
