//! A checker for recorded histories of concurrent calls on decisions (DESIGN.md §3: a
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

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use time::OffsetDateTime;

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

/// Checks the history against the facts found after the run; returns every violation found.
/// `facts` has an entry for every decision the history names; `None` means it is gone.
pub fn check(h: &Recorded, facts: &HashMap<String, Option<Facts>>) -> Result<Summary, Vec<String>> {
    let mut errors = Vec::new();
    let mut summary = Summary::default();
    let mut writes: HashMap<&str, Vec<&Write>> = HashMap::new();
    let mut reads: HashMap<&str, Vec<&Read>> = HashMap::new();
    for w in &h.writes {
        writes.entry(&w.decision).or_default().push(w);
    }
    for r in &h.reads {
        reads.entry(&r.decision).or_default().push(r);
    }
    let mut named: Vec<&str> = h.created.iter().map(String::as_str).collect();
    named.extend(writes.keys().copied());
    named.extend(reads.keys().copied());
    named.sort_unstable();
    named.dedup();
    for id in named {
        let ws = writes.get(id).map(Vec::as_slice).unwrap_or_default();
        let rs = reads.get(id).map(Vec::as_slice).unwrap_or_default();
        match facts.get(id) {
            Some(Some(f)) => check_decision(id, ws, rs, f, &mut errors, &mut summary),
            Some(None) => errors.push(format!("{id}: acknowledged, but the service lost it")),
            None => errors.push(format!("{id}: the test gathered no facts about it")),
        }
    }
    if errors.is_empty() {
        Ok(summary)
    } else {
        Err(errors)
    }
}

/// When the resolution took effect, as far as the history tells.
struct Winner {
    /// What it wrote.
    state: State,
    /// No earlier than this: a call's invocation, or `expires_at`.
    earliest: At,
    /// Acknowledged by then: a call's response, `expires_at`; `None` for an unknown call.
    acknowledged: Option<At>,
    what: String,
}

fn check_decision(
    id: &str,
    ws: &[&Write],
    rs: &[&Read],
    f: &Facts,
    errors: &mut Vec<String>,
    summary: &mut Summary,
) {
    let before = errors.len();
    let mut err = |m: String| errors.push(format!("{id}: {m}"));
    summary.decisions += 1;
    summary.writes += ws.len();
    summary.reads += rs.len();
    let resolved = !f.state.is_pending();
    let want_events = u64::from(resolved);
    if f.resolution_events != want_events {
        err(format!(
            "final state {} but {} resolution events (want {want_events})",
            f.state, f.resolution_events
        ));
    }

    for w in ws {
        match &w.outcome {
            Outcome::Won(_) => summary.won += 1,
            Outcome::Conflict => summary.conflicts += 1,
            Outcome::Gone => summary.gone += 1,
            Outcome::Unknown => summary.unknown += 1,
            Outcome::Other(status, body) => {
                err(format!("a {} {:?} got {status}: {body}", w.via, w.intent))
            }
        }
    }
    let won: Vec<&Write> = ws
        .iter()
        .copied()
        .filter(|w| matches!(w.outcome, Outcome::Won(_)))
        .collect();
    if won.len() > 1 {
        err(format!(
            "resolved more than once: {} calls succeeded: {:?}",
            won.len(),
            won.iter().map(|w| (&w.intent, w.via)).collect::<Vec<_>>()
        ));
    }

    let winner = if let Some(w) = won.first() {
        let state = w.intent.state();
        if let Outcome::Won(Some(reported)) = &w.outcome
            && *reported != state
        {
            err(format!(
                "a {} {:?} succeeded reporting {reported}",
                w.via, w.intent
            ));
        }
        if f.state != state {
            err(format!(
                "a {} {:?} succeeded, but the final state is {}",
                w.via, w.intent, f.state
            ));
        }
        if w.invoked >= f.expires_at {
            err(format!(
                "a {} call sent at {} succeeded after expires_at {}",
                w.via, w.invoked, f.expires_at
            ));
        }
        Some(Winner {
            state,
            earliest: w.invoked,
            acknowledged: Some(w.returned),
            what: format!(
                "the {} {:?} acknowledged at {}",
                w.via, w.intent, w.returned
            ),
        })
    } else if f.state.status == "expired" {
        summary.expired += 1;
        Some(Winner {
            state: f.state.clone(),
            earliest: f.expires_at,
            acknowledged: Some(f.expires_at),
            what: format!("expiry at {}", f.expires_at),
        })
    } else if resolved {
        // Only a call whose response was lost can have written it.
        let by = ws
            .iter()
            .filter(|w| w.outcome == Outcome::Unknown && w.intent.state() == f.state)
            .min_by_key(|w| w.invoked);
        match by {
            Some(w) => Some(Winner {
                state: f.state.clone(),
                earliest: w.invoked,
                acknowledged: None,
                what: format!("the unacknowledged {} {:?}", w.via, w.intent),
            }),
            None => {
                err(format!(
                    "final state {} was written by no recorded call",
                    f.state
                ));
                None
            }
        }
    } else {
        None
    };

    // The losers: refused with the code that names the winner, after it could have won.
    for w in ws {
        let expected = match (&winner, &w.outcome) {
            (_, Outcome::Won(_) | Outcome::Unknown | Outcome::Other(..)) => continue,
            (None, _) => {
                err(format!(
                    "a {} {:?} was refused ({:?}) but the decision is still pending",
                    w.via, w.intent, w.outcome
                ));
                continue;
            }
            // A person answering too late hears that the question is gone (410); an agent
            // cancelling it hears that it is already resolved (409), as for any resolution.
            (Some(win), _) if win.state.status == "expired" && w.intent != Intent::Cancel => {
                Outcome::Gone
            }
            (Some(_), _) => Outcome::Conflict,
        };
        let win = winner.as_ref().unwrap();
        if w.outcome != expected {
            err(format!(
                "a {} {:?} got {:?}, but {} won: want {expected:?}",
                w.via, w.intent, w.outcome, win.what
            ));
        } else if w.returned < win.earliest {
            err(format!(
                "a {} {:?} was refused at {}, before {} could have happened (at {})",
                w.via, w.intent, w.returned, win.what, win.earliest
            ));
        }
    }

    // The readers.
    let first_resolved_seen = rs
        .iter()
        .filter(|r| !r.seen.is_pending())
        .map(|r| r.returned)
        .min();
    for r in rs {
        if r.seen.is_pending() {
            if let Some(ack) = winner.as_ref().and_then(|w| w.acknowledged)
                && r.invoked >= ack
            {
                err(format!(
                    "a {} sent at {} saw pending after {}",
                    r.via,
                    r.invoked,
                    winner.as_ref().unwrap().what
                ));
            }
            if let Some(seen) = first_resolved_seen
                && r.invoked >= seen
            {
                err(format!(
                    "a {} sent at {} saw pending after another read saw it resolved at {seen}",
                    r.via, r.invoked
                ));
            }
            continue;
        }
        summary.reads_resolved += 1;
        if r.seen != f.state {
            err(format!(
                "a {} at {} saw {}, but the final state is {}",
                r.via, r.returned, r.seen, f.state
            ));
        } else if let Some(win) = &winner
            && r.returned < win.earliest
        {
            err(format!(
                "a {} returned {} at {}, before {} could have happened (at {})",
                r.via, r.seen, r.returned, win.what, win.earliest
            ));
        }
    }
    if errors.len() > before {
        errors.push(format!("{id}: history: {ws:#?} {rs:#?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use time::Duration;

    const ID: &str = "d1";

    fn t(ms: i64) -> At {
        OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap() + Duration::milliseconds(ms)
    }

    fn write(intent: Intent, invoked: i64, returned: i64, outcome: Outcome) -> Write {
        Write {
            decision: ID.into(),
            intent,
            invoked: t(invoked),
            returned: t(returned),
            outcome,
            via: "api",
        }
    }

    fn read(invoked: i64, returned: i64, seen: State) -> Read {
        Read {
            decision: ID.into(),
            invoked: t(invoked),
            returned: t(returned),
            seen,
            via: "get",
        }
    }

    fn yes() -> Intent {
        Intent::Answer(json!(true))
    }

    fn answered_yes() -> State {
        State::new("answered", json!(true))
    }

    fn pending() -> State {
        State::new("pending", Value::Null)
    }

    fn facts(state: State, events: u64) -> HashMap<String, Option<Facts>> {
        HashMap::from([(
            ID.to_string(),
            Some(Facts {
                expires_at: t(10_000),
                state,
                resolution_events: events,
            }),
        )])
    }

    fn history(writes: Vec<Write>, reads: Vec<Read>) -> Recorded {
        Recorded {
            created: vec![ID.into()],
            writes,
            reads,
        }
    }

    fn fails(h: &Recorded, f: &HashMap<String, Option<Facts>>, needle: &str) {
        match check(h, f) {
            Ok(s) => panic!("a bad history passed: {s:?}"),
            Err(errors) => assert!(
                errors.iter().any(|e| e.contains(needle)),
                "no error mentions {needle:?}: {errors:#?}"
            ),
        }
    }

    /// The good history the bad ones below are variations of.
    fn good() -> Recorded {
        history(
            vec![
                write(yes(), 100, 120, Outcome::Won(Some(answered_yes()))),
                write(Intent::Cancel, 110, 130, Outcome::Conflict),
                write(Intent::Decline, 90, 140, Outcome::Unknown),
            ],
            vec![
                read(50, 105, pending()),
                read(105, 125, answered_yes()),
                read(115, 118, pending()),
                read(130, 131, answered_yes()),
            ],
        )
    }

    #[test]
    fn a_consistent_history_passes() {
        let s = check(&good(), &facts(answered_yes(), 1)).unwrap();
        assert_eq!((s.won, s.conflicts, s.unknown, s.reads), (1, 1, 1, 4));
    }

    #[test]
    fn two_winners_fail() {
        let mut h = good();
        h.writes[1].outcome = Outcome::Won(None);
        fails(&h, &facts(answered_yes(), 1), "resolved more than once");
    }

    #[test]
    fn a_lost_answer_fails() {
        fails(
            &good(),
            &facts(State::new("cancelled", Value::Null), 1),
            "succeeded, but the final state is cancelled",
        );
    }

    #[test]
    fn a_second_resolution_event_fails() {
        fails(&good(), &facts(answered_yes(), 2), "2 resolution events");
    }

    #[test]
    fn a_lost_create_fails() {
        let f = HashMap::from([(ID.to_string(), None)]);
        fails(&good(), &f, "lost it");
    }

    #[test]
    fn a_loser_refused_with_the_wrong_code_or_too_early_fails() {
        let mut h = good();
        h.writes[1].outcome = Outcome::Gone;
        fails(&h, &facts(answered_yes(), 1), "want Conflict");
        let mut h = good();
        h.writes[1].returned = t(95);
        fails(&h, &facts(answered_yes(), 1), "could have happened");
    }

    #[test]
    fn a_read_of_pending_after_the_acknowledged_answer_fails() {
        let mut h = good();
        h.reads.push(read(121, 122, pending()));
        fails(&h, &facts(answered_yes(), 1), "saw pending after the api");
    }

    #[test]
    fn a_read_of_pending_after_another_read_saw_it_resolved_fails() {
        let mut h = good();
        // The winner's response is slow; a read already saw the answer before it arrived.
        h.writes[0].returned = t(200);
        h.reads.push(read(127, 128, pending()));
        fails(
            &h,
            &facts(answered_yes(), 1),
            "another read saw it resolved",
        );
    }

    #[test]
    fn a_read_of_another_resolved_state_or_from_the_future_fails() {
        let mut h = good();
        h.reads
            .push(read(131, 132, State::new("answered", json!(false))));
        fails(&h, &facts(answered_yes(), 1), "but the final state is");
        let mut h = good();
        h.reads.push(read(10, 20, answered_yes()));
        fails(&h, &facts(answered_yes(), 1), "before the api");
    }

    #[test]
    fn a_state_nobody_wrote_fails_and_an_unknown_call_may_have_written_it() {
        let h = history(
            vec![write(yes(), 100, 120, Outcome::Unknown)],
            vec![read(130, 131, answered_yes())],
        );
        check(&h, &facts(answered_yes(), 1)).unwrap();
        // Without the read, the call may as well never have arrived; with it, it did.
        let unread = history(h.writes.clone(), vec![]);
        check(&unread, &facts(pending(), 0)).unwrap();
        fails(&h, &facts(pending(), 0), "but the final state is pending");
        fails(
            &h,
            &facts(State::new("answered", json!(false)), 1),
            "written by no recorded call",
        );
    }

    #[test]
    fn expiry_wins_only_at_its_time_and_losers_get_410() {
        let expired = State::new("expired", Value::Null);
        let h = history(
            vec![write(yes(), 10_001, 10_002, Outcome::Gone)],
            vec![
                read(9_000, 9_500, pending()),
                read(10_000, 10_003, expired.clone()),
            ],
        );
        check(&h, &facts(expired.clone(), 1)).unwrap();
        // An answer accepted at expiry, a 409 where 410 is due, a stale read after it.
        let mut late = h.clone();
        late.writes[0].outcome = Outcome::Won(None);
        fails(&late, &facts(expired.clone(), 1), "after expires_at");
        let mut wrong = h.clone();
        wrong.writes[0].outcome = Outcome::Conflict;
        fails(&wrong, &facts(expired.clone(), 1), "want Gone");
        // A cancel after expiry is refused as already resolved (409), not gone.
        let mut cancelled = h.clone();
        cancelled
            .writes
            .push(write(Intent::Cancel, 10_001, 10_002, Outcome::Conflict));
        check(&cancelled, &facts(expired.clone(), 1)).unwrap();
        cancelled.writes[1].outcome = Outcome::Gone;
        fails(&cancelled, &facts(expired.clone(), 1), "want Conflict");
        let mut stale = h.clone();
        stale.reads.push(read(10_001, 10_004, pending()));
        fails(
            &stale,
            &facts(expired.clone(), 1),
            "saw pending after expiry",
        );
        let mut early = h;
        early.reads.push(read(9_000, 9_999, expired.clone()));
        fails(&early, &facts(expired, 1), "before expiry");
    }

    #[test]
    fn a_refusal_while_still_pending_fails() {
        let h = history(vec![write(yes(), 100, 120, Outcome::Conflict)], vec![]);
        fails(&h, &facts(pending(), 0), "still pending");
    }

    #[test]
    fn a_server_error_fails() {
        let h = history(
            vec![write(yes(), 100, 120, Outcome::Other(500, "boom".into()))],
            vec![],
        );
        fails(&h, &facts(pending(), 0), "got 500");
    }
}
