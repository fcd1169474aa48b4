//! Resolutions and votes as both stores' writing tasks hold them (sqlite/resolves.rs,
//! postgres/resolves.rs): owned and ready to bind, so they can wait in a queue, and split
//! into rounds in which each decision is changed once.

use std::collections::HashMap;

use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::rows::{self, to_ms_precision};
use super::{Resolved, StoreError};
use crate::domain::people::AnswerRecord;
use crate::domain::{Decision, EventKind, Resolution, Status};

/// A conditional change to a pending decision: a resolution, or a vote (an answer that
/// counts without resolving it).
pub(super) enum Change {
    Resolve(Resolve),
    Vote(Vote),
}

/// A resolution: the columns it sets, its event, and the moment it is made at.
pub(super) struct Resolve {
    pub decision: Uuid,
    pub status: &'static str,
    pub outcome: Option<Value>,
    pub outcome_source: Option<&'static str>,
    pub custom: bool,
    pub remark: Option<String>,
    pub cancel_reason: Option<&'static str>,
    pub via: Option<&'static str>,
    pub device: Option<Uuid>,
    /// The answer appended to the decision's `answers`, as stored.
    pub answer: Option<Value>,
    pub expect_answers: Option<i64>,
    pub event: EventKind,
    pub detail: Value,
    /// At the stores' millisecond precision.
    pub now: OffsetDateTime,
}

/// A vote: the answer appended while the decision has exactly `expect_answers`, and its
/// `voted` event.
pub(super) struct Vote {
    pub decision: Uuid,
    pub answer: Value,
    pub expect_answers: i64,
    pub detail: Value,
    /// At the stores' millisecond precision.
    pub now: OffsetDateTime,
}

impl Change {
    /// The resolution this change is, if it is one.
    pub(super) fn as_resolve(&self) -> Option<&Resolve> {
        match self {
            Change::Resolve(r) => Some(r),
            Change::Vote(_) => None,
        }
    }

    /// The vote this change is, if it is one.
    pub(super) fn as_vote(&self) -> Option<&Vote> {
        match self {
            Change::Vote(v) => Some(v),
            Change::Resolve(_) => None,
        }
    }

    pub(super) fn resolve(
        decision: Uuid,
        r: &Resolution,
        now: OffsetDateTime,
    ) -> Result<Change, StoreError> {
        // A resolution that can never apply is refused before it is queued.
        if !matches!(
            r.status,
            Status::Answered | Status::Declined | Status::Cancelled
        ) {
            return Err(StoreError::Other(format!(
                "a resolution cannot make a decision {}",
                r.status.as_str()
            )));
        }
        Ok(Change::Resolve(Resolve {
            decision,
            status: r.status.as_str(),
            outcome: r.outcome.clone(),
            outcome_source: r.outcome_source.map(|s| s.as_str()),
            custom: r.custom,
            remark: r.remark.clone(),
            cancel_reason: r.cancel_reason.map(|c| c.as_str()),
            via: r.by.map(|b| b.channel.as_str()),
            device: r.by.and_then(|b| b.device_id),
            answer: r.answer.as_ref().map(rows::answer_json).transpose()?,
            expect_answers: r.expect_answers.map(|n| n as i64),
            event: r.event_kind(),
            detail: rows::resolution_detail(r),
            now: to_ms_precision(now),
        }))
    }

    pub(super) fn vote(
        decision: Uuid,
        expect_answers: usize,
        answer: &AnswerRecord,
        now: OffsetDateTime,
    ) -> Result<Change, StoreError> {
        Ok(Change::Vote(Vote {
            decision,
            answer: rows::answer_json(answer)?,
            expect_answers: expect_answers as i64,
            detail: rows::vote_detail(answer),
            now: to_ms_precision(now),
        }))
    }

    pub(super) fn decision(&self) -> Uuid {
        match self {
            Change::Resolve(r) => r.decision,
            Change::Vote(v) => v.decision,
        }
    }
}

/// What writing a change did, with the row (each store's own) it read back.
pub(super) enum Applied<R> {
    /// It was made: the decision in its new state.
    Made(R),
    /// It was not: for a resolution the decision as it then stood, `None` when there is no
    /// such decision; for a vote, nothing read.
    NotMade(Option<R>),
}

impl<R: TryInto<Decision, Error = StoreError>> Applied<R> {
    /// A resolution's answer, as `Store::resolve` gives it.
    pub(super) fn into_resolved(self) -> Result<Resolved, StoreError> {
        match self {
            Applied::Made(row) => Ok(Resolved::Won(row.try_into()?)),
            Applied::NotMade(Some(row)) => Ok(Resolved::Lost(row.try_into()?)),
            Applied::NotMade(None) => Err(StoreError::NotFound),
        }
    }

    /// A vote's answer, as `Store::add_answer` gives it.
    pub(super) fn into_vote(self) -> Result<Option<Decision>, StoreError> {
        match self {
            Applied::Made(row) => Ok(Some(row.try_into()?)),
            Applied::NotMade(_) => Ok(None),
        }
    }
}

/// The positions of a group's changes (given by their decisions, in arrival order) split
/// into rounds in which each decision appears once: the n-th change to a decision goes in
/// round n, in arrival order within it. Written round after round, the group is the changes
/// written one by one in an order that keeps each decision's changes in arrival order.
pub(super) fn rounds(decisions: impl IntoIterator<Item = Uuid>) -> Vec<Vec<usize>> {
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    let mut seen: HashMap<Uuid, usize> = HashMap::new();
    for (i, decision) in decisions.into_iter().enumerate() {
        let n = seen.entry(decision).or_default();
        if *n == rounds.len() {
            rounds.push(Vec::new());
        }
        rounds[*n].push(i);
        *n += 1;
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_decision_is_in_a_round_once_in_arrival_order() {
        let (a, b, c) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
        assert_eq!(
            rounds([a, b, a, c, a, b]),
            vec![vec![0, 1, 3], vec![2, 5], vec![4]]
        );
        assert_eq!(rounds([a, b, c]), vec![vec![0, 1, 2]]);
        assert!(rounds([]).is_empty());
    }
}
