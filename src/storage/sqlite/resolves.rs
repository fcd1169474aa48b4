//! Resolutions, written in groups, as creates are (creates.rs). Every resolution, and every
//! vote that counts without resolving, goes to one task that owns the right to write them:
//! what arrived while it was writing the last group goes in together, in one transaction
//! whose conditional updates are one `UPDATE … FROM (VALUES …)` per round and whose events
//! and `resolved` outbox rows are multi-row INSERTs. Each statement is a round trip to the
//! writer connection's thread and each commit appends the touched pages to the WAL again, so
//! under a burst of answers a group of N costs a few statements and one commit instead of N
//! transactions of three or four statements each.
//!
//! The rules are those of one resolution at a time. Each change applies only while its
//! decision is pending and not past its time (and, with `expect_answers`, has that many
//! answers), so the first wins and the rest lose. An `UPDATE … FROM` with two source rows for
//! one decision would apply an arbitrary one, so a group is split into rounds in which each
//! decision appears once (changes.rs); a later change to the same decision goes in a later
//! round of the same transaction, where it loses (or, tallied against a count of answers,
//! compares it as it then is). A change that lost is answered with its decision as it stood
//! after its round: the group is the changes written one at a time, round after round. A
//! request is answered only after its group committed; a group that fails leaves nothing
//! behind and every request in it gets the error.

use std::collections::HashMap;

use async_trait::async_trait;
use sqlx::types::Json;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection, SqlitePool};
use time::OffsetDateTime;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::SqliteStore;
use super::rows::{DecisionRow, id};
use crate::domain::Resolution;
use crate::domain::people::AnswerRecord;
use crate::domain::{Decision, EventKind};
use crate::storage::batching::BatchingThread;
use crate::storage::changes::{Applied, Change, Resolve, Vote, rounds};
use crate::storage::rows::{self, millis, store_error};
use crate::storage::{Resolutions, Resolved, StoreError};

/// The most changes one group writes: 11 parameters a resolution keeps its UPDATE well under
/// SQLite's limit of bound parameters.
const MAX_GROUP: usize = 64;

type Written = Result<Applied<DecisionRow>, StoreError>;

/// A change in the queue, and where to hand back what it did.
struct Queued {
    change: Change,
    /// Handed back with the size of the group it was written in.
    done: oneshot::Sender<(Written, usize)>,
}

/// The queue of resolutions and votes and the task that writes them.
pub(super) struct Resolves {
    queue: mpsc::UnboundedSender<Queued>,
}

impl Resolves {
    /// Adds the writing task, on `writer`, to `thread`; it ends when the store (and so the queue)
    /// is dropped, after writing what was queued.
    pub(super) fn start(writer: SqlitePool, thread: &mut BatchingThread) -> Resolves {
        let (queue, mut arrivals) = mpsc::unbounded_channel::<Queued>();
        thread.spawn(async move {
            let mut group = Vec::with_capacity(MAX_GROUP);
            while arrivals.recv_many(&mut group, MAX_GROUP).await > 0 {
                let changes: Vec<&Change> = group.iter().map(|q| &q.change).collect();
                let results = write_group(&writer, &changes).await;
                let size = group.len();
                for (queued, result) in group.drain(..).zip(results) {
                    // A request that went away still had its change written.
                    let _ = queued.done.send((result, size));
                }
            }
        });
        Resolves { queue }
    }

    /// Writes `change` in the next group; what it did.
    async fn write(&self, change: Change) -> Written {
        let (done, written) = oneshot::channel();
        self.queue
            .send(Queued { change, done })
            .map_err(|_| StoreError::Unavailable("the store is closing".into()))?;
        let (written, group) = written
            .await
            .map_err(|_| StoreError::Other("the resolution writer stopped".into()))?;
        tracing::debug!(group, "resolution written");
        written
    }
}

#[async_trait]
impl Resolutions for SqliteStore {
    /// `Store::resolve`.
    async fn resolve(
        &self,
        decision: Uuid,
        resolution: &Resolution,
        now: OffsetDateTime,
    ) -> Result<Resolved, StoreError> {
        let change = Change::resolve(decision, resolution, now)?;
        self.resolves.write(change).await?.into_resolved()
    }

    /// `Store::add_answer`.
    async fn add_answer(
        &self,
        decision: Uuid,
        expect_answers: usize,
        answer: &AnswerRecord,
        now: OffsetDateTime,
    ) -> Result<Option<Decision>, StoreError> {
        let change = Change::vote(decision, expect_answers, answer, now)?;
        self.resolves.write(change).await?.into_vote()
    }
}

/// Writes one group in one transaction, answering for each change in order.
async fn write_group(writer: &SqlitePool, group: &[&Change]) -> Vec<Written> {
    match write_in_one_transaction(writer, group).await {
        Ok(applied) => applied.into_iter().map(Ok).collect(),
        Err(e) => group.iter().map(|_| Err(e.for_another())).collect(),
    }
}

async fn write_in_one_transaction(
    writer: &SqlitePool,
    group: &[&Change],
) -> Result<Vec<Applied<DecisionRow>>, StoreError> {
    let mut tx = writer
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(store_error)?;
    let mut applied: Vec<Option<Applied<DecisionRow>>> = group.iter().map(|_| None).collect();
    for round in rounds(group.iter().map(|c| c.decision())) {
        let changes: Vec<&Change> = round.iter().map(|&i| group[i]).collect();
        for (i, a) in round.into_iter().zip(write_round(&mut tx, &changes).await?) {
            applied[i] = Some(a);
        }
    }
    tx.commit().await.map_err(store_error)?;
    applied
        .into_iter()
        .map(|a| a.ok_or_else(|| StoreError::Other("a change was not written".into())))
        .collect()
}

/// Writes changes to distinct decisions: the updates, then the events and fan-outs of those
/// made; the decisions of the resolutions that lost are read back as they now stand.
async fn write_round(
    conn: &mut SqliteConnection,
    round: &[&Change],
) -> Result<Vec<Applied<DecisionRow>>, StoreError> {
    let resolves: Vec<&Resolve> = round.iter().filter_map(|c| c.as_resolve()).collect();
    let votes: Vec<&Vote> = round.iter().filter_map(|c| c.as_vote()).collect();
    let mut made: HashMap<Uuid, DecisionRow> = HashMap::new();
    for row in update_resolved(conn, &resolves).await? {
        made.insert(row.id.0, row);
    }
    for row in update_voted(conn, &votes).await? {
        made.insert(row.id.0, row);
    }
    let events: Vec<&Change> = round
        .iter()
        .copied()
        .filter(|c| made.contains_key(&c.decision()))
        .collect();
    insert_events(conn, &events).await?;
    let fan_outs: Vec<&Resolve> = resolves
        .iter()
        .copied()
        .filter(|r| made.contains_key(&r.decision))
        .collect();
    insert_fan_outs(conn, &fan_outs).await?;
    let lost: Vec<Uuid> = resolves
        .iter()
        .map(|r| r.decision)
        .filter(|d| !made.contains_key(d))
        .collect();
    let mut current = current(conn, &lost).await?;
    Ok(round
        .iter()
        .map(|c| match (made.remove(&c.decision()), c) {
            (Some(row), _) => Applied::Made(row),
            (None, Change::Resolve(r)) => Applied::NotMade(current.remove(&r.decision)),
            (None, Change::Vote(_)) => Applied::NotMade(None),
        })
        .collect())
}

/// The resolutions that apply, in one statement; the rows they changed.
async fn update_resolved(
    conn: &mut SqliteConnection,
    resolves: &[&Resolve],
) -> Result<Vec<DecisionRow>, StoreError> {
    if resolves.is_empty() {
        return Ok(Vec::new());
    }
    let mut update = QueryBuilder::<Sqlite>::new(
        "WITH v (decision, new_status, new_outcome, new_source, new_custom, new_remark, at, \
         via, device, answer, expect, cancel_reason) AS (",
    );
    update.push_values(resolves, |mut row, r| {
        row.push_bind(id(r.decision))
            .push_bind(r.status)
            .push_bind(r.outcome.as_ref().map(Json))
            .push_bind(r.outcome_source)
            .push_bind(r.custom)
            .push_bind(&r.remark)
            .push_bind(millis(r.now))
            .push_bind(r.via)
            .push_bind(r.device.map(id))
            .push_bind(r.answer.as_ref().map(Json))
            .push_bind(r.expect_answers)
            .push_bind(r.cancel_reason);
    });
    update.push(
        ") UPDATE decisions SET status = v.new_status, outcome = v.new_outcome, \
         outcome_source = v.new_source, custom = v.new_custom, remark = v.new_remark, \
         resolved_at = v.at, answered_via = v.via, answered_device = v.device, \
         cancel_reason = v.cancel_reason, \
         answers = CASE WHEN v.answer IS NULL THEN decisions.answers \
                   ELSE json_insert(decisions.answers, '$[#]', json(v.answer)) END \
         FROM v WHERE decisions.id = v.decision AND decisions.status = 'pending' \
         AND decisions.expires_at > v.at \
         AND (v.expect IS NULL OR json_array_length(decisions.answers) = v.expect)",
    );
    updated_rows(update, conn).await
}

/// The votes that count, in one statement; the rows they changed.
async fn update_voted(
    conn: &mut SqliteConnection,
    votes: &[&Vote],
) -> Result<Vec<DecisionRow>, StoreError> {
    if votes.is_empty() {
        return Ok(Vec::new());
    }
    let mut update = QueryBuilder::<Sqlite>::new("WITH v (decision, answer, at, expect) AS (");
    update.push_values(votes, |mut row, v| {
        row.push_bind(id(v.decision))
            .push_bind(Json(&v.answer))
            .push_bind(millis(v.now))
            .push_bind(v.expect_answers);
    });
    update.push(
        ") UPDATE decisions SET answers = json_insert(decisions.answers, '$[#]', json(v.answer)) \
         FROM v WHERE decisions.id = v.decision AND decisions.status = 'pending' \
         AND decisions.expires_at > v.at AND json_array_length(decisions.answers) = v.expect",
    );
    updated_rows(update, conn).await
}

/// Runs a built update of decisions; the rows it changed, as they are now.
async fn updated_rows(
    mut update: QueryBuilder<Sqlite>,
    conn: &mut SqliteConnection,
) -> Result<Vec<DecisionRow>, StoreError> {
    update.push(concat!(" RETURNING ", decision_columns!()));
    update
        .build_query_as::<DecisionRow>()
        .fetch_all(&mut *conn)
        .await
        .map_err(store_error)
}

/// The events of the changes made, in the order they came.
async fn insert_events(conn: &mut SqliteConnection, made: &[&Change]) -> Result<(), StoreError> {
    if made.is_empty() {
        return Ok(());
    }
    let mut insert =
        QueryBuilder::<Sqlite>::new("INSERT INTO decision_events (decision_id, at, kind, detail) ");
    insert.push_values(made, |mut row, c| match c {
        Change::Resolve(r) => {
            row.push_bind(id(r.decision))
                .push_bind(millis(r.now))
                .push_bind(r.event.as_str())
                .push_bind(Json(&r.detail));
        }
        Change::Vote(v) => {
            row.push_bind(id(v.decision))
                .push_bind(millis(v.now))
                .push_bind(EventKind::Voted.as_str())
                .push_bind(Json(&v.detail));
        }
    });
    insert
        .build()
        .execute(&mut *conn)
        .await
        .map_err(store_error)?;
    Ok(())
}

/// The `resolved` fan-out of each resolution made (`rows::resolved_fan_out`), as
/// `outbox::insert_messages` writes it.
async fn insert_fan_outs(conn: &mut SqliteConnection, made: &[&Resolve]) -> Result<(), StoreError> {
    if made.is_empty() {
        return Ok(());
    }
    let messages: Vec<_> = made
        .iter()
        .map(|r| (r.decision, rows::resolved_fan_out(r.now), r.now))
        .collect();
    let mut insert = QueryBuilder::<Sqlite>::new(
        "INSERT INTO outbox (id, decision_id, channel, purpose, payload, created_at, \
         next_attempt_at, give_up_at, person) ",
    );
    insert.push_values(&messages, |mut row, (decision, m, now)| {
        row.push_bind(id(Uuid::now_v7()))
            .push_bind(id(*decision))
            .push_bind(m.route)
            .push_bind(m.purpose)
            .push_bind(Json(&m.payload))
            .push_bind(millis(*now))
            .push_bind(millis(m.not_before))
            .push_bind(millis(m.give_up_at))
            .push_bind(rows::person_column(m.person));
    });
    insert.push(" ON CONFLICT (decision_id, channel, purpose, person) DO NOTHING");
    insert
        .build()
        .execute(&mut *conn)
        .await
        .map_err(store_error)?;
    Ok(())
}

/// The decisions with these ids as they now stand, by id.
async fn current(
    conn: &mut SqliteConnection,
    decisions: &[Uuid],
) -> Result<HashMap<Uuid, DecisionRow>, StoreError> {
    if decisions.is_empty() {
        return Ok(HashMap::new());
    }
    let mut select = QueryBuilder::<Sqlite>::new(concat!(
        "SELECT ",
        decision_columns!(),
        " FROM decisions WHERE id IN ("
    ));
    let mut ids = select.separated(", ");
    for d in decisions {
        ids.push_bind(id(*d));
    }
    select.push(")");
    Ok(select
        .build_query_as::<DecisionRow>()
        .fetch_all(&mut *conn)
        .await
        .map_err(store_error)?
        .into_iter()
        .map(|row| (row.id.0, row))
        .collect())
}
