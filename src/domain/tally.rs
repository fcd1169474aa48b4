//! The people rule applied to a decision (docs/PEOPLE.md): who is asked it, how many must
//! agree, what one more answer does, and how far it has come.
//!
//! The rule, in full: any No, Deny or Decline resolves the decision at once (a veto); a
//! Yes or Allow counts once per person, and resolves the decision when `required` people
//! have given one. With `required` 1 (the default) the first answer resolves it, as
//! always.

use time::OffsetDateTime;

use super::decision::Decision;
use super::people::AnswerRecord;

/// Whether `person` is asked `d` at `now`: an approver, or reached by its escalation once its
/// time came. Only they see it in their feed, and only they may answer it.
pub fn is_asked(d: &Decision, person: &str, now: OffsetDateTime) -> bool {
    match &d.spec.routing {
        None => true,
        Some(r) => {
            r.is_approver(person)
                || (r.is_escalation_target(person)
                    && r.escalates_at(d.created_at).is_some_and(|at| now >= at))
        }
    }
}

/// How many must say Yes for `d` to resolve.
pub fn required(d: &Decision) -> u32 {
    d.spec.routing.as_ref().map_or(1, |r| r.required.max(1))
}

/// What one more answer does to a pending decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tally {
    /// This person has answered already: nothing changes.
    AlreadyCounted,
    /// It counts, and the rule is not met yet.
    Counted,
    /// It resolves the decision: the rule is met, or it is a veto.
    Resolves,
}

/// What `answer` does to `d`, given the answers it already has.
pub fn tally(d: &Decision, answer: &AnswerRecord) -> Tally {
    if answer.person_id.is_some() && d.answers.iter().any(|a| a.person_id == answer.person_id) {
        return Tally::AlreadyCounted;
    }
    let required = required(d) as usize;
    if required <= 1 || answer.is_veto() {
        return Tally::Resolves;
    }
    let yes = d.answers.iter().filter(|a| a.is_yes()).count() + usize::from(answer.is_yes());
    if yes >= required {
        Tally::Resolves
    } else {
        Tally::Counted
    }
}

/// How far a decision that needs several people has come, for the page and the feed:
/// "1 of 2 allowed: ana". `None` for a decision one answer resolves.
pub fn progress(d: &Decision) -> Option<String> {
    let required = required(d);
    if required <= 1 {
        return None;
    }
    let yes: Vec<&str> = d
        .answers
        .iter()
        .filter(|a| a.is_yes())
        .filter_map(|a| a.person.as_deref())
        .collect();
    let verb = if d.spec.approval.is_some() {
        "allowed"
    } else {
        "said yes"
    };
    Some(if yes.is_empty() {
        format!("0 of {required} {verb}")
    } else {
        format!("{} of {required} {verb}: {}", yes.len(), yes.join(", "))
    })
}
