//! A checker for recorded histories of concurrent calls on decisions (docs/API.md: a
//! decision resolves exactly once; the first resolution wins).
//!
//! Clients record every call with the wall-clock moments it was sent (`invoked`) and its
//! response arrived (`returned`); the service runs on the same machine, so one clock orders
//! both. A call whose response never came (the connection broke, the server was killed) is
//! `Unknown`: it may or may not have taken effect, and the checker accepts either. After the
//! run the test reads each decision's final state and counts its resolution events, and
//! [`check`] proves, per decision:
//!
//! - at most one resolving call succeeded, and the final state is what it wrote;
//! - the calls that lost got the documented refusal: `409` when a call won, `410` when
//!   expiry won, and not before the winner could have taken effect;
//! - a final state that no successful call wrote was written by an unknown call that meant
//!   exactly that state, or by expiry (status `expired`, never before `expires_at`);
//! - the store kept exactly one resolution event per resolved decision and none for a
//!   pending one;
//! - every read saw either `pending` or the final state, never another resolved state; it saw
//!   a resolved state only if it ended after the resolution could have happened; it saw
//!   `pending` only if it started before the resolution was acknowledged (the winning call's
//!   response, or `expires_at`), and before any earlier read had already seen it resolved.
//!
//! Decisions several people must agree on (a quorum of Yes, any No a veto) have a checker
//! of their own, [`check_votes`] (`votes.rs`).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use time::OffsetDateTime;

mod check;
#[cfg(test)]
mod tests;
// crash.rs shares this module and checks no votes.
#[allow(dead_code)]
mod votes;

pub use check::check;
#[allow(unused_imports)]
pub use votes::{
    Answer, Ballot, Look, Reply, Vote, VoteFacts, VoteHistory, VoteRecorded, check_votes,
};

/// A moment on the machine's wall clock.
pub type At = OffsetDateTime;

/// A decision's state as a client sees it: its status and outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub status: String,
    pub outcome: Value,
}

impl State {
    pub fn new(status: &str, outcome: Value) -> State {
        State {
            status: status.to_string(),
            outcome,
        }
    }

    /// The state in a Decision (or an answer's result) JSON body.
    pub fn of(body: &Value) -> State {
        State::new(
            body["status"].as_str().unwrap_or("<none>"),
            body["outcome"].clone(),
        )
    }

    pub fn is_pending(&self) -> bool {
        self.status == "pending"
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status, self.outcome)
    }
}

/// What a resolving call asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// An answer whose outcome must be exactly this value.
    Answer(Value),
    Decline,
    Cancel,
}

impl Intent {
    /// The state the decision has when this call wins.
    pub fn state(&self) -> State {
        match self {
            Intent::Answer(v) => State::new("answered", v.clone()),
            Intent::Decline => State::new("declined", Value::Null),
            Intent::Cancel => State::new("cancelled", Value::Null),
        }
    }
}

/// How a resolving call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// `200` (with the state the response reported, when it carried one) or the page's `303`.
    Won(Option<State>),
    /// `409 already_resolved`.
    Conflict,
    /// `410 expired`.
    Gone,
    /// No response: the call may or may not have taken effect.
    Unknown,
    /// Any other status: always a failure of the service.
    Other(u16, String),
}

#[derive(Debug, Clone)]
pub struct Write {
    pub decision: String,
    pub intent: Intent,
    pub invoked: At,
    pub returned: At,
    pub outcome: Outcome,
    /// Which path the call took (`api`, `page`, `cancel`), for the messages.
    pub via: &'static str,
}

/// A read (a get, or an await) that got a response.
#[derive(Debug, Clone)]
pub struct Read {
    pub decision: String,
    pub invoked: At,
    pub returned: At,
    pub seen: State,
    pub via: &'static str,
}

/// What the test found after the run about one decision.
#[derive(Debug, Clone)]
pub struct Facts {
    pub expires_at: At,
    /// The state the service returns now.
    pub state: State,
    /// Resolution events (`answered`, `declined`, `cancelled`, `expired`) in the store.
    pub resolution_events: u64,
}

/// The calls recorded during a run. Cheap to clone; every clone records into the same history.
#[derive(Clone, Default)]
pub struct History {
    inner: Arc<Mutex<Recorded>>,
}

#[derive(Default, Clone)]
pub struct Recorded {
    /// Decisions whose create was acknowledged (`201`).
    pub created: Vec<String>,
    pub writes: Vec<Write>,
    pub reads: Vec<Read>,
}

impl History {
    pub fn created(&self, decision: &str) {
        self.inner
            .lock()
            .unwrap()
            .created
            .push(decision.to_string());
    }

    pub fn write(&self, w: Write) {
        self.inner.lock().unwrap().writes.push(w);
    }

    pub fn read(&self, r: Read) {
        self.inner.lock().unwrap().reads.push(r);
    }

    pub fn snapshot(&self) -> Recorded {
        self.inner.lock().unwrap().clone()
    }
}

/// Counts of what the checker looked at, for the test's report.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    pub decisions: usize,
    pub writes: usize,
    pub won: usize,
    pub conflicts: usize,
    pub gone: usize,
    pub unknown: usize,
    pub reads: usize,
    pub reads_resolved: usize,
    pub expired: usize,
}
