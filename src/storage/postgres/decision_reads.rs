//! Decisions read by id, in batches. Every await reads its decision when it arrives and again
//! at each wake, and a burst of them (agents reconnecting to a restarted replica, a fleet
//! parking at once) was one pooled connection and one round trip each: ten thousand awaits
//! arriving together on a slow machine queued past the pool's acquire timeout and got 503s.
//! Reads go to a queue instead, like key lookups (key_lookups.rs): a reading task takes
//! everything that arrived while it read the last batch and reads it with one statement
//! (`id = ANY(…)`). Each read still happens after it was asked for, so it never returns a
//! state older than the request. Alone, a read runs at once on the caller's runtime.

use std::collections::HashMap;

use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::rows::DecisionRow;
use crate::domain::Decision;
use crate::storage::StoreError;
use crate::storage::batching::{BatchingThread, InFlight};
use crate::storage::rows::store_error;

/// The most decisions one statement reads.
const MAX_BATCH: usize = 256;

/// Batches read at once: while one is at the database the next one gathers.
pub(super) const READERS: usize = 2;

type Answer = Result<Option<Decision>, StoreError>;

struct Read {
    id: Uuid,
    /// The inbox the decision must belong to, when the reader is limited to one.
    inbox_id: Option<Uuid>,
    done: oneshot::Sender<Answer>,
}

/// The queue of reads and the tasks that read them.
pub(super) struct DecisionReads {
    queue: mpsc::UnboundedSender<Read>,
    pool: sqlx::PgPool,
    /// Reads asked for and not answered yet, whichever way they went.
    in_flight: InFlight,
}

/// The statement, for one id or many; the inbox is checked on each row read.
const BY_IDS: &str = concat!(
    "SELECT ",
    decision_columns!(),
    " FROM decisions WHERE id = ANY($1)"
);

impl DecisionReads {
    /// Adds the reading tasks, on `pool`, to `thread`; they end when the store is dropped.
    pub(super) fn start(pool: sqlx::PgPool, thread: &mut BatchingThread) -> DecisionReads {
        let reader = pool.clone();
        let queue = thread.spawn_batch_readers(READERS, MAX_BATCH, move |batch| {
            read_batch(reader.clone(), batch)
        });
        DecisionReads {
            queue,
            pool,
            in_flight: InFlight::default(),
        }
    }

    /// The decision with this id, if there is one (in `inbox_id`, when given).
    pub(super) async fn decision(&self, inbox_id: Option<Uuid>, id: Uuid) -> Answer {
        let (alone, _counted) = self.in_flight.enter();
        if alone {
            let row = sqlx::query_as::<_, DecisionRow>(BY_IDS)
                .bind([id].as_slice())
                .fetch_optional(&self.pool)
                .await
                .map_err(store_error)?;
            return in_inbox(row, inbox_id);
        }
        let (done, answer) = oneshot::channel();
        self.queue
            .send(Read { id, inbox_id, done })
            .map_err(|_| StoreError::Unavailable("the store is closing".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Other("the decision reader stopped".into()))?
    }
}

/// The row as a decision, unless it belongs to another inbox than the one asked for.
fn in_inbox(row: Option<DecisionRow>, inbox_id: Option<Uuid>) -> Answer {
    match row {
        Some(r) if inbox_id.is_none_or(|inbox| inbox == r.inbox_id.0) => {
            Decision::try_from(r).map(Some)
        }
        _ => Ok(None),
    }
}

/// Reads the batch in one statement and answers each read in it, giving it back empty.
async fn read_batch(pool: sqlx::PgPool, mut batch: Vec<Read>) -> Vec<Read> {
    let mut ids: Vec<Uuid> = batch.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    ids.dedup();
    let found = sqlx::query_as::<_, DecisionRow>(BY_IDS)
        .bind(&ids)
        .fetch_all(&pool)
        .await;
    match found {
        Ok(rows) => {
            let mut by_id: HashMap<Uuid, DecisionRow> =
                rows.into_iter().map(|r| (r.id.0, r)).collect();
            // Reads of one decision come together (many awaits of it, woken by its answer):
            // each but the last gets a copy, decoded from the same row.
            let mut wanted: HashMap<Uuid, usize> = HashMap::with_capacity(ids.len());
            for read in batch.iter() {
                *wanted.entry(read.id).or_default() += 1;
            }
            for read in batch.drain(..) {
                let left = wanted.get_mut(&read.id).map_or(0, |n| {
                    *n -= 1;
                    *n
                });
                let row = if left == 0 {
                    by_id.remove(&read.id)
                } else {
                    by_id.get(&read.id).cloned()
                };
                // A request that went away no longer needs its answer.
                let _ = read.done.send(in_inbox(row, read.inbox_id));
            }
        }
        Err(e) => {
            let e = store_error(e);
            for read in batch.drain(..) {
                let _ = read.done.send(Err(e.for_another()));
            }
        }
    }
    batch
}
