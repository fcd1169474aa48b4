//! Key lookups, read in batches. Every request looks its API key up (a revoked key stops
//! working at once, on every replica), which under load is one round trip per request, as
//! many as the creates themselves. Lookups go to a queue instead; a reading task takes
//! everything that arrived while it read the last batch and reads it with one statement
//! (`key_hash = ANY(…)`). Each lookup is still read from the database after it was asked
//! for, so a key revoked before the request arrived is never found. Alone (nothing else being
//! looked up), a lookup reads at once on the caller's runtime: the one statement it always
//! was, with no hand-off to wait for.

use std::collections::HashMap;

use tokio::sync::{mpsc, oneshot};

use crate::domain::inbox::Inbox;
use crate::storage::StoreError;
use crate::storage::batching::{BatchingThread, InFlight};
use crate::storage::rows::KeyedInboxRow;
use crate::storage::rows::store_error;

/// The most lookups one statement reads.
const MAX_BATCH: usize = 256;

/// Batches read at once: while one is at the database the next one gathers.
pub(super) const READERS: usize = 2;

type Answer = Result<Option<Inbox>, StoreError>;

struct Lookup {
    key_hash: String,
    done: oneshot::Sender<Answer>,
}

/// The queue of lookups and the tasks that read them.
pub(super) struct KeyLookups {
    queue: mpsc::UnboundedSender<Lookup>,
    pool: sqlx::PgPool,
    /// Lookups asked for and not answered yet, whichever way they went.
    in_flight: InFlight,
}

/// The lookup's statement, for one hash or many.
const BY_HASHES: &str = concat!(
    "SELECT k.key_hash, k.id AS key_id, k.urgent AS key_urgent, ",
    inbox_columns!(),
    " FROM api_keys k JOIN inboxes i ON i.id = k.inbox_id \
         WHERE k.key_hash = ANY($1) AND k.revoked_at IS NULL"
);

/// A keyed inbox with the hash it was looked up by, to hand each waiter its own.
#[derive(sqlx::FromRow)]
struct KeyedInbox {
    key_hash: String,
    #[sqlx(flatten)]
    inbox: KeyedInboxRow,
}

impl KeyLookups {
    /// Adds the reading tasks, on `pool`, to `thread`; they end when the store is dropped.
    pub(super) fn start(pool: sqlx::PgPool, thread: &mut BatchingThread) -> KeyLookups {
        let reader = pool.clone();
        let queue = thread.spawn_batch_readers(READERS, MAX_BATCH, move |batch| {
            read_batch(reader.clone(), batch)
        });
        KeyLookups {
            queue,
            pool,
            in_flight: InFlight::default(),
        }
    }

    /// The inbox of the unrevoked key with this hash.
    pub(super) async fn inbox_for_key(&self, key_hash: &str) -> Answer {
        let (alone, _counted) = self.in_flight.enter();
        if alone {
            return sqlx::query_as::<_, KeyedInbox>(BY_HASHES)
                .bind([key_hash].as_slice())
                .fetch_optional(&self.pool)
                .await
                .map(|r| r.map(|k| Inbox::from(k.inbox)))
                .map_err(store_error);
        }
        let (done, answer) = oneshot::channel();
        self.queue
            .send(Lookup {
                key_hash: key_hash.to_string(),
                done,
            })
            .map_err(|_| StoreError::Unavailable("the store is closing".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Other("the key reader stopped".into()))?
    }
}

/// Reads the batch in one statement and answers each lookup in it, giving it back empty.
async fn read_batch(pool: sqlx::PgPool, mut batch: Vec<Lookup>) -> Vec<Lookup> {
    let hashes: Vec<&str> = batch.iter().map(|l| l.key_hash.as_str()).collect();
    let found = sqlx::query_as::<_, KeyedInbox>(BY_HASHES)
        .bind(&hashes)
        .fetch_all(&pool)
        .await;
    match found {
        Ok(rows) => {
            let by_hash: HashMap<String, Inbox> = rows
                .into_iter()
                .map(|r| (r.key_hash, Inbox::from(r.inbox)))
                .collect();
            for lookup in batch.drain(..) {
                // A request that went away no longer needs its answer.
                let _ = lookup.done.send(Ok(by_hash.get(&lookup.key_hash).cloned()));
            }
        }
        Err(e) => {
            let e = store_error(e);
            for lookup in batch.drain(..) {
                let _ = lookup.done.send(Err(e.for_another()));
            }
        }
    }
    batch
}
