//! The checker for decisions several people must agree on: a Yes counts once per person and
//! resolves the decision when `required` people have given one; any No or Decline resolves
//! it at once (a veto); a cancel or expiry resolves it while neither happened.
//!
//! Votes go through each person's own link. A vote's `200` does not say that it resolved
//! the decision, nor that it counted: a person already counted gets `200` with the decision
//! as it is, whatever they said the second time. What the history does prove is that a
//! person whose vote got `200` was counted by the time the response came. After the run
//! the test reads each decision's `answers`, its `required`, its resolution events and its
//! `voted` events, and [`check_votes`] proves, per decision:
//!
//! - `answers` name each person at most once, only people asked, in the order they were
//!   counted, all before `expires_at`; each was made by a call of that person with that
//!   vote (acknowledged or unknown), sent before the person's first `200` came back, and
//!   counted while that call was under way;
//! - no acknowledged vote is lost: a person with a `200` is in `answers`;
//! - the final state is what the tally says: answered `true` exactly when the Yes count
//!   reached `required` with no veto, answered `false` or declined when the last answer is
//!   a veto before that; cancelled, expired or pending only with neither; no answer was
//!   counted after the one that resolved it;
//! - one resolution event for a resolved decision, none for a pending one, and one `voted`
//!   event per answer that did not resolve it, naming its person;
//! - a cancel won only when the final state is cancelled, and before `expires_at`;
//! - the calls that lost got `409` (`410` for a vote when expiry won), and not before the
//!   resolution could have happened;
//! - every response that showed a state (reads, votes, cancels) saw `pending` or the final
//!   state; a resolved one not before the resolution could have happened; `pending` never
//!   once another response had shown it resolved, nor after `expires_at`;
//! - every read saw a prefix of the final `answers` (all of them once resolved), never
//!   fewer than a read that ended before it began, never an answer counted after it
//!   returned, and every person whose vote was acknowledged before it began.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use time::Duration;
use time::format_description::well_known::Rfc3339;

use super::check::{by_decision, facts_of, named, verdict};
use super::{At, Intent, Outcome, State, Write};

/// The service keeps its moments in whole milliseconds (truncated); a moment it records
/// may be this much earlier than the client's clock when the call was sent.
const SLACK: Duration = Duration::milliseconds(1);

/// What a person says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Vote {
    Yes,
    No,
    Decline,
}

impl Vote {
    /// A No or a Decline: it resolves the decision at once.
    pub fn is_veto(self) -> bool {
        self != Vote::Yes
    }

    /// The state a decision resolved by this vote has.
    pub fn state(self) -> State {
        match self {
            Vote::Yes => State::new("answered", Value::Bool(true)),
            Vote::No => State::new("answered", Value::Bool(false)),
            Vote::Decline => State::new("declined", Value::Null),
        }
    }
}

impl fmt::Display for Vote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Vote::Yes => "yes",
            Vote::No => "no",
            Vote::Decline => "decline",
        })
    }
}

/// One entry of a decision's `answers`.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub person: String,
    /// `answer` or `decline`.
    pub action: String,
    pub value: Value,
    /// When it was counted, by the service's clock.
    pub at: At,
}

impl Answer {
    pub fn new(person: &str, vote: Vote, at: At) -> Answer {
        let (action, value) = match vote {
            Vote::Yes => ("answer", Value::Bool(true)),
            Vote::No => ("answer", Value::Bool(false)),
            Vote::Decline => ("decline", Value::Null),
        };
        Answer {
            person: person.into(),
            action: action.into(),
            value,
            at,
        }
    }

    /// The `answers` of a Decision JSON body (empty when it has none).
    pub fn list(body: &Value) -> Vec<Answer> {
        body["answers"]
            .as_array()
            .map(|a| a.iter().map(Answer::of).collect())
            .unwrap_or_default()
    }

    /// One item of `answers`; what is missing shows as `<none>` or the epoch.
    pub fn of(item: &Value) -> Answer {
        Answer {
            person: item["person"].as_str().unwrap_or("<none>").into(),
            action: item["action"].as_str().unwrap_or("<none>").into(),
            value: item["value"].clone(),
            at: item["at"]
                .as_str()
                .and_then(|s| At::parse(s, &Rfc3339).ok())
                .unwrap_or(At::UNIX_EPOCH),
        }
    }

    /// The vote it records; `None` when it is none of the three.
    pub fn vote(&self) -> Option<Vote> {
        match (self.action.as_str(), &self.value) {
            ("answer", Value::Bool(true)) => Some(Vote::Yes),
            ("answer", Value::Bool(false)) => Some(Vote::No),
            ("decline", Value::Null) => Some(Vote::Decline),
            _ => None,
        }
    }

    /// The same person and vote (the moment aside).
    fn same(&self, other: &Answer) -> bool {
        self.person == other.person && self.action == other.action && self.value == other.value
    }
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.vote() {
            Some(v) => write!(f, "{} {v} at {}", self.person, self.at),
            None => write!(
                f,
                "{} {} {} at {}",
                self.person, self.action, self.value, self.at
            ),
        }
    }
}

/// How a vote ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `200` with the state it reported, or the page's `303` (`None`): the person is counted.
    Ok(Option<State>),
    /// `409 already_resolved`.
    Conflict,
    /// `410 expired`.
    Gone,
    /// No response: it may or may not have been counted.
    Unknown,
    /// Any other status: always a failure of the service.
    Other(u16, String),
}

/// One vote: a person's call on their link.
#[derive(Debug, Clone)]
pub struct Ballot {
    pub decision: String,
    pub person: String,
    pub vote: Vote,
    pub invoked: At,
    pub returned: At,
    pub reply: Reply,
    /// Which path it took (`api vote`, `page vote`), for the messages.
    pub via: &'static str,
}

impl Ballot {
    fn acknowledged(&self) -> bool {
        matches!(self.reply, Reply::Ok(_))
    }

    /// Whether this call can have written `a`: the same person and vote, not refused, and
    /// under way when `a` was counted.
    fn can_have_made(&self, a: &Answer) -> bool {
        self.person == a.person
            && Some(self.vote) == a.vote()
            && matches!(self.reply, Reply::Ok(_) | Reply::Unknown)
            && self.invoked - SLACK <= a.at
            && a.at <= self.returned
    }
}

impl fmt::Display for Ballot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}'s {} {} ({} – {}: {:?})",
            self.person, self.via, self.vote, self.invoked, self.returned, self.reply
        )
    }
}

/// A read (a get, or an await) of a decision that needs several people.
#[derive(Debug, Clone)]
pub struct Look {
    pub decision: String,
    pub invoked: At,
    pub returned: At,
    pub seen: State,
    pub answers: Vec<Answer>,
    pub via: &'static str,
}

/// What the test found after the run about one decision.
#[derive(Debug, Clone)]
pub struct VoteFacts {
    pub expires_at: At,
    /// The state the service returns now.
    pub state: State,
    /// The people it asks (`routing.approvers`).
    pub approvers: Vec<String>,
    /// How many must say Yes (`routing.required`).
    pub required: usize,
    pub answers: Vec<Answer>,
    /// Resolution events (`answered`, `declined`, `cancelled`, `expired`) in the store.
    pub resolution_events: u64,
    /// The person of each `voted` event, in the order the trail lists them.
    pub voted: Vec<String>,
}

/// The calls recorded during a run. Cheap to clone; every clone records into the same history.
#[derive(Clone, Default)]
pub struct VoteHistory {
    inner: Arc<Mutex<VoteRecorded>>,
}

#[derive(Default, Clone)]
pub struct VoteRecorded {
    /// Decisions whose create was acknowledged (`201`).
    pub created: Vec<String>,
    pub ballots: Vec<Ballot>,
    /// Cancels through the API (`Intent::Cancel`).
    pub cancels: Vec<Write>,
    pub looks: Vec<Look>,
}

impl VoteHistory {
    pub fn created(&self, decision: &str) {
        let mut h = self.inner.lock().unwrap();
        h.created.push(decision.to_string());
    }

    pub fn ballot(&self, b: Ballot) {
        self.inner.lock().unwrap().ballots.push(b);
    }

    pub fn cancel(&self, w: Write) {
        self.inner.lock().unwrap().cancels.push(w);
    }

    pub fn look(&self, l: Look) {
        self.inner.lock().unwrap().looks.push(l);
    }

    pub fn snapshot(&self) -> VoteRecorded {
        self.inner.lock().unwrap().clone()
    }
}

/// Counts of what the checker looked at, for the test's report.
#[derive(Debug, Default, Clone)]
pub struct VoteSummary {
    pub decisions: usize,
    pub ballots: usize,
    /// Votes acknowledged while the decision stayed pending (`200` pending, or `303`).
    pub counted: usize,
    /// Votes acknowledged with a resolved state.
    pub resolving: usize,
    /// Calls of a person who had called on the same decision before.
    pub repeated: usize,
    pub conflicts: usize,
    pub gone: usize,
    pub unknown: usize,
    pub cancels: usize,
    pub cancels_won: usize,
    pub reads: usize,
    pub reads_resolved: usize,
    /// Answers in the decisions' final `answers`.
    pub answers: usize,
    /// Final states: answered `true` by a quorum, resolved by a No or a Decline, cancelled,
    /// expired (and of those, expired with some answers counted).
    pub quorum: usize,
    pub vetoed: usize,
    pub cancelled: usize,
    pub expired: usize,
    pub expired_with_answers: usize,
}

/// Checks the history against the facts found after the run; returns every violation found.
/// `facts` has an entry for every decision the history names; `None` means it is gone.
pub fn check_votes(
    h: &VoteRecorded,
    facts: &HashMap<String, Option<VoteFacts>>,
) -> Result<VoteSummary, Vec<String>> {
    let mut errors = Vec::new();
    let mut summary = VoteSummary::default();
    let ballots = by_decision(&h.ballots, |b| &b.decision);
    let cancels = by_decision(&h.cancels, |c| &c.decision);
    let looks = by_decision(&h.looks, |l| &l.decision);
    let called = ballots.keys().chain(cancels.keys()).chain(looks.keys());
    for id in named(&h.created, called.copied()) {
        let calls = Calls {
            ballots: ballots.get(id).map(Vec::as_slice).unwrap_or_default(),
            cancels: cancels.get(id).map(Vec::as_slice).unwrap_or_default(),
            looks: looks.get(id).map(Vec::as_slice).unwrap_or_default(),
        };
        if let Some(f) = facts_of(facts, id, &mut errors) {
            let found = check_decision(&calls, f, &mut summary);
            if !found.is_empty() {
                errors.extend(found.into_iter().map(|e| format!("{id}: {e}")));
                errors.push(format!("{id}: facts: {f:#?}\nhistory: {calls:#?}"));
            }
        }
    }
    verdict(summary, errors)
}

/// One decision's recorded calls.
#[derive(Debug)]
struct Calls<'a> {
    ballots: &'a [&'a Ballot],
    cancels: &'a [&'a Write],
    looks: &'a [&'a Look],
}

/// What resolved the decision, and the earliest it can have happened.
struct Winner {
    earliest: At,
    what: String,
}

/// A response that showed the decision's state: `None` for a refusal, which shows only
/// that it is resolved.
struct Seen<'a> {
    invoked: At,
    returned: At,
    state: Option<&'a State>,
    what: String,
}

fn check_decision(c: &Calls, f: &VoteFacts, summary: &mut VoteSummary) -> Vec<String> {
    let mut e = Vec::new();
    count(c, f, summary);
    for b in c.ballots {
        if let Reply::Other(status, body) = &b.reply {
            e.push(format!("{b} got {status}: {body}"));
        }
    }
    for w in c.cancels {
        if let Outcome::Other(status, body) = &w.outcome {
            e.push(format!("a cancel got {status}: {body}"));
        }
    }

    let resolver = check_tally(f, &mut e);
    let resolved = !f.state.is_pending();
    if f.resolution_events != u64::from(resolved) {
        e.push(format!(
            "final state {} but {} resolution events (want {})",
            f.state,
            f.resolution_events,
            u64::from(resolved)
        ));
    }
    // Every answer but the one that resolved the decision is a `voted` event.
    let votes = &f.answers[..f.answers.len() - usize::from(resolver.is_some())];
    let mut want: Vec<&str> = votes.iter().map(|a| a.person.as_str()).collect();
    let mut got: Vec<&str> = f.voted.iter().map(String::as_str).collect();
    want.sort_unstable();
    got.sort_unstable();
    if want != got {
        e.push(format!(
            "{} voted events naming {got:?}, but the answers that did not resolve it name {want:?}",
            got.len()
        ));
    }

    let first_ok = check_people(c, f, &mut e);
    let winner = find_winner(c, f, resolver, &mut e);
    check_losers(c, f, winner.as_ref(), &mut e);
    check_seen(c, f, winner.as_ref(), &mut e);
    check_looks(c, f, &first_ok, &mut e);
    e
}

fn count(c: &Calls, f: &VoteFacts, summary: &mut VoteSummary) {
    summary.decisions += 1;
    summary.ballots += c.ballots.len();
    summary.cancels += c.cancels.len();
    summary.reads += c.looks.len();
    summary.reads_resolved += c.looks.iter().filter(|l| !l.seen.is_pending()).count();
    summary.answers += f.answers.len();
    let mut callers = HashSet::new();
    for b in c.ballots {
        if !callers.insert(&b.person) {
            summary.repeated += 1;
        }
        match &b.reply {
            Reply::Ok(Some(s)) if !s.is_pending() => summary.resolving += 1,
            Reply::Ok(_) => summary.counted += 1,
            Reply::Conflict => summary.conflicts += 1,
            Reply::Gone => summary.gone += 1,
            Reply::Unknown => summary.unknown += 1,
            Reply::Other(..) => {}
        }
    }
    for w in c.cancels {
        match w.outcome {
            Outcome::Won(_) => summary.cancels_won += 1,
            Outcome::Conflict => summary.conflicts += 1,
            Outcome::Gone => summary.gone += 1,
            Outcome::Unknown => summary.unknown += 1,
            Outcome::Other(..) => {}
        }
    }
    match f.state.status.as_str() {
        "answered" if f.state.outcome == Value::Bool(true) => summary.quorum += 1,
        "answered" | "declined" => summary.vetoed += 1,
        "cancelled" => summary.cancelled += 1,
        "expired" => {
            summary.expired += 1;
            if !f.answers.is_empty() {
                summary.expired_with_answers += 1;
            }
        }
        _ => {}
    }
}

/// The answers by themselves, and the state they call for. Returns the answer that
/// resolved the decision by the rule, if one did.
fn check_tally<'a>(f: &'a VoteFacts, e: &mut Vec<String>) -> Option<&'a Answer> {
    let mut named = HashSet::new();
    let mut yes = 0;
    let mut resolver: Option<(usize, &Answer)> = None;
    for (i, a) in f.answers.iter().enumerate() {
        if !f.approvers.contains(&a.person) {
            e.push(format!(
                "answers name {}, who was not asked ({:?})",
                a.person, f.approvers
            ));
        }
        if !named.insert(&a.person) {
            e.push(format!("answers name {} twice", a.person));
        }
        if a.at >= f.expires_at {
            e.push(format!(
                "{a} was counted at or after expires_at {}",
                f.expires_at
            ));
        }
        if i > 0 && a.at < f.answers[i - 1].at {
            e.push(format!(
                "answers out of order: {} before {a}",
                f.answers[i - 1]
            ));
        }
        if let Some((k, _)) = resolver {
            e.push(format!(
                "{a} was counted after answer {k} had resolved the decision"
            ));
        }
        let Some(vote) = a.vote() else {
            e.push(format!("answer {i} ({a}) is neither yes, no nor decline"));
            continue;
        };
        yes += usize::from(vote == Vote::Yes);
        if resolver.is_none() && (vote.is_veto() || yes >= f.required) {
            resolver = Some((i, a));
        }
    }
    let tally = || {
        let list: Vec<String> = f.answers.iter().map(ToString::to_string).collect();
        format!("[{}] with {} required", list.join(", "), f.required)
    };
    match resolver {
        Some((_, a)) => {
            let want = a.vote().unwrap().state();
            if f.state != want {
                e.push(format!(
                    "answers {} call for {want}, but the final state is {}",
                    tally(),
                    f.state
                ));
            }
        }
        None if !matches!(f.state.status.as_str(), "pending" | "cancelled" | "expired") => {
            e.push(format!(
                "final state {}, but answers {} hold neither a quorum of yes nor a veto",
                f.state,
                tally()
            ));
        }
        None => {}
    }
    resolver.map(|(_, a)| a)
}

/// Each person's calls against the answers. Returns when each person's first vote was
/// acknowledged: they are counted from then on.
fn check_people<'a>(c: &Calls<'a>, f: &VoteFacts, e: &mut Vec<String>) -> HashMap<&'a str, At> {
    let mut first_ok: HashMap<&str, At> = HashMap::new();
    for b in c.ballots.iter().filter(|b| b.acknowledged()) {
        let t = first_ok.entry(&b.person).or_insert(b.returned);
        *t = (*t).min(b.returned);
    }
    for (person, at) in &first_ok {
        if !f.answers.iter().any(|a| a.person == *person) {
            e.push(format!(
                "{person}'s vote was acknowledged at {at}, but the answers do not name them"
            ));
        }
    }
    for a in &f.answers {
        // Once the person's first 200 came back they were counted: a later call of theirs
        // only found them counted.
        let made = c.ballots.iter().any(|b| {
            b.can_have_made(a)
                && first_ok
                    .get(a.person.as_str())
                    .is_none_or(|t| b.invoked <= *t)
        });
        if !made {
            let theirs: Vec<String> = c
                .ballots
                .iter()
                .filter(|b| b.person == a.person)
                .map(ToString::to_string)
                .collect();
            e.push(format!(
                "the answer {a} was made by no call that could have: {theirs:#?}"
            ));
        }
    }
    first_ok
}

fn find_winner(
    c: &Calls,
    f: &VoteFacts,
    resolver: Option<&Answer>,
    e: &mut Vec<String>,
) -> Option<Winner> {
    let won: Vec<&Write> = c
        .cancels
        .iter()
        .copied()
        .filter(|w| matches!(w.outcome, Outcome::Won(_)))
        .collect();
    if won.len() > 1 {
        e.push(format!("cancelled {} times", won.len()));
    }
    for w in &won {
        if f.state.status != "cancelled" {
            e.push(format!(
                "a cancel succeeded at {}, but the final state is {}",
                w.returned, f.state
            ));
        }
        if w.invoked >= f.expires_at {
            e.push(format!(
                "a cancel sent at {} succeeded after expires_at {}",
                w.invoked, f.expires_at
            ));
        }
        if let Outcome::Won(Some(s)) = &w.outcome
            && *s != Intent::Cancel.state()
        {
            e.push(format!("a cancel succeeded reporting {s}"));
        }
    }
    match f.state.status.as_str() {
        "pending" => None,
        "expired" => Some(Winner {
            earliest: f.expires_at,
            what: format!("expiry at {}", f.expires_at),
        }),
        "cancelled" => {
            let by = won.first().copied().or_else(|| {
                c.cancels
                    .iter()
                    .copied()
                    .filter(|w| w.outcome == Outcome::Unknown)
                    .min_by_key(|w| w.invoked)
            });
            match by {
                Some(w) => Some(Winner {
                    earliest: w.invoked,
                    what: format!("the cancel sent at {}", w.invoked),
                }),
                None => {
                    e.push("cancelled by no recorded call".into());
                    None
                }
            }
        }
        // Its answer was counted at `at`, and the resolution written after that.
        _ => resolver.map(|a| Winner {
            earliest: a.at - SLACK,
            what: format!("the answer {a}"),
        }),
    }
}

/// The refused calls: refused with the code that names the winner, after it could have won.
fn check_losers(c: &Calls, f: &VoteFacts, winner: Option<&Winner>, e: &mut Vec<String>) {
    let expired = f.state.status == "expired";
    let refused = c
        .ballots
        .iter()
        .filter_map(|b| {
            let gone = match b.reply {
                Reply::Conflict => false,
                Reply::Gone => true,
                _ => return None,
            };
            Some((b.to_string(), b.returned, gone, expired))
        })
        .chain(c.cancels.iter().filter_map(|w| {
            let gone = match w.outcome {
                Outcome::Conflict => false,
                Outcome::Gone => true,
                _ => return None,
            };
            // An agent cancelling hears that it is already resolved, also after expiry.
            Some((
                format!("a cancel ({} – {})", w.invoked, w.returned),
                w.returned,
                gone,
                false,
            ))
        }));
    for (what, returned, gone, want_gone) in refused {
        let Some(win) = winner else {
            if f.state.is_pending() {
                e.push(format!(
                    "{what} was refused but the decision is still pending"
                ));
            }
            continue;
        };
        if gone != want_gone {
            e.push(format!(
                "{what} got {}, but {} won: want {}",
                if gone { 410 } else { 409 },
                win.what,
                if want_gone { 410 } else { 409 }
            ));
        } else if returned < win.earliest {
            e.push(format!(
                "{what} was refused before {} could have happened (at {})",
                win.what, win.earliest
            ));
        }
    }
}

/// Every response that showed the state: pending or the final state, in an order the
/// resolution allows.
fn check_seen(c: &Calls, f: &VoteFacts, winner: Option<&Winner>, e: &mut Vec<String>) {
    let mut seen: Vec<Seen> = Vec::new();
    for l in c.looks {
        seen.push(Seen {
            invoked: l.invoked,
            returned: l.returned,
            state: Some(&l.seen),
            what: format!("a {} ({} – {})", l.via, l.invoked, l.returned),
        });
    }
    for b in c.ballots {
        let state = match &b.reply {
            Reply::Ok(Some(s)) => Some(s),
            Reply::Conflict | Reply::Gone => None,
            _ => continue,
        };
        seen.push(Seen {
            invoked: b.invoked,
            returned: b.returned,
            state,
            what: b.to_string(),
        });
    }
    for w in c.cancels {
        let state = match &w.outcome {
            Outcome::Won(Some(s)) => Some(s),
            Outcome::Conflict | Outcome::Gone => None,
            _ => continue,
        };
        seen.push(Seen {
            invoked: w.invoked,
            returned: w.returned,
            state,
            what: format!("a cancel ({} – {})", w.invoked, w.returned),
        });
    }
    let is_pending = |s: &Seen| s.state.is_some_and(State::is_pending);
    let first_resolved = seen
        .iter()
        .filter(|s| !is_pending(s))
        .min_by_key(|s| s.returned);
    for s in &seen {
        if is_pending(s) {
            if s.invoked >= f.expires_at {
                e.push(format!(
                    "{} saw pending after expires_at {}",
                    s.what, f.expires_at
                ));
            }
            if let Some(r) = first_resolved
                && s.invoked >= r.returned
            {
                e.push(format!(
                    "{} saw pending after {} saw it resolved",
                    s.what, r.what
                ));
            }
            continue;
        }
        if let Some(state) = s.state
            && *state != f.state
        {
            e.push(format!(
                "{} saw {state}, but the final state is {}",
                s.what, f.state
            ));
        }
        if let Some(win) = winner
            && s.returned < win.earliest
        {
            e.push(format!(
                "{} saw it resolved before {} could have happened (at {})",
                s.what, win.what, win.earliest
            ));
        }
    }
}

/// The answers each read saw: a prefix of the final ones that only grows.
fn check_looks(c: &Calls, f: &VoteFacts, first_ok: &HashMap<&str, At>, e: &mut Vec<String>) {
    let list = |answers: &[Answer]| {
        answers
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    for l in c.looks {
        let what = format!("a {} ({} – {})", l.via, l.invoked, l.returned);
        let prefix = l.answers.len() <= f.answers.len()
            && l.answers.iter().zip(&f.answers).all(|(a, b)| a.same(b));
        if !prefix {
            e.push(format!(
                "{what} saw answers [{}], not a prefix of the final [{}]",
                list(&l.answers),
                list(&f.answers)
            ));
        } else if !l.seen.is_pending() && l.answers.len() != f.answers.len() {
            e.push(format!(
                "{what} saw it {} with answers [{}], but the final ones are [{}]",
                l.seen,
                list(&l.answers),
                list(&f.answers)
            ));
        }
        for a in &l.answers {
            if a.at > l.returned {
                e.push(format!("{what} saw {a} before it was counted"));
            }
        }
        for (person, at) in first_ok {
            if *at < l.invoked && !l.answers.iter().any(|a| a.person == *person) {
                e.push(format!(
                    "{what} does not list {person}, whose vote was acknowledged at {at}"
                ));
            }
        }
        for earlier in c.looks {
            if earlier.returned < l.invoked && earlier.answers.len() > l.answers.len() {
                e.push(format!(
                    "{what} saw {} answers, fewer than the {} a read that ended at {} saw",
                    l.answers.len(),
                    earlier.answers.len(),
                    earlier.returned
                ));
            }
        }
    }
}
