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

/// The votes checker (`check_votes`) on small hand-made histories of a decision that asks
/// p0..p3 and needs two of them to say yes.
mod agreement {
    use super::super::{Answer, Ballot, Look, Reply, Vote, VoteFacts, VoteRecorded, check_votes};
    use super::*;

    fn ballot(person: &str, vote: Vote, invoked: i64, returned: i64, reply: Reply) -> Ballot {
        Ballot {
            decision: ID.into(),
            person: person.into(),
            vote,
            invoked: t(invoked),
            returned: t(returned),
            reply,
            via: "api vote",
        }
    }

    fn answer(person: &str, vote: Vote, at: i64) -> Answer {
        Answer::new(person, vote, t(at))
    }

    fn look(invoked: i64, returned: i64, seen: State, answers: Vec<Answer>) -> Look {
        Look {
            decision: ID.into(),
            invoked: t(invoked),
            returned: t(returned),
            seen,
            answers,
            via: "get",
        }
    }

    fn ok_pending() -> Reply {
        Reply::Ok(Some(pending()))
    }

    fn cancel(invoked: i64, returned: i64, outcome: Outcome) -> Write {
        write(Intent::Cancel, invoked, returned, outcome)
    }

    /// What the test finds after the run; `voted` names the answers that did not resolve it.
    fn found(state: State, answers: Vec<Answer>, events: u64, voted: &[&str]) -> VoteFacts {
        VoteFacts {
            expires_at: t(10_000),
            state,
            approvers: ["p0", "p1", "p2", "p3"].map(String::from).to_vec(),
            required: 2,
            answers,
            resolution_events: events,
            voted: voted.iter().map(|p| p.to_string()).collect(),
        }
    }

    fn of(f: VoteFacts) -> HashMap<String, Option<VoteFacts>> {
        HashMap::from([(ID.to_string(), Some(f))])
    }

    fn rejects(h: &VoteRecorded, f: VoteFacts, needle: &str) {
        match check_votes(h, &of(f)) {
            Ok(s) => panic!("a bad history passed: {s:?}"),
            Err(errors) => assert!(
                errors.iter().any(|e| e.contains(needle)),
                "no error mentions {needle:?}: {errors:#?}"
            ),
        }
    }

    /// p0 says yes, then no (already counted: nothing changes); p1's yes makes the quorum;
    /// p2's no and a cancel come too late.
    fn quorum() -> (VoteRecorded, VoteFacts) {
        let h = VoteRecorded {
            created: vec![ID.into()],
            ballots: vec![
                ballot("p0", Vote::Yes, 100, 120, ok_pending()),
                ballot("p0", Vote::No, 150, 160, ok_pending()),
                ballot("p1", Vote::Yes, 200, 220, Reply::Ok(Some(answered_yes()))),
                ballot("p2", Vote::No, 205, 230, Reply::Conflict),
            ],
            cancels: vec![cancel(206, 225, Outcome::Conflict)],
            looks: vec![
                look(50, 60, pending(), vec![]),
                look(130, 140, pending(), vec![answer("p0", Vote::Yes, 110)]),
                look(
                    225,
                    230,
                    answered_yes(),
                    vec![answer("p0", Vote::Yes, 110), answer("p1", Vote::Yes, 210)],
                ),
            ],
        };
        let f = found(
            answered_yes(),
            vec![answer("p0", Vote::Yes, 110), answer("p1", Vote::Yes, 210)],
            1,
            &["p0"],
        );
        (h, f)
    }

    #[test]
    fn a_quorum_history_passes() {
        let (h, f) = quorum();
        let s = check_votes(&h, &of(f)).unwrap();
        assert_eq!(
            (s.counted, s.resolving, s.repeated, s.conflicts, s.quorum),
            (2, 1, 1, 2, 1)
        );
    }

    #[test]
    fn a_lost_acknowledged_vote_fails() {
        let (mut h, f) = quorum();
        h.ballots
            .push(ballot("p3", Vote::Yes, 100, 130, ok_pending()));
        rejects(&h, f, "the answers do not name them");
    }

    #[test]
    fn an_answer_nobody_gave_fails_and_an_unknown_call_may_have_given_it() {
        let (h, mut f) = quorum();
        f.answers[1] = answer("p2", Vote::Yes, 210);
        rejects(&h, f, "made by no call that could have");
        // p1's call was cut off: it may have counted, and a read saw that it did.
        let (mut h, f) = quorum();
        h.ballots[2].reply = Reply::Unknown;
        check_votes(&h, &of(f)).unwrap();
    }

    #[test]
    fn a_second_vote_after_the_first_was_acknowledged_replaces_nothing() {
        let (h, mut f) = quorum();
        // p0's no was sent after their yes came back: it cannot be the one counted.
        f.answers[0] = answer("p0", Vote::No, 155);
        rejects(&h, f, "made by no call that could have");
    }

    #[test]
    fn an_answer_counted_outside_its_call_fails() {
        let (h, mut f) = quorum();
        f.answers[1].at = t(240);
        rejects(&h, f, "made by no call that could have");
    }

    #[test]
    fn a_person_counted_twice_or_not_asked_fails() {
        let (h, mut f) = quorum();
        f.answers.insert(1, answer("p0", Vote::Yes, 115));
        rejects(&h, f, "name p0 twice");
        let (h, mut f) = quorum();
        f.approvers.retain(|p| p != "p1");
        rejects(&h, f, "who was not asked");
    }

    #[test]
    fn a_resolution_the_tally_does_not_call_for_fails() {
        // Two yes of three required: not answered.
        let (h, mut f) = quorum();
        f.required = 3;
        rejects(&h, f, "hold neither a quorum of yes nor a veto");
        // A no vetoes: the decision is answered false, not true.
        let (mut h, mut f) = quorum();
        h.ballots[3] = ballot("p2", Vote::No, 205, 230, Reply::Ok(None));
        f.answers[1] = answer("p2", Vote::No, 210);
        rejects(&h, f, "call for answered false");
        // A quorum expired anyway.
        let (h, mut f) = quorum();
        f.state = State::new("expired", Value::Null);
        rejects(&h, f, "call for answered true");
    }

    #[test]
    fn an_answer_after_the_resolving_one_fails() {
        let (mut h, mut f) = quorum();
        h.ballots[3] = ballot("p2", Vote::No, 205, 230, ok_pending());
        f.answers.push(answer("p2", Vote::No, 215));
        rejects(&h, f, "counted after answer 1 had resolved the decision");
    }

    #[test]
    fn wrong_event_counts_fail() {
        let (h, f) = quorum();
        rejects(
            &h,
            VoteFacts {
                resolution_events: 2,
                ..f
            },
            "2 resolution events",
        );
        let (h, f) = quorum();
        let voted = vec!["p0".into(), "p1".into()];
        rejects(&h, VoteFacts { voted, ..f }, "2 voted events");
        let (h, f) = quorum();
        rejects(&h, VoteFacts { voted: vec![], ..f }, "0 voted events");
    }

    #[test]
    fn a_vote_reporting_another_resolution_fails() {
        let (mut h, f) = quorum();
        h.ballots[1].reply = Reply::Ok(Some(State::new("declined", Value::Null)));
        rejects(&h, f, "but the final state is answered true");
    }

    /// p0's yes counted; p1's yes and a cancel come after the decision's time.
    fn expired() -> (VoteRecorded, VoteFacts) {
        let h = VoteRecorded {
            created: vec![ID.into()],
            ballots: vec![
                ballot("p0", Vote::Yes, 100, 120, ok_pending()),
                ballot("p1", Vote::Yes, 10_001, 10_003, Reply::Gone),
            ],
            cancels: vec![cancel(10_001, 10_002, Outcome::Conflict)],
            looks: vec![look(
                10_000,
                10_004,
                State::new("expired", Value::Null),
                vec![answer("p0", Vote::Yes, 110)],
            )],
        };
        let f = found(
            State::new("expired", Value::Null),
            vec![answer("p0", Vote::Yes, 110)],
            1,
            &["p0"],
        );
        (h, f)
    }

    #[test]
    fn an_expiry_with_one_yes_of_two_passes_and_its_losers_get_410_or_409() {
        let (h, f) = expired();
        let s = check_votes(&h, &of(f)).unwrap();
        assert_eq!(
            (s.expired, s.expired_with_answers, s.gone, s.conflicts),
            (1, 1, 1, 1)
        );
        let (mut h, f) = expired();
        h.ballots[1].reply = Reply::Conflict;
        rejects(&h, f, "want 410");
        let (mut h, f) = expired();
        h.cancels[0].outcome = Outcome::Gone;
        rejects(&h, f, "want 409");
        let (mut h, f) = expired();
        h.ballots[1].returned = t(9_999);
        h.ballots[1].invoked = t(9_990);
        rejects(&h, f, "refused before expiry");
    }

    #[test]
    fn an_answer_counted_at_expiry_or_pending_seen_after_it_fails() {
        let (mut h, mut f) = expired();
        h.ballots[1] = ballot("p1", Vote::Yes, 9_999, 10_003, ok_pending());
        f.answers.push(answer("p1", Vote::Yes, 10_000));
        f.voted.push("p1".into());
        rejects(&h, f, "at or after expires_at");
        let (mut h, f) = expired();
        h.looks.push(look(
            10_001,
            10_002,
            pending(),
            vec![answer("p0", Vote::Yes, 110)],
        ));
        rejects(&h, f, "saw pending after expires_at");
    }

    #[test]
    fn a_cancel_wins_only_when_the_decision_ends_cancelled() {
        let cancelled = State::new("cancelled", Value::Null);
        let (mut h, mut f) = expired();
        h.cancels[0] = cancel(300, 320, Outcome::Won(Some(cancelled.clone())));
        h.ballots[1].reply = Reply::Conflict;
        h.looks[0].seen = cancelled.clone();
        f.state = cancelled;
        check_votes(&h, &of(f.clone())).unwrap();
        rejects(
            &h,
            VoteFacts {
                state: State::new("expired", Value::Null),
                ..f
            },
            "a cancel succeeded at",
        );
    }

    #[test]
    fn a_refusal_while_still_pending_fails() {
        let (mut h, mut f) = expired();
        h.looks.clear();
        f.state = pending();
        f.resolution_events = 0;
        rejects(&h, f, "still pending");
    }

    #[test]
    fn a_server_error_fails() {
        let (mut h, f) = quorum();
        h.ballots[3].reply = Reply::Other(500, "boom".into());
        rejects(&h, f, "got 500");
    }

    #[test]
    fn reads_must_see_answers_grow_as_a_prefix_of_the_final_ones() {
        // Pending after a vote had already come back resolved.
        let (mut h, f) = quorum();
        h.looks.push(look(
            221,
            222,
            pending(),
            vec![answer("p0", Vote::Yes, 110)],
        ));
        rejects(&h, f, "saw pending after p1's api vote");
        // An answer the final ones do not have in that place.
        let (mut h, f) = quorum();
        h.looks[1].answers = vec![answer("p1", Vote::Yes, 110)];
        rejects(&h, f, "not a prefix of the final");
        // A read sent after p0's yes came back that does not list it.
        let (mut h, f) = quorum();
        h.looks.push(look(125, 126, pending(), vec![]));
        rejects(&h, f, "does not list p0");
        // Resolved, but not with all its answers.
        let (mut h, f) = quorum();
        h.looks[2].answers.pop();
        rejects(&h, f, "but the final ones are");
        // Fewer answers than a read that had ended before.
        let (mut h, f) = quorum();
        h.looks.push(look(141, 142, pending(), vec![]));
        h.ballots[0].returned = t(145);
        h.ballots[0].reply = Reply::Unknown;
        rejects(&h, f, "fewer than the 1 a read that ended at");
        // An answer seen before it was counted.
        let (mut h, f) = quorum();
        h.looks[1].returned = t(105);
        h.looks[1].invoked = t(101);
        rejects(&h, f, "before it was counted");
    }
}
