//! What the metrics read when scraped: pending decisions, the outbox's depth, the pools.

use super::SqliteStore;
use crate::domain::Kind;
use crate::domain::outbox::Route;
use crate::metrics::Snapshot;
use crate::storage::StoreError;
use crate::storage::rows::{pool_state, store_error};

pub(super) async fn snapshot(store: &SqliteStore) -> Result<Snapshot, StoreError> {
    let pending: Vec<(Kind, i64)> = sqlx::query_as(
        "SELECT kind, count(*) FROM decisions WHERE status = 'pending' GROUP BY kind",
    )
    .fetch_all(&store.pool)
    .await
    .map_err(store_error)?;
    let outbox_pending: Vec<(Route, i64)> = sqlx::query_as(
        "SELECT channel, count(*) FROM outbox WHERE status = 'pending' GROUP BY channel",
    )
    .fetch_all(&store.pool)
    .await
    .map_err(store_error)?;
    Ok(Snapshot {
        pending,
        outbox_pending,
        pools: vec![
            pool_state("read", &store.pool),
            pool_state("write", &store.writer),
        ],
    })
}
