//! The rows the SQLite queries read are the shared ones (`crate::storage::rows`), whose
//! column kinds decode ids from hyphenated text and times from milliseconds.

pub(super) use crate::storage::rows::{DecisionRow, ExistingRow};

/// An id as SQLite stores it, for a bind.
pub(super) fn id(u: uuid::Uuid) -> uuid::fmt::Hyphenated {
    u.hyphenated()
}
