//! WAL checkpoints, taken off the writer's path.
//!
//! In WAL mode a commit appends the pages it changed to the WAL, and SQLite's default is that
//! the committing connection, once the WAL holds 1 000 pages, copies them back into the
//! database with an `fsync` of each file before its commit returns. Every write of the server
//! goes through one writer connection (mod.rs), so each of those checkpoints held every create
//! and answer queued behind it for the length of two `fsync`s, about fifty times a second under
//! load (docs/PERFORMANCE.md). The writer's automatic checkpoints are therefore off
//! (`wal_autocheckpoint=0`), and a thread of its own checkpoints instead, on a connection of
//! its own, every [`INTERVAL`].
//!
//! The checkpoints are PASSIVE: one never waits for the writer or a reader, nor makes them
//! wait; it copies what no reader still needs, and what is left goes at the next. The WAL is
//! restarted from its beginning, as before, by the writer's next transaction once a
//! checkpoint has copied all of it. Durability is what `synchronous=NORMAL` gives: a commit
//! is in the WAL when it returns, and the WAL reaches the disk at the next checkpoint, which
//! now normally comes within [`INTERVAL`] of a commit rather than after 1 000 pages.

use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::storage::StoreError;

/// How often the WAL is checkpointed. Under the heaviest load measured (about 25 000 creates
/// a second) the WAL grows by some 14 MB between two checkpoints.
pub(super) const INTERVAL: Duration = Duration::from_millis(100);

/// The checkpointing thread; it stops when this is dropped (with the store).
pub(super) struct Checkpoints {
    _stop: mpsc::Sender<()>,
}

impl Checkpoints {
    /// Starts checkpointing the database at `path`, whose writer has its own checkpoints off.
    pub(super) fn start(path: PathBuf) -> Result<Checkpoints, StoreError> {
        let conn = open(&path)?;
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("sayso-sqlite-checkpoints".into())
            .spawn(move || run(&conn, &stopped))
            .map_err(|e| StoreError::Other(format!("no thread for checkpoints: {e}")))?;
        Ok(Checkpoints { _stop: stop })
    }
}

fn open(path: &std::path::Path) -> Result<Connection, StoreError> {
    let failed = |e: rusqlite::Error| {
        StoreError::Other(format!("checkpoints: cannot open {}: {e}", path.display()))
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(failed)?;
    // The checkpoint's fsyncs follow `synchronous`, as the writer's did.
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(failed)?;
    Ok(conn)
}

/// Checkpoints every [`INTERVAL`] until the store is dropped. A failure (a full disk, say) is
/// logged when it starts and when it ends, not every time; the WAL keeps every commit
/// meanwhile, so nothing is lost, it only grows.
fn run(conn: &Connection, stopped: &mpsc::Receiver<()>) {
    let mut failing = false;
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(INTERVAL) {
        match checkpoint(conn) {
            Ok(()) if failing => {
                failing = false;
                tracing::info!("WAL checkpoints succeed again");
            }
            Ok(()) => {}
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "WAL checkpoint failed; the WAL grows until one succeeds");
            }
            Err(_) => {}
        }
    }
}

/// One PASSIVE checkpoint. Its row (whether another process's checkpoint was running, the
/// WAL's frames, those copied) needs no reading: a busy one is not a failure, that one does
/// the work.
fn checkpoint(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// A directory of its own under the system's temporary one, removed when dropped.
    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let dir = std::env::temp_dir().join(format!("sayso-{name}-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&dir).expect("a temporary directory");
            Dir(dir)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A writer as the store opens it: WAL, and no checkpoints of its own.
    fn writer(path: &std::path::Path) -> Connection {
        let conn = Connection::open(path).expect("open");
        conn.pragma_update(None, "journal_mode", "WAL")
            .expect("WAL");
        conn.pragma_update(None, "wal_autocheckpoint", 0)
            .expect("autocheckpoint off");
        conn.execute("CREATE TABLE t (x TEXT NOT NULL)", [])
            .expect("table");
        conn
    }

    #[test]
    fn commits_reach_the_database_file_without_the_writer_checkpointing() {
        let dir = Dir::new("checkpoints");
        let path = dir.0.join("db");
        let conn = writer(&path);
        let before = std::fs::metadata(&path).expect("db file").len();
        let _checkpoints = Checkpoints::start(path.clone()).expect("checkpoints");
        // 200 pages' worth of rows, far below the 1 000 at which a writer would checkpoint.
        for _ in 0..200 {
            conn.execute("INSERT INTO t (x) VALUES (?1)", ["x".repeat(4000)])
                .expect("insert");
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        let grown = loop {
            let len = std::fs::metadata(&path).expect("db file").len();
            if len >= before + 200 * 4000 || Instant::now() > deadline {
                break len;
            }
            std::thread::sleep(INTERVAL / 2);
        };
        assert!(
            grown >= before + 200 * 4000,
            "the database file stayed at {grown} bytes (from {before}): no checkpoint copied the WAL"
        );
    }

    #[test]
    fn the_thread_ends_when_its_store_is_dropped() {
        let dir = Dir::new("checkpoints-stop");
        let path = dir.0.join("db");
        let _conn = writer(&path);
        let conn = open(&path).expect("open");
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || run(&conn, &stopped));
        std::thread::sleep(INTERVAL * 2);
        assert!(
            !thread.is_finished(),
            "the thread ended while the store was open"
        );
        drop(stop);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(thread.is_finished(), "the thread outlived its store");
    }
}
