//! What the metrics read when scraped: pending decisions, the outbox's depth, the pools.

use async_trait::async_trait;

use crate::domain::Kind;
use crate::domain::outbox::Route;
use crate::metrics::Snapshot;
use crate::storage::rows::store_error;
use crate::storage::{Gauges, StoreError};

for_both_stores! {
    #[async_trait]
    impl Gauges for Backend {
        async fn metrics_snapshot(&self) -> Result<Snapshot, StoreError> {
            let pending: Vec<(Kind, i64)> = sqlx::query_as(
                "SELECT kind, count(*) FROM decisions WHERE status = 'pending' GROUP BY kind",
            )
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?;
            let outbox_pending: Vec<(Route, i64)> = sqlx::query_as(
                "SELECT channel, count(*) FROM outbox WHERE status = 'pending' GROUP BY channel",
            )
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?;
            Ok(Snapshot {
                pending,
                outbox_pending,
                pools: self.pool_states(),
            })
        }
    }
}
