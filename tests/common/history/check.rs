//! The checker: each decision's calls, reads and facts against the rules of the module's
//! documentation.

use std::collections::HashMap;

use super::{At, Facts, Intent, Outcome, Read, Recorded, State, Summary, Write};

/// `items` grouped by the decision each names (`decision`).
pub(super) fn by_decision<'a, T>(
    items: &'a [T],
    decision: impl Fn(&'a T) -> &'a String,
) -> HashMap<&'a str, Vec<&'a T>> {
    let mut grouped: HashMap<&str, Vec<&T>> = HashMap::new();
    for item in items {
        grouped.entry(decision(item)).or_default().push(item);
    }
    grouped
}

/// Every decision the history names, once each, in order: those `created`, and those its
/// calls name (`called`).
pub(super) fn named<'a>(
    created: &'a [String],
    called: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    let mut named: Vec<&str> = created.iter().map(String::as_str).collect();
    named.extend(called);
    named.sort_unstable();
    named.dedup();
    named
}

/// Checks the history against the facts found after the run; returns every violation found.
/// `facts` has an entry for every decision the history names; `None` means it is gone.
pub fn check(h: &Recorded, facts: &HashMap<String, Option<Facts>>) -> Result<Summary, Vec<String>> {
    let mut errors = Vec::new();
    let mut summary = Summary::default();
    let writes = by_decision(&h.writes, |w| &w.decision);
    let reads = by_decision(&h.reads, |r| &r.decision);
    for id in named(&h.created, writes.keys().chain(reads.keys()).copied()) {
        let ws = writes.get(id).map(Vec::as_slice).unwrap_or_default();
        let rs = reads.get(id).map(Vec::as_slice).unwrap_or_default();
        if let Some(f) = facts_of(facts, id, &mut errors) {
            check_decision(id, ws, rs, f, &mut errors, &mut summary);
        }
    }
    verdict(summary, errors)
}

/// The facts gathered about `id`, or `None` once `errors` says why there are none.
pub(super) fn facts_of<'f, F>(
    facts: &'f HashMap<String, Option<F>>,
    id: &str,
    errors: &mut Vec<String>,
) -> Option<&'f F> {
    match facts.get(id) {
        Some(Some(f)) => Some(f),
        Some(None) => {
            errors.push(format!("{id}: acknowledged, but the service lost it"));
            None
        }
        None => {
            errors.push(format!("{id}: the test gathered no facts about it"));
            None
        }
    }
}

/// The `summary` of a history with no violation, else the violations found (`errors`).
pub(super) fn verdict<S>(summary: S, errors: Vec<String>) -> Result<S, Vec<String>> {
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
