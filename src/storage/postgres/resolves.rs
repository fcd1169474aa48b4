//! Resolutions, written in groups, as creates are (creates.rs). Every resolution, and every
//! vote that counts without resolving, goes to a queue that a few writing tasks take turns
//! at: what arrived while they wrote the last groups goes in together, as one statement over
//! arrays (the conditional updates, the events, the `resolved` outbox rows and a
//! `pg_notify('sayso_resolved', id)` for each decision resolved) and one commit, instead of a
//! statement and a commit each. Alone (no other change being written), a change is the one
//! statement it always was, written at once on the caller's runtime with no hand-off.
//!
//! The rules are those of one resolution at a time. Each change applies only while its
//! decision is pending and not past its time (and, with `expect_answers`, has that many
//! answers), so the first wins and the rest lose. An `UPDATE … FROM` with two source rows for
//! one decision would apply an arbitrary one, so a group is split into rounds in which each
//! decision appears once (changes.rs), each round its own statement after the one before:
//! a later change to the same decision loses there (or, tallied against a count of answers,
//! compares it as it then is). A statement first locks its decisions' rows in id order, so
//! two groups (of two writers, or two replicas) that share decisions never deadlock; the row
//! each lock returns is the decision as it stands, which a change that lost is answered with.
//! Resolution events get their ids under `resolution_locks!`, as one resolution's do, so an
//! inbox's resolutions are visible in id order. A request is answered only after its
//! statement committed; a statement that fails leaves nothing behind and every request in it
//! gets the error.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;
use time::OffsetDateTime;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::PgStore;
use super::outbox::resolved_fan_out;
use super::rows::DecisionRow;
use crate::domain::people::AnswerRecord;
use crate::domain::{Decision, Resolution};
use crate::storage::batching::{BatchingThread, InFlight};
use crate::storage::changes::{Applied, Change, Resolve, Vote, rounds};
use crate::storage::rows::{self, store_error};
use crate::storage::{Resolutions, Resolved, StoreError};

/// The most changes one group writes.
const MAX_GROUP: usize = 128;

/// Groups written at once, each on a connection of its own, so their commits wait for the
/// WAL's flush side by side.
pub(super) const WRITERS: usize = 2;

type Written = Result<Applied<DecisionRow>, StoreError>;

/// A change in the queue, and where to hand back what it did.
struct Queued {
    change: Change,
    /// Handed back with the size of the group it was written in.
    done: oneshot::Sender<(Written, usize)>,
}

/// The queue of resolutions and votes and the tasks that write them.
pub(super) struct Resolves {
    queue: mpsc::UnboundedSender<Queued>,
    pool: sqlx::PgPool,
    /// Changes asked for and not written yet, whichever way they went.
    in_flight: InFlight,
}

impl Resolves {
    /// Adds the writing tasks, on `pool`, to `thread`; they end when the store (and so the
    /// queue) is dropped, after writing what was queued.
    pub(super) fn start(pool: sqlx::PgPool, thread: &mut BatchingThread) -> Resolves {
        let (queue, arrivals) = mpsc::unbounded_channel::<Queued>();
        let arrivals = Arc::new(tokio::sync::Mutex::new(arrivals));
        for _ in 0..WRITERS {
            let (pool, arrivals) = (pool.clone(), Arc::clone(&arrivals));
            thread.spawn(async move {
                let mut group = Vec::with_capacity(MAX_GROUP);
                loop {
                    {
                        // One writer at a time takes what has arrived; the others write theirs
                        // meanwhile.
                        let mut arrivals = arrivals.lock().await;
                        if arrivals.recv_many(&mut group, MAX_GROUP).await == 0 {
                            return;
                        }
                    }
                    let results = write_group(&pool, &group).await;
                    let size = group.len();
                    for (queued, result) in group.drain(..).zip(results) {
                        // A request that went away still had its change written.
                        let _ = queued.done.send((result, size));
                    }
                }
            });
        }
        Resolves {
            queue,
            pool,
            in_flight: InFlight::default(),
        }
    }

    /// Writes `change`: at once on the caller's runtime when it is alone (no hand-off to wait
    /// for), else in the next group; what it did.
    async fn write(&self, change: Change) -> Written {
        let (alone, _counted) = self.in_flight.enter();
        if alone {
            return write_one(&self.pool, &change).await;
        }
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
impl Resolutions for PgStore {
    /// `Store::resolve`.
    async fn resolve(
        &self,
        id: Uuid,
        resolution: &Resolution,
        now: OffsetDateTime,
    ) -> Result<Resolved, StoreError> {
        let change = Change::resolve(id, resolution, now)?;
        self.resolves.write(change).await?.into_resolved()
    }

    /// `Store::add_answer`.
    async fn add_answer(
        &self,
        id: Uuid,
        expect_answers: usize,
        answer: &AnswerRecord,
        now: OffsetDateTime,
    ) -> Result<Option<Decision>, StoreError> {
        let change = Change::vote(id, expect_answers, answer, now)?;
        self.resolves.write(change).await?.into_vote()
    }
}

/// Writes one group round by round, answering for each change in order: a round of one as
/// the single statement, a larger one as one statement over arrays.
async fn write_group(pool: &sqlx::PgPool, group: &[Queued]) -> Vec<Written> {
    let mut results: Vec<Option<Written>> = group.iter().map(|_| None).collect();
    for round in rounds(group.iter().map(|q| q.change.decision())) {
        if let [only] = round.as_slice() {
            results[*only] = Some(write_one(pool, &group[*only].change).await);
            continue;
        }
        let changes: Vec<&Change> = round.iter().map(|&i| &group[i].change).collect();
        match write_round(pool, &changes).await {
            Ok(applied) => {
                for (&i, a) in round.iter().zip(applied) {
                    results[i] = Some(Ok(a));
                }
            }
            Err(e) => {
                for &i in &round {
                    results[i] = Some(Err(e.for_another()));
                }
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(StoreError::Other("a change was not written".into()))))
        .collect()
}

/// One change, in the one statement it always was; a resolution that lost reads its decision
/// back after.
async fn write_one(pool: &sqlx::PgPool, change: &Change) -> Written {
    match change {
        Change::Resolve(r) => match resolve_one(pool, r).await? {
            Some(won) => Ok(Applied::Made(won)),
            None => Ok(Applied::NotMade(current(pool, r.decision).await?)),
        },
        Change::Vote(v) => Ok(match vote_one(pool, v).await? {
            Some(added) => Applied::Made(added),
            None => Applied::NotMade(None),
        }),
    }
}

async fn resolve_one(pool: &sqlx::PgPool, r: &Resolve) -> Result<Option<DecisionRow>, StoreError> {
    // Under concurrent updates the row lock makes the loser re-check `status`, so exactly
    // one statement updates the row.
    sqlx::query_as::<_, DecisionRow>(concat!(
        "WITH upd AS ( \
           UPDATE decisions SET status = $2, outcome = $3, outcome_source = $4, \
             custom = $5, remark = $6, resolved_at = $7, answered_via = $12, \
             answered_device = $13, cancel_reason = $16, \
             answers = CASE WHEN $14::jsonb IS NULL THEN answers \
                       ELSE answers || jsonb_build_array($14::jsonb) END \
           WHERE id = $1 AND status = 'pending' AND expires_at > $7 \
             AND ($15::bigint IS NULL OR jsonb_array_length(answers) = $15) \
           RETURNING ",
        decision_columns!(),
        "), ",
        resolution_locks!(),
        ", ev AS ( \
           INSERT INTO decision_events (decision_id, at, kind, detail) \
           SELECT id, $7, $8, $9 FROM upd, lk), ",
        resolved_fan_out!("$10", "$7", "$11"),
        " SELECT ",
        decision_columns!(),
        ", pg_notify('sayso_resolved', id::text) IS NULL AS notified FROM upd"
    ))
    .bind(r.decision)
    .bind(r.status)
    .bind(r.outcome.as_ref().map(Json))
    .bind(r.outcome_source)
    .bind(r.custom)
    .bind(&r.remark)
    .bind(r.now)
    .bind(r.event.as_str())
    .bind(Json(&r.detail))
    .bind(Uuid::now_v7())
    .bind(r.now + rows::RESOLVED_GIVE_UP)
    .bind(r.via)
    .bind(r.device)
    .bind(r.answer.as_ref().map(Json))
    .bind(r.expect_answers)
    .bind(r.cancel_reason)
    .fetch_optional(pool)
    .await
    .map_err(store_error)
}

async fn vote_one(pool: &sqlx::PgPool, v: &Vote) -> Result<Option<DecisionRow>, StoreError> {
    // The row lock orders concurrent answers: the second re-reads the row and finds the
    // count changed, so no answer is counted against a stale list.
    sqlx::query_as::<_, DecisionRow>(concat!(
        "WITH upd AS ( \
           UPDATE decisions SET answers = answers || jsonb_build_array($2::jsonb) \
           WHERE id = $1 AND status = 'pending' AND expires_at > $3 \
             AND jsonb_array_length(answers) = $4 \
           RETURNING ",
        decision_columns!(),
        "), ev AS ( \
           INSERT INTO decision_events (decision_id, at, kind, detail) \
           SELECT id, $3, 'voted', $5 FROM upd) \
         SELECT ",
        decision_columns!(),
        " FROM upd"
    ))
    .bind(v.decision)
    .bind(Json(&v.answer))
    .bind(v.now)
    .bind(v.expect_answers)
    .bind(Json(&v.detail))
    .fetch_optional(pool)
    .await
    .map_err(store_error)
}

/// The decision as it now stands, if there is one.
async fn current(pool: &sqlx::PgPool, id: Uuid) -> Result<Option<DecisionRow>, StoreError> {
    sqlx::query_as::<_, DecisionRow>(concat!(
        "SELECT ",
        decision_columns!(),
        " FROM decisions WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(store_error)
}

/// What the round statement returns of each decision it locked.
#[derive(sqlx::FromRow)]
struct RoundRow {
    /// The round's change to it was made (and `row` is its new state).
    made: bool,
    #[sqlx(flatten)]
    row: DecisionRow,
}

/// Changes to distinct decisions in one statement, each written as `write_one` would write
/// it. `locked` takes the decisions' row locks in id order before anything is updated and
/// reads them as they stand (the latest committed row, after waiting for a lock); the
/// updates touch locked rows only. Decisions that do not exist are not returned.
async fn write_round(
    pool: &sqlx::PgPool,
    round: &[&Change],
) -> Result<Vec<Applied<DecisionRow>>, StoreError> {
    let mut cols = Columns::default();
    for change in round {
        cols.push(change);
    }
    let rows: Vec<RoundRow> = sqlx::query_as(concat!(
        "WITH x AS (SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::text[], \
           $5::bool[], $6::text[], $7::timestamptz[], $8::text[], $9::uuid[], $10::jsonb[], \
           $11::int8[], $12::text[], $13::jsonb[], $14::uuid[], $15::timestamptz[], \
           $21::text[]) \
           AS x(r_id, r_status, r_outcome, r_source, r_custom, r_remark, r_at, r_via, \
                r_device, r_answer, r_expect, r_kind, r_detail, r_fan_id, r_give_up, \
                r_cancel)), \
         y AS (SELECT * FROM unnest($16::uuid[], $17::jsonb[], $18::timestamptz[], \
           $19::int8[], $20::jsonb[]) AS y(v_id, v_answer, v_at, v_expect, v_detail)), \
         locked AS MATERIALIZED (SELECT ",
        decision_columns!(),
        " FROM decisions WHERE id = ANY($1::uuid[] || $16::uuid[]) \
           ORDER BY id FOR NO KEY UPDATE), \
         upd AS ( \
           UPDATE decisions d SET status = x.r_status, outcome = x.r_outcome, \
             outcome_source = x.r_source, custom = x.r_custom, remark = x.r_remark, \
             resolved_at = x.r_at, answered_via = x.r_via, answered_device = x.r_device, \
             cancel_reason = x.r_cancel, \
             answers = CASE WHEN x.r_answer IS NULL THEN d.answers \
                       ELSE d.answers || jsonb_build_array(x.r_answer) END \
           FROM x WHERE d.id = x.r_id AND x.r_id IN (SELECT id FROM locked) \
             AND d.status = 'pending' AND d.expires_at > x.r_at \
             AND (x.r_expect IS NULL OR jsonb_array_length(d.answers) = x.r_expect) \
           RETURNING ",
        decision_columns!(),
        ", x.r_at, x.r_kind, x.r_detail, x.r_fan_id, x.r_give_up), \
         vot AS ( \
           UPDATE decisions d SET answers = d.answers || jsonb_build_array(y.v_answer) \
           FROM y WHERE d.id = y.v_id AND y.v_id IN (SELECT id FROM locked) \
             AND d.status = 'pending' AND d.expires_at > y.v_at \
             AND jsonb_array_length(d.answers) = y.v_expect \
           RETURNING ",
        decision_columns!(),
        ", y.v_at, y.v_detail), ",
        resolution_locks!(),
        ", ev AS ( \
           INSERT INTO decision_events (decision_id, at, kind, detail) \
           SELECT id, r_at, r_kind, r_detail FROM upd, lk), \
         vev AS ( \
           INSERT INTO decision_events (decision_id, at, kind, detail) \
           SELECT id, v_at, 'voted', v_detail FROM vot), ",
        resolved_fan_out!("r_fan_id", "r_at", "r_give_up"),
        " SELECT true AS made, ",
        decision_columns!(),
        ", pg_notify('sayso_resolved', id::text) IS NULL AS notified FROM upd \
         UNION ALL SELECT true, ",
        decision_columns!(),
        ", false FROM vot \
         UNION ALL SELECT false, ",
        decision_columns!(),
        ", false FROM locked \
           WHERE id NOT IN (SELECT id FROM upd UNION ALL SELECT id FROM vot)"
    ))
    .bind(cols.r_ids)
    .bind(cols.r_statuses)
    .bind(cols.r_outcomes)
    .bind(cols.r_sources)
    .bind(cols.r_customs)
    .bind(cols.r_remarks)
    .bind(cols.r_at)
    .bind(cols.r_via)
    .bind(cols.r_devices)
    .bind(cols.r_answers)
    .bind(cols.r_expects)
    .bind(cols.r_kinds)
    .bind(cols.r_details)
    .bind(cols.r_fan_ids)
    .bind(cols.r_give_ups)
    .bind(cols.v_ids)
    .bind(cols.v_answers)
    .bind(cols.v_at)
    .bind(cols.v_expects)
    .bind(cols.v_details)
    .bind(cols.r_cancels)
    .fetch_all(pool)
    .await
    .map_err(store_error)?;
    let mut by_id: HashMap<Uuid, RoundRow> = rows.into_iter().map(|r| (r.row.id.0, r)).collect();
    Ok(round
        .iter()
        .map(|c| match (by_id.remove(&c.decision()), c) {
            (Some(r), _) if r.made => Applied::Made(r.row),
            (Some(r), Change::Resolve(_)) => Applied::NotMade(Some(r.row)),
            (None, Change::Resolve(_)) | (_, Change::Vote(_)) => Applied::NotMade(None),
        })
        .collect())
}

/// A round's changes as parallel arrays, one per column: its resolutions (`r_`) and its
/// votes (`v_`).
#[derive(Default)]
struct Columns<'a> {
    r_ids: Vec<Uuid>,
    r_statuses: Vec<&'static str>,
    r_outcomes: Vec<Option<Json<&'a Value>>>,
    r_sources: Vec<Option<&'static str>>,
    r_customs: Vec<bool>,
    r_remarks: Vec<Option<&'a str>>,
    r_at: Vec<OffsetDateTime>,
    r_via: Vec<Option<&'static str>>,
    r_devices: Vec<Option<Uuid>>,
    r_answers: Vec<Option<Json<&'a Value>>>,
    r_expects: Vec<Option<i64>>,
    r_kinds: Vec<&'static str>,
    r_details: Vec<Json<&'a Value>>,
    r_fan_ids: Vec<Uuid>,
    r_give_ups: Vec<OffsetDateTime>,
    r_cancels: Vec<Option<&'static str>>,
    v_ids: Vec<Uuid>,
    v_answers: Vec<Json<&'a Value>>,
    v_at: Vec<OffsetDateTime>,
    v_expects: Vec<i64>,
    v_details: Vec<Json<&'a Value>>,
}

impl<'a> Columns<'a> {
    fn push(&mut self, change: &'a Change) {
        match change {
            Change::Resolve(r) => {
                self.r_ids.push(r.decision);
                self.r_statuses.push(r.status);
                self.r_outcomes.push(r.outcome.as_ref().map(Json));
                self.r_sources.push(r.outcome_source);
                self.r_customs.push(r.custom);
                self.r_remarks.push(r.remark.as_deref());
                self.r_at.push(r.now);
                self.r_via.push(r.via);
                self.r_devices.push(r.device);
                self.r_answers.push(r.answer.as_ref().map(Json));
                self.r_expects.push(r.expect_answers);
                self.r_kinds.push(r.event.as_str());
                self.r_details.push(Json(&r.detail));
                self.r_fan_ids.push(Uuid::now_v7());
                self.r_cancels.push(r.cancel_reason);
                self.r_give_ups.push(r.now + rows::RESOLVED_GIVE_UP);
            }
            Change::Vote(v) => {
                self.v_ids.push(v.decision);
                self.v_answers.push(Json(&v.answer));
                self.v_at.push(v.now);
                self.v_expects.push(v.expect_answers);
                self.v_details.push(Json(&v.detail));
            }
        }
    }
}
