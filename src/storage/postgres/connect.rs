//! Connecting to PostgreSQL: a first connection that reports an unreachable server with its
//! cause, the pools (the requests', and the writers' and batch readers' own), the migrations.

use std::time::Duration;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPoolOptions};

use super::super::rows::{migrate_error, pool_state, store_error};
use super::*;
use crate::metrics::PoolState;

/// How long a request waits for a database connection before it is `Unavailable` (503).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

impl PgStore {
    /// Connects to `url` (`postgres://…`) and migrates the database. An unreachable server
    /// is `Unavailable` within a few seconds, here and on every later call.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let options: PgConnectOptions = url.parse().map_err(store_error)?;
        // One connection of its own first, so an unreachable server is reported with its
        // cause (refused, unknown host, starting up) rather than as the pool's timeout.
        match tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&options)).await {
            Ok(Ok(conn)) => {
                let _ = conn.close().await;
            }
            Ok(Err(e)) => return Err(store_error(e)),
            Err(_) => {
                return Err(StoreError::Unavailable(format!(
                    "no answer from the database within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )));
            }
        }
        let pool = PgPoolOptions::new()
            .max_connections(10)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options.clone())
            .await
            .map_err(store_error)?;
        // The create and resolution writers' and the key and decision readers' own
        // connections: a group or a batch never queues for one behind the requests' reads,
        // which would hold every request in it up.
        let writer = PgPoolOptions::new()
            .max_connections(creates::WRITERS as u32)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(options.clone());
        let resolver = PgPoolOptions::new()
            .max_connections(resolves::WRITERS as u32)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(options.clone());
        let key_reader = PgPoolOptions::new()
            .max_connections(key_lookups::READERS as u32)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(options.clone());
        let decision_reader = PgPoolOptions::new()
            .max_connections(decision_reads::READERS as u32)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(options);
        sqlx::migrate!("migrations/postgres")
            .run(&pool)
            .await
            .map_err(migrate_error)?;
        let mut thread = crate::storage::batching::BatchingThread::new("sayso-pg-batches")?;
        let creates = creates::Creates::start(writer, &mut thread);
        let key_lookups = key_lookups::KeyLookups::start(key_reader, &mut thread);
        let decision_reads = decision_reads::DecisionReads::start(decision_reader, &mut thread);
        let resolves = resolves::Resolves::start(resolver, &mut thread);
        thread.start()?;
        Ok(PgStore {
            pool,
            creates,
            key_lookups,
            decision_reads,
            resolves,
        })
    }

    /// The requests' pool; `sql/` reads through it.
    pub(in crate::storage) fn reads(&self) -> &sqlx::PgPool {
        &self.pool
    }

    /// The same pool: PostgreSQL takes writers side by side.
    pub(in crate::storage) fn writes(&self) -> &sqlx::PgPool {
        &self.pool
    }

    /// A transaction on the requests' pool.
    pub(in crate::storage) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, StoreError> {
        self.pool.begin().await.map_err(store_error)
    }

    /// The pools the metrics report (`Gauges`): the requests' one.
    pub(in crate::storage) fn pool_states(&self) -> Vec<PoolState> {
        vec![pool_state("main", &self.pool)]
    }
}
