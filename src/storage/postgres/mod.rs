//! The PostgreSQL store: for production, where several replicas share one database. Each
//! write is one statement where it can be (data-modifying CTEs), so it is one round trip and
//! one transaction. Resolutions `NOTIFY` the channel `sayso_resolved` with the decision's id,
//! which `listen` turns into signals for the waiters of every replica.

/// The `SET` list that expires a pending decision: its default, if any, becomes the outcome,
/// and it is resolved at the moment its time ran out.
macro_rules! expire_set {
    () => {
        "status = 'expired', outcome = default_outcome, \
         outcome_source = CASE WHEN default_outcome IS NULL THEN NULL ELSE 'default' END, \
         resolved_at = expires_at"
    };
}

/// Takes, in a fixed order, the per-inbox lock under which resolution events get their ids,
/// for the inboxes of the rows of `upd`. Held to commit, it makes the ids of one inbox's
/// resolutions visible in increasing order, which `resolutions_since` readers rely on: a
/// bigserial alone can commit 11 before 10.
macro_rules! resolution_locks {
    () => {
        "lk AS (SELECT COUNT(*) AS n FROM ( \
           SELECT pg_advisory_xact_lock(1447, k) FROM ( \
             SELECT DISTINCT hashtext(inbox_id::text) AS k FROM upd ORDER BY k) s) l)"
    };
}

/// Inserts the `expired` events of the rows of `upd` (with the same detail as
/// `rows::expiry_detail`), under `resolution_locks!`.
macro_rules! expired_events {
    () => {
        concat!(
            resolution_locks!(),
            ", ev AS (INSERT INTO decision_events (decision_id, at, kind, detail) \
             SELECT id, expires_at, 'expired', \
             CASE WHEN outcome IS NULL THEN '{}'::jsonb \
             ELSE jsonb_build_object('outcome', outcome, 'outcome_source', 'default') END \
             FROM upd, lk)"
        )
    };
}

mod allowance_uses;
mod allowances;
mod connect;
mod creates;
mod decision_reads;
mod decisions;
mod events;
mod inboxes;
mod key_lookups;
mod limits;
mod listen;
mod notices;
mod outbox;
mod resolves;
mod retention;
mod rows;
mod usage;

use async_trait::async_trait;
use sqlx::postgres::PgPool;

use super::rows::ping_pool;
use super::{SignalSink, Store, StoreError};

/// A store on a PostgreSQL database.
pub struct PgStore {
    pool: PgPool,
    /// Creates go in groups (creates.rs).
    creates: creates::Creates,
    /// Key lookups are read in batches (key_lookups.rs).
    key_lookups: key_lookups::KeyLookups,
    /// Decisions by id are read in batches (decision_reads.rs).
    decision_reads: decision_reads::DecisionReads,
    /// Resolutions and votes go in groups (resolves.rs).
    resolves: resolves::Resolves,
}

#[async_trait]
impl Store for PgStore {
    async fn ping(&self) -> Result<(), StoreError> {
        ping_pool(&self.pool).await
    }

    fn listen(&self, sink: SignalSink) -> Option<tokio::task::JoinHandle<()>> {
        Some(tokio::spawn(listen::run(self.pool.clone(), sink)))
    }
}
