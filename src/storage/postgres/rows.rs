//! The rows the PostgreSQL queries read are the shared ones (`crate::storage::rows`).

pub(super) use crate::storage::rows::{DecisionRow, ExistingRow};
