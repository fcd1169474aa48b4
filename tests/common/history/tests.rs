//! The checker on small hand-made histories: what it accepts and what it refuses.

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
