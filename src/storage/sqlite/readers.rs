//! The hottest reads (a decision by id or by key, an inbox by key), run on the caller's own
//! thread.
//!
//! sqlx runs each SQLite connection on a thread of its own, so every statement through it is
//! a message to that thread and a wake-up back: on two cores, stack samples of a `GET` under
//! load spent most of their time in the scheduler and futex waits around that hand-off, and
//! under 1 % in SQLite itself. These reads are one indexed lookup each, a few microseconds in
//! SQLite, so they are run here synchronously, through rusqlite on the same bundled library,
//! on read-only connections kept in a list: no hand-off, no task, no wake-up.
//!
//! Running SQLite on a runtime thread is safe only because the statement cannot wait long: in
//! WAL mode a reader never waits for the writer, and checkpoints are passive
//! (checkpoints.rs), so the busy handler is reached only while another process recovers the
//! WAL after a crash (it then waits up to the same 5 s as every connection). The other reads, whose statements scan
//! lists or run per page, stay on sqlx's pool.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Params, Row};
use serde_json::Value;
use uuid::Uuid;

use crate::domain::inbox::{Inbox, InboxChannels, KeyGrant};
use crate::domain::{Decision, OutcomeSource, Status};
use crate::storage::rows::{At, DecisionRow, Id, NotificationRow, from_millis};
use crate::storage::{KeyedRead, StoreError};

/// Read-only connections to one database file: `keep` opened at start, more as needed; up
/// to `keep` stay open.
pub(super) struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    keep: usize,
}

impl Readers {
    /// Opens `keep` connections, each with the schema read, so that no request pays for
    /// opening one (a connection's first statement parses the whole schema).
    pub(super) fn open(path: PathBuf, keep: usize) -> Result<Self, StoreError> {
        let readers = Readers {
            path,
            idle: Mutex::new(Vec::with_capacity(keep)),
            keep,
        };
        let opened = (0..keep)
            .map(|_| {
                let conn = readers.connect()?;
                conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
                    .map_err(read_error)?;
                Ok(conn)
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        *readers.idle.lock().unwrap_or_else(|e| e.into_inner()) = opened;
        Ok(readers)
    }

    /// The one row `sql` reads with `params`, decoded by `decode`, or `None`.
    ///
    /// A connection whose statement failed is closed rather than kept, so the next read does
    /// not find it in whatever state that left.
    pub(super) fn read_optional<T>(
        &self,
        sql: &str,
        params: impl Params,
        decode: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>, StoreError> {
        let conn = match self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            Some(conn) => conn,
            None => self.connect()?,
        };
        let read = conn
            .prepare_cached(sql)
            .and_then(|mut statement| statement.query_row(params, decode).optional());
        match read {
            Ok(found) => {
                let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                if idle.len() < self.keep {
                    idle.push(conn);
                }
                Ok(found)
            }
            Err(e) => Err(read_error(e)),
        }
    }

    fn connect(&self) -> Result<Connection, StoreError> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(read_error)?;
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(read_error)?;
        Ok(conn)
    }
}

fn read_error(e: rusqlite::Error) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(code, _)
            if matches!(
                code.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            StoreError::Unavailable(format!("the database is busy: {e}"))
        }
        e => StoreError::Other(format!("read: {e}")),
    }
}

/// Decodes the decision at the start of `row` (`decision_columns!`).
pub(super) fn decision(row: &Row<'_>) -> rusqlite::Result<Decision> {
    let columns = DecisionRow {
        id: Id(uuid(row, 0)?),
        inbox_id: Id(uuid(row, 1)?),
        spec: text(row, 2)?,
        status: word(row, 3, Status::parse)?,
        outcome: optional(row, 4, json)?,
        outcome_source: optional(row, 5, |row, i| word(row, i, OutcomeSource::parse))?,
        custom: row.get(6)?,
        remark: row.get(7)?,
        created_at: At(from_millis(row.get(8)?)),
        expires_at: At(from_millis(row.get(9)?)),
        resolved_at: row.get::<_, Option<i64>>(10)?.map(|ms| At(from_millis(ms))),
        has_image: row.get(11)?,
        answered_via: row.get(12)?,
        answered_device: optional(row, 13, uuid)?.map(Id),
        answers: text(row, 14)?,
        cancel_reason: row.get(15)?,
    };
    Decision::try_from(columns).map_err(|e| invalid(0, e))
}

/// The columns of a decision followed by its notification states as a JSON array.
const NOTIFIED_COLUMNS: usize = 17;

/// A decision followed by its notification states as a JSON array: `Unchanged` when the row
/// holds exactly the bytes `known`, without decoding it; otherwise decoded, with its bytes.
pub(super) fn notified_decision_unless(
    row: &Row<'_>,
    known: Option<&[u8]>,
) -> rusqlite::Result<KeyedRead> {
    if let Some(known) = known
        && row_is(row, NOTIFIED_COLUMNS, known)?
    {
        return Ok(KeyedRead::Unchanged);
    }
    let decision = decision(row)?;
    let notifications: Vec<NotificationRow> = json_as(row, 16)?;
    let mut bytes = Vec::with_capacity(known.map_or(1024, <[u8]>::len));
    row_parts(row, NOTIFIED_COLUMNS, |part| {
        bytes.extend_from_slice(part);
        true
    })?;
    Ok(KeyedRead::Read {
        decision: Box::new(decision),
        notifications: notifications.into_iter().map(Into::into).collect(),
        row: Some(bytes),
    })
}

/// Whether the first `columns` columns of `row` are exactly `known` (`row_parts`), compared
/// as they are read, with nothing copied.
fn row_is(row: &Row<'_>, columns: usize, known: &[u8]) -> rusqlite::Result<bool> {
    let mut rest = known;
    let same = row_parts(row, columns, |part| match rest.strip_prefix(part) {
        Some(after) => {
            rest = after;
            true
        }
        None => false,
    })?;
    Ok(same && rest.is_empty())
}

/// Hands `part` each piece of the first `columns` columns of `row`: for each column its type,
/// its length and its bytes, so that two rows give the same pieces exactly when each column
/// holds the same value of the same type. Stops, returning false, when `part` does.
fn row_parts(
    row: &Row<'_>,
    columns: usize,
    mut part: impl FnMut(&[u8]) -> bool,
) -> rusqlite::Result<bool> {
    for i in 0..columns {
        let number;
        let (kind, bytes): (u8, &[u8]) = match row.get_ref(i)? {
            ValueRef::Null => (0, &[]),
            ValueRef::Integer(n) => {
                number = n.to_le_bytes();
                (1, &number)
            }
            ValueRef::Real(x) => {
                number = x.to_bits().to_le_bytes();
                (2, &number)
            }
            ValueRef::Text(t) => (3, t),
            ValueRef::Blob(b) => (4, b),
        };
        let length = (bytes.len() as u64).to_le_bytes();
        if !(part(&[kind]) && part(&length) && part(bytes)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Decodes an inbox (`inbox_columns!`).
pub(super) fn inbox(row: &Row<'_>) -> rusqlite::Result<Inbox> {
    Ok(Inbox {
        id: uuid(row, 0)?,
        name: row.get(1)?,
        created_at: from_millis(row.get(2)?),
        channels: InboxChannels {
            email: row.get(3)?,
            ntfy_url: row.get(4)?,
            ntfy_token: row.get(5)?,
            webhook_secret: row.get(6)?,
            chats: Default::default(),
        },
        key: None,
    })
}

/// Decodes an inbox followed by the key it was read through (its id and `urgent`).
pub(super) fn keyed_inbox(row: &Row<'_>) -> rusqlite::Result<Inbox> {
    Ok(Inbox {
        key: Some(KeyGrant {
            id: uuid(row, 7)?,
            urgent: row.get(8)?,
        }),
        ..inbox(row)?
    })
}

fn text<'r>(row: &'r Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    Ok(row.get_ref(i)?.as_str()?)
}

fn uuid(row: &Row<'_>, i: usize) -> rusqlite::Result<Uuid> {
    Uuid::parse_str(text(row, i)?).map_err(|e| invalid(i, e))
}

fn json(row: &Row<'_>, i: usize) -> rusqlite::Result<Value> {
    json_as(row, i)
}

fn json_as<T: serde::de::DeserializeOwned>(row: &Row<'_>, i: usize) -> rusqlite::Result<T> {
    serde_json::from_str(text(row, i)?).map_err(|e| invalid(i, e))
}

fn word<T>(row: &Row<'_>, i: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let s = text(row, i)?;
    parse(s).ok_or_else(|| invalid(i, format!("unknown word {s:?}")))
}

/// `decode` of a column that may be NULL.
fn optional<T>(
    row: &Row<'_>,
    i: usize,
    decode: impl FnOnce(&Row<'_>, usize) -> rusqlite::Result<T>,
) -> rusqlite::Result<Option<T>> {
    match row.get_ref(i)? {
        ValueRef::Null => Ok(None),
        _ => decode(row, i).map(Some),
    }
}

fn invalid(i: usize, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of the one row `sql` selects.
    fn bytes_of(conn: &Connection, sql: &str) -> Vec<u8> {
        let mut statement = conn.prepare(sql).unwrap();
        let columns = statement.column_count();
        statement
            .query_row([], |row| {
                let mut bytes = Vec::new();
                row_parts(row, columns, |part| {
                    bytes.extend_from_slice(part);
                    true
                })?;
                assert!(row_is(row, columns, &bytes)?, "a row is itself");
                Ok(bytes)
            })
            .unwrap()
    }

    #[test]
    fn rows_are_the_same_only_when_every_value_and_type_is() {
        let conn = Connection::open_in_memory().unwrap();
        let base = bytes_of(&conn, "SELECT 'ab', 1, NULL, x'00'");
        assert_eq!(base, bytes_of(&conn, "SELECT 'ab', 1, NULL, x'00'"));
        for other in [
            "SELECT 'ab', 2, NULL, x'00'",   // a value
            "SELECT 'ab', '1', NULL, x'00'", // a type: text, not integer
            "SELECT 'ab', 1, '', x'00'",     // empty text is not NULL
            "SELECT 'ab', 1.0, NULL, x'00'", // a real is not an integer
            "SELECT 'a', 'b1', NULL, x'00'", // the same bytes split otherwise
            "SELECT 'ab', 1, NULL, x'0000'", // a longer blob
        ] {
            assert_ne!(base, bytes_of(&conn, other), "{other}");
        }
        // Compared against a row of other bytes, a row is not the same; nor against a prefix
        // of its own bytes or its bytes and more.
        let mut statement = conn.prepare("SELECT 'ab', 1, NULL, x'00'").unwrap();
        statement
            .query_row([], |row| {
                assert!(!row_is(row, 4, &base[..base.len() - 1])?);
                let mut longer = base.clone();
                longer.push(0);
                assert!(!row_is(row, 4, &longer)?);
                assert!(!row_is(row, 4, b"")?);
                Ok(())
            })
            .unwrap();
    }
}
