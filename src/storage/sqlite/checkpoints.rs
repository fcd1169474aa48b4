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
//! wait; it copies what no reader still needs, and what is left goes at the next. Durability
//! is what `synchronous=NORMAL` gives: a commit is in the WAL when it returns, and the WAL
//! reaches the disk at the next checkpoint, which now normally comes within [`INTERVAL`] of a
//! commit rather than after 1 000 pages.
//!
//! SQLite starts the WAL again from its beginning only when a write transaction begins after
//! a checkpoint copied all of it, and under steady writes there is always a commit between
//! the two: the WAL then grew without end (1.75 GB in 12 s of creates), and every read and
//! write paid for its size, searching a WAL index that grew with it. So once the WAL holds
//! [`RESTART_FRAMES`], the PASSIVE checkpoint is followed by a RESTART one, which waits its
//! turn to write, copies the little written since, waits for the old WAL's readers (up to
//! [`RESTART_WAIT`]), and has the next writer start the WAL again. Writers wait for it that
//! long: 7 to 12 ms, about twice a second under the heaviest load measured
//! (docs/PERFORMANCE.md).

use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::storage::StoreError;

/// How often the WAL is checkpointed. Under the heaviest load measured (about 25 000 creates
/// a second) the WAL grows by some 14 MB between two checkpoints.
pub(super) const INTERVAL: Duration = Duration::from_millis(100);

/// The WAL's length, in pages, from which a checkpoint also restarts it: 64 MB of 4 KB pages.
pub(super) const RESTART_FRAMES: i64 = 16_384;

/// How long a RESTART checkpoint waits for its turn to write and for the readers of the old
/// WAL to finish. It holds the turn to write while it waits for the readers, so this is also
/// the longest it holds up the writers; one that gives up leaves the WAL as it was.
const RESTART_WAIT: Duration = Duration::from_millis(50);

/// How many intervals pass after a RESTART gave up before the next one is tried: a reader
/// that keeps a transaction open for long (a backup's copy, say) holds the writers up for
/// [`RESTART_WAIT`] once a second, not at every interval.
const RESTART_HOLD_OFF: u32 = 10;

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
            .spawn(move || run(&conn, &stopped, RESTART_FRAMES))
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
    // Only a RESTART checkpoint waits; a PASSIVE one never calls the busy handler.
    conn.busy_timeout(RESTART_WAIT).map_err(failed)?;
    Ok(conn)
}

/// Checkpoints every [`INTERVAL`] until the store is dropped, restarting the WAL from
/// `restart_frames` on. A failure (a full disk, say) is logged when it starts and when it
/// ends, not every time; the WAL keeps every commit meanwhile, so nothing is lost, it only
/// grows.
fn run(conn: &Connection, stopped: &mpsc::Receiver<()>, restart_frames: i64) {
    let mut failing = false;
    let mut hold_off = HoldOff::default();
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(INTERVAL) {
        let done = checkpoint(conn, hold_off.restart_from(restart_frames));
        if let Ok(restart) = done {
            hold_off.after(restart);
        }
        match done {
            Ok(_) if failing => {
                failing = false;
                tracing::info!("WAL checkpoints succeed again");
            }
            Ok(_) => {}
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "WAL checkpoint failed; the WAL grows until one succeeds");
            }
            Err(_) => {}
        }
    }
}

/// After a RESTART gave up (a reader still on the old WAL), the next [`RESTART_HOLD_OFF`]
/// checkpoints are PASSIVE only, so that reader holds the writers up once a second at most.
#[derive(Debug, Default)]
struct HoldOff {
    left: u32,
}

impl HoldOff {
    /// The WAL length from which this checkpoint also restarts the WAL.
    fn restart_from(&mut self, restart_frames: i64) -> i64 {
        if self.left > 0 {
            self.left -= 1;
            i64::MAX
        } else {
            restart_frames
        }
    }

    fn after(&mut self, done: Restart) {
        if done == Restart::GaveUp {
            self.left = RESTART_HOLD_OFF;
        }
    }
}

/// One PASSIVE checkpoint, and a RESTART one after it when the WAL has grown to
/// `restart_frames`. A busy one (another process's checkpoint was running, or the RESTART
/// did not get its turn in time) is not a failure: the next tries again.
fn checkpoint(conn: &Connection, restart_frames: i64) -> rusqlite::Result<Restart> {
    let frames = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
        row.get::<_, i64>(1)
    })?;
    if frames < restart_frames {
        return Ok(Restart::NotYet);
    }
    // The row's first column is 1 when the checkpoint could not finish: it gave up waiting.
    let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |row| row.get(0))?;
    Ok(if busy == 0 {
        Restart::Done
    } else {
        Restart::GaveUp
    })
}

/// Whether a checkpoint restarted the WAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Restart {
    /// The WAL is not long enough yet.
    NotYet,
    Done,
    /// It did not get its turn, or readers of the old WAL stayed, within [`RESTART_WAIT`].
    GaveUp,
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

    /// The checkpoint thread on `path`, restarting the WAL from `restart_frames`, as the store
    /// runs it; `stop` ends it and waits for it.
    struct Checkpointing {
        stop: mpsc::Sender<()>,
        thread: std::thread::JoinHandle<()>,
    }

    impl Checkpointing {
        fn start(path: &std::path::Path, restart_frames: i64) -> Checkpointing {
            let conn = open(path).expect("open");
            let (stop, stopped) = mpsc::channel::<()>();
            let thread = std::thread::spawn(move || run(&conn, &stopped, restart_frames));
            Checkpointing { stop, thread }
        }

        fn stop(self) {
            drop(self.stop);
            self.thread.join().expect("the checkpoint thread");
        }
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

    /// The WAL header's checkpoint sequence number, which SQLite raises each time the WAL
    /// starts again from its beginning (it writes the header anew with the first frame).
    fn wal_restarts(dir: &Dir) -> u32 {
        let wal = std::fs::read(dir.0.join("db-wal")).expect("WAL");
        u32::from_be_bytes(wal[12..16].try_into().expect("a WAL header"))
    }

    #[test]
    fn the_wal_starts_again_under_steady_writes() {
        let dir = Dir::new("checkpoints-restart");
        let path = dir.0.join("db");
        let conn = writer(&path);
        let insert = || {
            conn.execute("INSERT INTO t (x) VALUES (?1)", ["x".repeat(4000)])
                .expect("insert");
        };
        insert();
        let first = wal_restarts(&dir);
        // 256 pages (1 MB) instead of the server's 64 MB, so that a second of writes is plenty.
        let checkpointing = Checkpointing::start(&path, 256);
        // 3 000 commits one after another (some 9 000 pages), never leaving a checkpoint the
        // moment between two in which SQLite would start the WAL again by itself: it did so
        // 0 to 2 times in 4 000 such commits without the RESTART, and 27 to 31 times in 3 000
        // with it. The count, not the WAL's size, is asserted: how far the WAL grows between
        // two restarts depends on how fast the disk syncs, and a busy machine's can take a
        // second.
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut commits = 0;
        while commits < 3_000 && Instant::now() < deadline {
            insert();
            commits += 1;
            std::thread::sleep(Duration::from_micros(500));
        }
        checkpointing.stop();
        let restarts = wal_restarts(&dir).wrapping_sub(first);
        assert!(
            restarts >= 8,
            "the WAL started again {restarts} times in {commits} commits of a page each"
        );
    }

    #[test]
    fn a_restart_gives_up_while_a_reader_holds_the_old_wal() {
        let dir = Dir::new("checkpoints-reader");
        let path = dir.0.join("db");
        let conn = writer(&path);
        conn.execute("INSERT INTO t (x) VALUES ('first')", [])
            .expect("insert");
        // A reader whose transaction stays open, as a backup's copy does.
        let reader = Connection::open(&path).expect("reader");
        reader.execute_batch("BEGIN").expect("begin");
        let _: i64 = reader
            .query_row("SELECT count(*) FROM t", [], |row| row.get(0))
            .expect("read");
        for _ in 0..300 {
            conn.execute("INSERT INTO t (x) VALUES (?1)", ["x".repeat(4000)])
                .expect("insert");
        }
        let checkpoints = open(&path).expect("open");
        // It waits RESTART_WAIT for the reader, then gives up and leaves the WAL as it was.
        assert_eq!(
            checkpoint(&checkpoints, 256).expect("checkpoint"),
            Restart::GaveUp
        );
        reader.execute_batch("COMMIT").expect("commit");
        assert_eq!(
            checkpoint(&checkpoints, 256).expect("checkpoint"),
            Restart::Done
        );
    }

    #[test]
    fn after_a_restart_gave_up_the_next_second_of_checkpoints_is_passive() {
        let mut hold_off = HoldOff::default();
        assert_eq!(hold_off.restart_from(256), 256);
        hold_off.after(Restart::NotYet);
        hold_off.after(Restart::Done);
        assert_eq!(hold_off.restart_from(256), 256);
        hold_off.after(Restart::GaveUp);
        for _ in 0..RESTART_HOLD_OFF {
            assert_eq!(hold_off.restart_from(256), i64::MAX);
        }
        assert_eq!(hold_off.restart_from(256), 256);
        assert_eq!(INTERVAL * RESTART_HOLD_OFF, Duration::from_secs(1));
    }

    #[test]
    fn the_thread_ends_when_its_store_is_dropped() {
        let dir = Dir::new("checkpoints-stop");
        let path = dir.0.join("db");
        let _conn = writer(&path);
        let conn = open(&path).expect("open");
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || run(&conn, &stopped, RESTART_FRAMES));
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
