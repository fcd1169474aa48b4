//! Creates, written in groups. Every create goes to one task that owns the right to write
//! them: what arrived while it was writing the last group goes in together, its decision rows
//! as one multi-row INSERT, in one transaction with whatever else the creates carry (images,
//! notification states, outbox rows); a group of nothing but rows is that one statement alone,
//! which SQLite applies whole or not at all. Each statement is a round trip to the writer
//! connection's thread, and each commit appends the touched pages to the WAL again, so under
//! load a group of N costs one to a few statements and one commit instead of N of each. Alone,
//! a create is written as before: one autocommitted statement when it has nothing but its
//! row. A request is answered only after its group committed. A group that fails leaves
//! nothing behind, and its creates are written again one by one, so that only the one at
//! fault gets an error.

use async_trait::async_trait;
use sqlx::types::Json;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;
use uuid::fmt::Hyphenated;

use super::SqliteStore;
use super::outbox::insert_messages;
use super::rows::{ExistingRow, id};
use crate::domain::outbox::NewMessage;
use crate::domain::spec::Image;
use crate::domain::{Decision, NotificationState};
use crate::storage::batching::BatchingThread;
use crate::storage::rows::{self, millis, store_error};
use crate::storage::{InsertDecision, Inserted, NewDecisions, StoreError};

/// The most creates one group writes: 14 parameters a row keeps one statement well under
/// SQLite's limit of bound parameters.
const MAX_GROUP: usize = 64;

/// The message of the quota trigger's `RAISE` (migrations/sqlite/0004).
const QUOTA_EXCEEDED: &str = "sayso: daily quota exceeded";

/// A create as the writing task needs it: owned, so it can wait in the queue.
struct Prepared {
    decision: Decision,
    /// The spec's JSON text, as stored.
    spec_json: String,
    idempotency: Option<(String, String)>,
    image: Option<Image>,
    notifications: Vec<NotificationState>,
    outbox: Vec<NewMessage>,
}

impl Prepared {
    /// Nothing to write but the decision row (its triggers do the rest).
    fn is_row_only(&self) -> bool {
        self.image.is_none() && self.notifications.is_empty() && self.outbox.is_empty()
    }
}

/// What the INSERT of a new decision did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowInsert {
    New,
    /// Nothing: its idempotency key is taken in the inbox.
    KeyTaken,
    /// Refused by the daily quota (which a repeated idempotency key may also meet first).
    OverQuota,
}

/// A create in the queue, and where to hand it back once written.
struct Queued {
    create: Prepared,
    /// Handed back with the result and the size of the group it was written in.
    done: oneshot::Sender<(Prepared, Result<RowInsert, StoreError>, usize)>,
}

/// The queue of creates and the task that writes them.
pub(super) struct Creates {
    queue: mpsc::UnboundedSender<Queued>,
}

impl Creates {
    /// Adds the writing task, on `writer`, to `thread`; it ends when the store (and so the queue)
    /// is dropped, after writing what was queued.
    pub(super) fn start(writer: SqlitePool, thread: &mut BatchingThread) -> Creates {
        let (queue, mut arrivals) = mpsc::unbounded_channel::<Queued>();
        thread.spawn(async move {
            let mut group = Vec::with_capacity(MAX_GROUP);
            while let Some(first) = arrivals.recv().await {
                group.push(first);
                while group.len() < MAX_GROUP {
                    match arrivals.try_recv() {
                        Ok(next) => group.push(next),
                        Err(_) => break,
                    }
                }
                let creates: Vec<&Prepared> = group.iter().map(|q| &q.create).collect();
                let results = write_group(&writer, &creates).await;
                let size = group.len();
                for (queued, result) in group.drain(..).zip(results) {
                    // A request that went away still had its decision written.
                    let _ = queued.done.send((queued.create, result, size));
                }
            }
        });
        Creates { queue }
    }
}

#[async_trait]
impl NewDecisions for SqliteStore {
    async fn insert_decision(&self, row: InsertDecision<'_>) -> Result<Inserted, StoreError> {
        let decision = rows::pending_decision(&row);
        let create = Prepared {
            spec_json: rows::spec_text(&decision.spec)?,
            decision,
            idempotency: row
                .idempotency
                .map(|i| (i.key.to_string(), i.request_hash.to_string())),
            image: row.new.image.clone(),
            notifications: row.notifications,
            outbox: row.outbox,
        };
        let (done, written) = oneshot::channel();
        self.creates
            .queue
            .send(Queued { create, done })
            .map_err(|_| StoreError::Unavailable("the store is closing".into()))?;
        let (create, inserted, group) = written
            .await
            .map_err(|_| StoreError::Other("the create writer stopped".into()))?;
        tracing::debug!(group, "create written");
        let key = create.idempotency.as_ref().map(|(key, _)| key.as_str());
        match inserted? {
            RowInsert::New => Ok(Inserted::New(create.decision)),
            not_new => not_inserted(self, create.decision.inbox_id, key, not_new).await,
        }
    }
}

/// Writes one group, answering for each create in order.
async fn write_group(
    writer: &SqlitePool,
    group: &[&Prepared],
) -> Vec<Result<RowInsert, StoreError>> {
    match write_together(writer, group).await {
        Ok(results) => results.into_iter().map(Ok).collect(),
        Err(e) if group.len() == 1 => vec![Err(e)],
        // Nothing of the group was written; one by one, only the create at fault fails.
        Err(e) => {
            tracing::debug!(error = %e, "a group failed; its creates go one by one");
            let mut results = Vec::with_capacity(group.len());
            for create in group {
                let alone = write_together(writer, std::slice::from_ref(create)).await;
                results.push(alone.and_then(|one| {
                    one.into_iter()
                        .next()
                        .ok_or_else(|| StoreError::Other("a create was not written".into()))
                }));
            }
            results
        }
    }
}

/// Writes `group` in one statement or one transaction: all of it or, on an error, none.
async fn write_together(
    writer: &SqlitePool,
    group: &[&Prepared],
) -> Result<Vec<RowInsert>, StoreError> {
    if group.iter().all(|c| c.is_row_only()) {
        write_rows(writer, group).await
    } else {
        write_in_one_transaction(writer, group).await
    }
}

/// A group with nothing but decision rows: one autocommitted statement, which SQLite applies
/// whole or not at all, so no transaction is opened around it (a round trip to the writer's
/// thread each for `BEGIN` and `COMMIT`). Only when a row meets the daily quota do the rows
/// go one by one, in a transaction.
async fn write_rows(
    writer: &SqlitePool,
    group: &[&Prepared],
) -> Result<Vec<RowInsert>, StoreError> {
    let mut conn = writer.acquire().await.map_err(store_error)?;
    let inserted = match group {
        [only] => Some(vec![insert_row(&mut conn, only).await?]),
        _ => insert_rows(&mut conn, group).await?,
    };
    drop(conn);
    match inserted {
        Some(results) => Ok(results),
        None => write_in_one_transaction(writer, group).await,
    }
}

async fn write_in_one_transaction(
    writer: &SqlitePool,
    group: &[&Prepared],
) -> Result<Vec<RowInsert>, StoreError> {
    let mut tx = writer
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(store_error)?;
    let results = match group {
        [_, _, ..] => insert_rows(&mut tx, group).await?,
        _ => None,
    };
    let results = match results {
        Some(results) => results,
        None => {
            let mut results = Vec::with_capacity(group.len());
            for create in group {
                results.push(insert_row(&mut tx, create).await?);
            }
            results
        }
    };
    for (create, result) in group.iter().zip(&results) {
        if *result == RowInsert::New {
            insert_extras(&mut tx, create).await?;
        }
    }
    tx.commit().await.map_err(store_error)?;
    Ok(results)
}

/// The group's decision rows in one statement; `None` when a row met the daily quota, which
/// fails the whole statement (and only it: a transaction around it goes on), so that the
/// rows are tried one by one.
///
/// Only a create with an idempotency key can find its row already there; a group without
/// any is all new, and is written without `RETURNING`, which costs SQLite a temporary table
/// a statement.
async fn insert_rows(
    conn: &mut SqliteConnection,
    group: &[&Prepared],
) -> Result<Option<Vec<RowInsert>>, StoreError> {
    let mut insert =
        QueryBuilder::<Sqlite>::new(concat!("INSERT INTO decisions (", insert_columns!(), ") "));
    insert.push_values(group, |mut row, c| {
        let d = &c.decision;
        row.push_bind(id(d.id))
            .push_bind(id(d.inbox_id))
            .push_bind(d.kind().as_str())
            .push_bind(&d.spec.question)
            .push_bind(&d.spec.project)
            .push_bind(c.spec_json.as_str())
            .push_bind(d.spec.default_outcome.as_ref().map(Json))
            .push("'pending'")
            .push("0")
            .push_bind(millis(d.created_at))
            .push_bind(millis(d.expires_at))
            .push_bind(c.idempotency.as_ref().map(|(key, _)| key))
            .push_bind(c.idempotency.as_ref().map(|(_, hash)| hash))
            .push_bind(c.image.is_some());
    });
    insert.push(
        " ON CONFLICT (inbox_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING",
    );
    let keyed = group.iter().any(|c| c.idempotency.is_some());
    let inserted: Result<Vec<Uuid>, _> = if keyed {
        insert.push(" RETURNING id");
        insert
            .build_query_as::<(Hyphenated,)>()
            .fetch_all(&mut *conn)
            .await
            .map(|ids| ids.into_iter().map(|(i,)| i.into_uuid()).collect())
    } else {
        insert.build().execute(&mut *conn).await.and_then(|done| {
            if done.rows_affected() == group.len() as u64 {
                Ok(group.iter().map(|c| c.decision.id).collect())
            } else {
                Err(sqlx::Error::Protocol(format!(
                    "{} of a group of {} new decisions were written",
                    done.rows_affected(),
                    group.len()
                )))
            }
        })
    };
    match inserted {
        Ok(ids) => Ok(Some(
            group
                .iter()
                .map(|c| {
                    if ids.contains(&c.decision.id) {
                        RowInsert::New
                    } else {
                        RowInsert::KeyTaken
                    }
                })
                .collect(),
        )),
        Err(sqlx::Error::Database(db)) if db.message() == QUOTA_EXCEEDED => Ok(None),
        Err(e) => Err(store_error(e)),
    }
}

/// Inserts one decision row; its triggers check the quota, count the create and keep its
/// `created` event.
async fn insert_row(conn: &mut SqliteConnection, c: &Prepared) -> Result<RowInsert, StoreError> {
    let done = sqlx::query(concat!(
        "INSERT INTO decisions (",
        insert_columns!(),
        ") VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?) \
         ON CONFLICT (inbox_id, idempotency_key) WHERE idempotency_key IS NOT NULL \
         DO NOTHING"
    ))
    .bind(id(c.decision.id))
    .bind(id(c.decision.inbox_id))
    .bind(c.decision.kind().as_str())
    .bind(&c.decision.spec.question)
    .bind(&c.decision.spec.project)
    .bind(c.spec_json.as_str())
    .bind(c.decision.spec.default_outcome.as_ref().map(Json))
    .bind(millis(c.decision.created_at))
    .bind(millis(c.decision.expires_at))
    .bind(c.idempotency.as_ref().map(|(key, _)| key))
    .bind(c.idempotency.as_ref().map(|(_, hash)| hash))
    .bind(c.image.is_some())
    .execute(conn)
    .await;
    match done {
        Ok(r) if r.rows_affected() == 0 => Ok(RowInsert::KeyTaken),
        Ok(_) => Ok(RowInsert::New),
        Err(sqlx::Error::Database(db)) if db.message() == QUOTA_EXCEEDED => {
            Ok(RowInsert::OverQuota)
        }
        Err(e) => Err(store_error(e)),
    }
}

/// What a new decision has beside its row: its image, notification states and outbox.
async fn insert_extras(conn: &mut SqliteConnection, c: &Prepared) -> Result<(), StoreError> {
    if let Some(image) = &c.image {
        sqlx::query(
            "INSERT INTO decision_images (decision_id, content_type, bytes) VALUES (?, ?, ?)",
        )
        .bind(id(c.decision.id))
        .bind(image.content_type)
        .bind(&image.bytes)
        .execute(&mut *conn)
        .await
        .map_err(store_error)?;
    }
    for n in &c.notifications {
        sqlx::query(
            "INSERT INTO notifications (decision_id, channel, status, detail, updated_at) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id(c.decision.id))
        .bind(n.channel)
        .bind(n.status)
        .bind(&n.detail)
        .bind(millis(c.decision.created_at))
        .execute(&mut *conn)
        .await
        .map_err(store_error)?;
    }
    insert_messages(conn, c.decision.id, &c.outbox, c.decision.created_at).await
}

/// Why a decision was not inserted: the decision already made under its idempotency key
/// (even when the quota is now used up, a repeat gets it back), else the quota.
async fn not_inserted(
    store: &SqliteStore,
    inbox_id: Uuid,
    idempotency_key: Option<&str>,
    why: RowInsert,
) -> Result<Inserted, StoreError> {
    let existing = match idempotency_key {
        Some(key) => sqlx::query_as::<_, ExistingRow>(concat!(
            "SELECT ",
            decision_columns!(),
            ", request_hash FROM decisions WHERE inbox_id = ? AND idempotency_key = ?"
        ))
        .bind(id(inbox_id))
        .bind(key)
        .fetch_optional(&store.writer)
        .await
        .map_err(store_error)?,
        None => None,
    };
    match (existing, why) {
        (Some(existing), _) => Ok(Inserted::Existing {
            decision: existing.decision.try_into()?,
            request_hash: existing.request_hash.unwrap_or_default(),
        }),
        (None, RowInsert::OverQuota) => Ok(Inserted::QuotaExceeded),
        (None, _) => Err(StoreError::Other(
            "idempotency conflict without a row".into(),
        )),
    }
}
