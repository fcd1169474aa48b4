//! Creates, written in groups. Every create goes to a queue that a few writing tasks take
//! turns at: what arrived while they wrote the last groups goes in together, as one statement
//! over arrays (the decisions, their `created` events, notification states, outbox messages
//! and usage counts) and one commit, instead of a statement and a commit each; the writers'
//! commits wait for their flushes side by side. Alone (no other create being written), a create
//! is the one statement it always was, written at once on the caller's runtime with no
//! hand-off; so is one with an image, in its group. A request is answered only after its group
//! committed. A group that fails leaves nothing behind, and its creates are written again one
//! by one, so that only the one at fault gets an error.
//!
//! An inbox with a daily quota is not counted in a group: its creates come back not written
//! and take the exact path, which counts under the quota's lock (usage.rs).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;
use time::{Date, OffsetDateTime};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::outbox::{MessageArrays, insert_outbox_to, unnest_messages};
use super::rows::ExistingRow;
use super::{PgStore, usage};
use crate::domain::outbox::NewMessage;
use crate::domain::spec::Image;
use crate::domain::{Decision, NotificationState};
use crate::storage::batching::{BatchingThread, InFlight};
use crate::storage::rows::{self, store_error};
use crate::storage::{CREATE_ACTIONS, InsertDecision, Inserted, NewDecisions, StoreError};

/// The most creates one group writes.
const MAX_GROUP: usize = 128;

/// Groups written at once, each on a connection of its own: a commit waits for its WAL to
/// reach the disk, and several waiting together share the flush. Two groups never lock
/// against each other for long: each takes its row locks in one order (usage rows by inbox,
/// day and row; decisions by inbox and idempotency key).
pub(super) const WRITERS: usize = 2;
const _: () = assert!(
    WRITERS <= 8,
    "each writer counts on a usage row of its own, of 8"
);

/// A create as the writing task needs it: owned, so it can wait in the queue.
struct Prepared {
    decision: Decision,
    spec_json: Value,
    idempotency: Option<(String, String)>,
    image: Option<Image>,
    notifications: Vec<NotificationState>,
    outbox: Vec<NewMessage>,
    /// The usage row it counts on: its day, and one of several rows (an inbox without a
    /// quota counts on 8, so its concurrent creates do not queue on one row lock).
    day: Date,
    shard: i32,
}

/// What writing one create did.
#[derive(Debug, Clone, Copy)]
struct Written {
    inserted: bool,
    /// The inbox has a daily quota (so, when called with a charge, nothing was written).
    has_quota: bool,
}

/// A create in the queue, and where to hand it back once written.
struct Queued {
    create: Prepared,
    /// Handed back with the result and the size of the group it was written in.
    done: oneshot::Sender<(Prepared, Result<Written, StoreError>, usize)>,
}

/// The queue of creates and the task that writes them.
pub(super) struct Creates {
    queue: mpsc::UnboundedSender<Queued>,
    pool: sqlx::PgPool,
    /// Creates asked for and not written yet, whichever way they went.
    in_flight: InFlight,
}

impl Creates {
    /// Adds the writing tasks, on `pool`, to `thread`; they end when the store (and so the
    /// queue) is dropped, after writing what was queued.
    pub(super) fn start(pool: sqlx::PgPool, thread: &mut BatchingThread) -> Creates {
        let (queue, arrivals) = mpsc::unbounded_channel::<Queued>();
        let arrivals = Arc::new(tokio::sync::Mutex::new(arrivals));
        for writer in 0..WRITERS {
            let (pool, arrivals) = (pool.clone(), Arc::clone(&arrivals));
            thread.spawn(async move {
                let mut group = Vec::with_capacity(MAX_GROUP);
                loop {
                    {
                        // One writer at a time takes what has arrived; the others write theirs
                        // meanwhile.
                        let mut arrivals = arrivals.lock().await;
                        let Some(first) = arrivals.recv().await else {
                            return;
                        };
                        group.push(first);
                        while group.len() < MAX_GROUP {
                            match arrivals.try_recv() {
                                Ok(next) => group.push(next),
                                Err(_) => break,
                            }
                        }
                    }
                    let results = write_group(&pool, &group, writer as i32).await;
                    let size = group.len();
                    for (queued, result) in group.drain(..).zip(results) {
                        // A request that went away still had its decision written.
                        let _ = queued.done.send((queued.create, result, size));
                    }
                }
            });
        }
        Creates {
            queue,
            pool,
            in_flight: InFlight::default(),
        }
    }

    /// Writes `create`: at once on the caller's runtime when it is alone (no hand-off to wait
    /// for), else in the next group. Hands it back with what writing it did.
    async fn write(
        &self,
        create: Prepared,
    ) -> Result<(Prepared, Result<Written, StoreError>), StoreError> {
        let (alone, _counted) = self.in_flight.enter();
        if alone {
            let written = insert_one(&self.pool, &create, true).await;
            return Ok((create, written));
        }
        let (done, written) = oneshot::channel();
        self.queue
            .send(Queued { create, done })
            .map_err(|_| StoreError::Unavailable("the store is closing".into()))?;
        let (create, written, group) = written
            .await
            .map_err(|_| StoreError::Other("the create writer stopped".into()))?;
        tracing::debug!(group, "create written");
        Ok((create, written))
    }
}

#[async_trait]
impl NewDecisions for PgStore {
    async fn insert_decision(&self, row: InsertDecision<'_>) -> Result<Inserted, StoreError> {
        let decision = rows::pending_decision(&row);
        let create = Prepared {
            spec_json: rows::spec_json(&decision.spec)?,
            day: decision.created_at.to_offset(time::UtcOffset::UTC).date(),
            shard: (decision.id.as_u128() & 7) as i32,
            decision,
            idempotency: row
                .idempotency
                .map(|i| (i.key.to_string(), i.request_hash.to_string())),
            image: row.new.image.clone(),
            notifications: row.notifications,
            outbox: row.outbox,
        };
        let (create, first) = self.creates.write(create).await?;
        let first = first?;
        let key = create.idempotency.as_ref().map(|(key, _)| key.as_str());
        if first.inserted {
            return Ok(Inserted::New(create.decision));
        }
        if first.has_quota {
            let mut tx = self.pool.begin().await.map_err(store_error)?;
            if !usage::charge_with_quota(&mut tx, create.decision.inbox_id, create.day).await? {
                drop(tx);
                return match existing(self, create.decision.inbox_id, key).await? {
                    Some(existing) => Ok(existing),
                    None => Ok(Inserted::QuotaExceeded),
                };
            }
            let again = insert_one(&mut *tx, &create, false).await?;
            if again.inserted {
                tx.commit().await.map_err(store_error)?;
                return Ok(Inserted::New(create.decision));
            }
            // A replay: dropping the transaction takes the charge back.
        }
        existing(self, create.decision.inbox_id, key)
            .await?
            .ok_or_else(|| StoreError::Other("idempotency conflict without a row".into()))
    }
}

/// The decision made earlier under `key` in `inbox`, if any.
async fn existing(
    store: &PgStore,
    inbox: Uuid,
    key: Option<&str>,
) -> Result<Option<Inserted>, StoreError> {
    let Some(key) = key else {
        return Ok(None);
    };
    let Some(existing) = sqlx::query_as::<_, ExistingRow>(concat!(
        "SELECT ",
        decision_columns!(),
        ", request_hash FROM decisions WHERE inbox_id = $1 AND idempotency_key = $2"
    ))
    .bind(inbox)
    .bind(key)
    .fetch_optional(&store.pool)
    .await
    .map_err(store_error)?
    else {
        return Ok(None);
    };
    Ok(Some(Inserted::Existing {
        decision: existing.decision.try_into()?,
        request_hash: existing.request_hash.unwrap_or_default(),
    }))
}

/// Writes one group, answering for each create in order: those with an image one by one,
/// the rest in one statement.
/// A group counts its creates on the usage row `shard` (its writer's own), so two writers
/// never wait for each other's row lock, held until their commits are flushed.
async fn write_group(
    pool: &sqlx::PgPool,
    group: &[Queued],
    shard: i32,
) -> Vec<Result<Written, StoreError>> {
    let (with_image, plain): (Vec<usize>, Vec<usize>) =
        (0..group.len()).partition(|&i| group[i].create.image.is_some());
    let mut results: Vec<Option<Result<Written, StoreError>>> =
        group.iter().map(|_| None).collect();
    for i in with_image {
        results[i] = Some(insert_one(pool, &group[i].create, true).await);
    }
    match plain.as_slice() {
        [] => {}
        [only] => results[*only] = Some(insert_one(pool, &group[*only].create, true).await),
        _ => {
            let creates: Vec<&Prepared> = plain.iter().map(|&i| &group[i].create).collect();
            match insert_many(pool, &creates, shard).await {
                Ok(written) => {
                    for (&i, w) in plain.iter().zip(written) {
                        results[i] = Some(Ok(w));
                    }
                }
                // The statement wrote nothing; one by one, only the create at fault fails.
                Err(e) => {
                    tracing::debug!(error = %e, "a group failed; its creates go one by one");
                    for &i in &plain {
                        results[i] = Some(insert_one(pool, &group[i].create, true).await);
                    }
                }
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(StoreError::Other("a create was not written".into()))))
        .collect()
}

/// One statement: the decision, and only if it was inserted (the idempotency key is new) its
/// image, `created` event, notification states and outbox messages. With `charge` it writes
/// nothing for an inbox that has a quota, and counts the create on its usage row otherwise;
/// without, it inserts whatever the quota and counts nothing (the caller has counted under
/// the quota's lock).
async fn insert_one<'e>(
    ex: impl sqlx::PgExecutor<'e>,
    c: &Prepared,
    charge: bool,
) -> Result<Written, StoreError> {
    let d = &c.decision;
    let channels: Vec<&str> = c.notifications.iter().map(|n| n.channel.as_str()).collect();
    let statuses: Vec<&str> = c.notifications.iter().map(|n| n.status.as_str()).collect();
    let details: Vec<Option<&str>> = c
        .notifications
        .iter()
        .map(|n| n.detail.as_deref())
        .collect();
    let outbox = MessageArrays::new(&c.outbox);
    let (inserted, has_quota): (i64, bool) = sqlx::query_as(concat!(
        "WITH q AS (SELECT daily_quota IS NOT NULL AS has_quota FROM inboxes WHERE id = $2), \
         d AS ( \
           INSERT INTO decisions (",
        insert_columns!(),
        ") SELECT $1, $2, $3, $4, $5, $6, $7, 'pending', false, $8, $9, $10, $11, $12 \
           WHERE NOT $24 OR NOT COALESCE((SELECT has_quota FROM q), false) \
           ON CONFLICT (inbox_id, idempotency_key) WHERE idempotency_key IS NOT NULL \
           DO NOTHING RETURNING id), \
         img AS ( \
           INSERT INTO decision_images (decision_id, content_type, bytes) \
           SELECT id, $13, $14 FROM d WHERE $14::bytea IS NOT NULL), \
         ev AS ( \
           INSERT INTO decision_events (decision_id, at, kind, detail) \
           SELECT id, $8, 'created', '{}'::jsonb FROM d), \
         n AS ( \
           INSERT INTO notifications (decision_id, channel, status, detail, updated_at) \
           SELECT d.id, x.channel, x.status, x.detail, $8 \
           FROM d, unnest($15::text[], $16::text[], $17::text[]) AS x(channel, status, detail)), \
         u AS ( \
           INSERT INTO usage_daily (inbox_id, day, shard, actions, creates) \
           SELECT $2, $25, $26, $27, 1 FROM d WHERE $24 \
           ON CONFLICT (inbox_id, day, shard) DO UPDATE \
           SET actions = usage_daily.actions + EXCLUDED.actions, \
               creates = usage_daily.creates + 1), \
         ob AS (",
        insert_outbox_to!(),
        "SELECT x.id, d.id, x.channel, x.purpose, x.payload, $8, x.not_before, \
             x.give_up_at, x.person FROM d, ",
        unnest_messages!("$18", "$19", "$20", "$21", "$22", "$23", "$28"),
        " ON CONFLICT (decision_id, channel, purpose, person) DO NOTHING) \
         SELECT (SELECT COUNT(*) FROM d), COALESCE((SELECT has_quota FROM q), false)"
    ))
    .bind(d.id)
    .bind(d.inbox_id)
    .bind(d.kind().as_str())
    .bind(&d.spec.question)
    .bind(&d.spec.project)
    .bind(Json(&c.spec_json))
    .bind(d.spec.default_outcome.as_ref().map(Json))
    .bind(d.created_at)
    .bind(d.expires_at)
    .bind(c.idempotency.as_ref().map(|(key, _)| key))
    .bind(c.idempotency.as_ref().map(|(_, hash)| hash))
    .bind(d.has_image)
    .bind(c.image.as_ref().map(|i| i.content_type))
    .bind(c.image.as_ref().map(|i| i.bytes.as_slice()))
    .bind(channels)
    .bind(statuses)
    .bind(details)
    .bind(outbox.ids)
    .bind(outbox.channels)
    .bind(outbox.purposes)
    .bind(outbox.payloads)
    .bind(outbox.not_before)
    .bind(outbox.give_up_at)
    .bind(charge)
    .bind(c.day)
    .bind(c.shard)
    .bind(CREATE_ACTIONS)
    .bind(outbox.persons)
    .fetch_one(ex)
    .await
    .map_err(store_error)?;
    Ok(Written {
        inserted: inserted > 0,
        has_quota,
    })
}

/// Many creates (none with an image) in one statement over parallel arrays, each written
/// as `insert_one` with a charge would write it. The usage rows are counted once per row, in
/// a fixed order.
async fn insert_many(
    pool: &sqlx::PgPool,
    group: &[&Prepared],
    shard: i32,
) -> Result<Vec<Written>, StoreError> {
    let mut cols = Columns::default();
    for c in group {
        cols.push(c, shard);
    }
    let rows: Vec<(Uuid, bool, bool)> = sqlx::query_as(concat!(
        "WITH x AS (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], \
           $5::text[], $6::jsonb[], $7::jsonb[], $8::timestamptz[], $9::timestamptz[], \
           $10::text[], $11::text[], $12::date[], $13::int4[]) \
           AS x(id, inbox_id, kind, question, project, spec, default_outcome, created_at, \
                expires_at, idempotency_key, request_hash, day, shard)), \
         q AS (SELECT id, daily_quota IS NOT NULL AS has_quota FROM inboxes \
               WHERE id IN (SELECT inbox_id FROM x)), \
         d AS ( \
           INSERT INTO decisions (",
        insert_columns!(),
        ") SELECT x.id, x.inbox_id, x.kind, x.question, x.project, x.spec, \
             x.default_outcome, 'pending', false, x.created_at, x.expires_at, \
             x.idempotency_key, x.request_hash, false \
           FROM x WHERE NOT COALESCE((SELECT has_quota FROM q WHERE q.id = x.inbox_id), false) \
           ORDER BY x.inbox_id, x.idempotency_key \
           ON CONFLICT (inbox_id, idempotency_key) WHERE idempotency_key IS NOT NULL \
           DO NOTHING RETURNING id, created_at), \
         ev AS ( \
           INSERT INTO decision_events (decision_id, at, kind, detail) \
           SELECT id, created_at, 'created', '{}'::jsonb FROM d), \
         n AS ( \
           INSERT INTO notifications (decision_id, channel, status, detail, updated_at) \
           SELECT d.id, y.channel, y.status, y.detail, d.created_at \
           FROM d JOIN unnest($14::uuid[], $15::text[], $16::text[], $17::text[]) \
             AS y(decision_id, channel, status, detail) ON y.decision_id = d.id), \
         u AS ( \
           INSERT INTO usage_daily (inbox_id, day, shard, actions, creates) \
           SELECT x.inbox_id, x.day, x.shard, $25 * count(*), count(*) \
           FROM d JOIN x ON x.id = d.id GROUP BY x.inbox_id, x.day, x.shard \
           ORDER BY x.inbox_id, x.day, x.shard \
           ON CONFLICT (inbox_id, day, shard) DO UPDATE \
           SET actions = usage_daily.actions + EXCLUDED.actions, \
               creates = usage_daily.creates + EXCLUDED.creates), \
         ob AS (",
        insert_outbox_to!(),
        "SELECT y.id, d.id, y.channel, y.purpose, y.payload, d.created_at, y.not_before, \
             y.give_up_at, y.person \
           FROM d JOIN unnest($18::uuid[], $19::uuid[], $20::text[], $21::text[], \
             $22::jsonb[], $23::timestamptz[], $24::timestamptz[], $26::text[]) \
             AS y(decision_id, id, channel, purpose, payload, not_before, give_up_at, person) \
             ON y.decision_id = d.id \
           ON CONFLICT (decision_id, channel, purpose, person) DO NOTHING) \
         SELECT x.id, EXISTS (SELECT 1 FROM d WHERE d.id = x.id), \
           COALESCE((SELECT has_quota FROM q WHERE q.id = x.inbox_id), false) FROM x"
    ))
    .bind(cols.ids)
    .bind(cols.inboxes)
    .bind(cols.kinds)
    .bind(cols.questions)
    .bind(cols.projects)
    .bind(cols.specs)
    .bind(cols.defaults)
    .bind(cols.created)
    .bind(cols.expires)
    .bind(cols.keys)
    .bind(cols.hashes)
    .bind(cols.days)
    .bind(cols.shards)
    .bind(cols.n_decisions)
    .bind(cols.n_channels)
    .bind(cols.n_statuses)
    .bind(cols.n_details)
    .bind(cols.m_decisions)
    .bind(cols.m_ids)
    .bind(cols.m_channels)
    .bind(cols.m_purposes)
    .bind(cols.m_payloads)
    .bind(cols.m_not_before)
    .bind(cols.m_give_up_at)
    .bind(CREATE_ACTIONS)
    .bind(cols.m_persons)
    .fetch_all(pool)
    .await
    .map_err(store_error)?;
    group
        .iter()
        .map(|c| {
            rows.iter()
                .find(|(id, _, _)| *id == c.decision.id)
                .map(|&(_, inserted, has_quota)| Written {
                    inserted,
                    has_quota,
                })
                .ok_or_else(|| StoreError::Other("a create of the group was not seen".into()))
        })
        .collect()
}

/// A group's creates as parallel arrays, one per column; notification states and outbox
/// messages flattened with the id of their decision.
#[derive(Default)]
struct Columns<'a> {
    ids: Vec<Uuid>,
    inboxes: Vec<Uuid>,
    kinds: Vec<&'static str>,
    questions: Vec<&'a str>,
    projects: Vec<Option<&'a str>>,
    specs: Vec<Json<&'a Value>>,
    defaults: Vec<Option<Json<&'a Value>>>,
    created: Vec<OffsetDateTime>,
    expires: Vec<OffsetDateTime>,
    keys: Vec<Option<&'a str>>,
    hashes: Vec<Option<&'a str>>,
    days: Vec<Date>,
    shards: Vec<i32>,
    n_decisions: Vec<Uuid>,
    n_channels: Vec<&'static str>,
    n_statuses: Vec<&'static str>,
    n_details: Vec<Option<&'a str>>,
    m_decisions: Vec<Uuid>,
    m_ids: Vec<Uuid>,
    m_channels: Vec<&'a str>,
    m_purposes: Vec<&'a str>,
    m_payloads: Vec<Json<&'a Value>>,
    m_not_before: Vec<OffsetDateTime>,
    m_give_up_at: Vec<OffsetDateTime>,
    m_persons: Vec<String>,
}

impl<'a> Columns<'a> {
    fn push(&mut self, c: &'a Prepared, shard: i32) {
        let d = &c.decision;
        self.ids.push(d.id);
        self.inboxes.push(d.inbox_id);
        self.kinds.push(d.kind().as_str());
        self.questions.push(&d.spec.question);
        self.projects.push(d.spec.project.as_deref());
        self.specs.push(Json(&c.spec_json));
        self.defaults
            .push(d.spec.default_outcome.as_ref().map(Json));
        self.created.push(d.created_at);
        self.expires.push(d.expires_at);
        self.keys
            .push(c.idempotency.as_ref().map(|(k, _)| k.as_str()));
        self.hashes
            .push(c.idempotency.as_ref().map(|(_, h)| h.as_str()));
        self.days.push(c.day);
        self.shards.push(shard);
        for n in &c.notifications {
            self.n_decisions.push(d.id);
            self.n_channels.push(n.channel.as_str());
            self.n_statuses.push(n.status.as_str());
            self.n_details.push(n.detail.as_deref());
        }
        let m = MessageArrays::new(&c.outbox);
        self.m_decisions.extend(c.outbox.iter().map(|_| d.id));
        self.m_ids.extend(m.ids);
        self.m_channels.extend(m.channels);
        self.m_purposes.extend(m.purposes);
        self.m_payloads.extend(m.payloads);
        self.m_not_before.extend(m.not_before);
        self.m_give_up_at.extend(m.give_up_at);
        self.m_persons.extend(m.persons);
    }
}
