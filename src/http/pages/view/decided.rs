//! What was decided, in a few words, for the feed's Recent list: "Allowed", "No", the option
//! picked, "Skipped", "Withdrawn by the agent"; and who decided, through which channel, as
//! the audit trail of answers records it. The words are the server's own, capitalised as
//! written; only a picked option (or the person's own answer) is quoted from the decision.

use serde_json::Value;

use super::people::{deciders, join_names};
use crate::domain::approval::{ALLOW, ALLOW_SESSION};
use crate::domain::spec::KindSpec;
use crate::domain::{AnswerChannel, CancelReason, Decision, OutcomeSource, Status};
use crate::render::T;
use crate::render::visible::{Lines, clip};

/// The most characters of a picked option the list shows.
const OPTION_CHARS: usize = 60;

/// What was decided: "Allowed", "Denied", "Yes", "No", the option, "Done", "Skipped",
/// "Expired", "Withdrawn by the agent", …
pub fn words(t: &T, d: &Decision) -> String {
    let approval = d.spec.approval.is_some();
    let said = match d.status {
        Status::Pending => "status-waiting",
        Status::Expired if d.outcome_source == Some(OutcomeSource::Default) => {
            "decided-expired-default"
        }
        Status::Expired => "status-expired",
        Status::Cancelled if d.cancel_reason == Some(CancelReason::Abandoned) => {
            "decided-withdrawn"
        }
        Status::Cancelled => "decided-cancelled",
        Status::Declined if approval => "decided-denied",
        Status::Declined => "status-declined",
        Status::Answered if approval => match d.outcome.as_ref().and_then(Value::as_str) {
            Some(ALLOW) if d.custom => "decided-allowed-edited",
            Some(ALLOW) => "decided-allowed",
            Some(ALLOW_SESSION) => "decided-allowed-session",
            _ => "decided-denied",
        },
        Status::Answered => return answered(t, d),
    };
    t.tr(said)
}

/// An answered question other than an approval, by its kind.
fn answered(t: &T, d: &Decision) -> String {
    let outcome = d.outcome.as_ref();
    match (&d.spec.body, outcome) {
        (KindSpec::Bool { .. }, Some(Value::Bool(true))) => t.tr("field-yes"),
        (KindSpec::Bool { .. }, Some(Value::Bool(false))) => t.tr("field-no"),
        (KindSpec::Todo, Some(Value::String(s))) if s == "skipped" => t.tr("status-skipped"),
        (KindSpec::Todo, _) => t.tr("status-done"),
        (KindSpec::Choose { .. }, Some(Value::String(label))) => picked(label),
        (KindSpec::Choose { .. }, Some(Value::Array(labels))) if !labels.is_empty() => picked(
            &labels
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", "),
        ),
        _ => t.tr("status-answered"),
    }
}

/// A picked option, its hidden characters shown and cut to fit a line.
fn picked(label: &str) -> String {
    clip(label, OPTION_CHARS, Lines::Marked).with_note()
}

/// "by ana in the feed", "by ana and ben in Telegram", "through its link": who answered, and
/// how. `None` when nobody did (expired, withdrawn) or no answer is recorded.
pub fn by(t: &T, d: &Decision) -> Option<String> {
    if !matches!(d.status, Status::Answered | Status::Declined) {
        return None;
    }
    let agreeing = deciders(d);
    let last = agreeing.last()?;
    let channel = channel_words(t, last.channel);
    let names: Vec<&str> = agreeing
        .iter()
        .filter_map(|a| a.person.as_deref())
        .collect();
    if names.is_empty() {
        return Some(channel);
    }
    let names = join_names(t, names.into_iter());
    Some(t.tr2(
        "decided-by",
        "names",
        clip(&names, 80, Lines::Marked).with_note(),
        "channel",
        channel,
    ))
}

/// Through which channel, as a phrase that follows a name.
fn channel_words(t: &T, c: AnswerChannel) -> String {
    t.tr(match c {
        AnswerChannel::Link => "channel-link",
        AnswerChannel::Feed => "channel-feed",
        AnswerChannel::Push => "channel-push",
        AnswerChannel::Ntfy => "channel-ntfy",
        AnswerChannel::Email => "channel-email",
        AnswerChannel::Api => "channel-api",
        AnswerChannel::Slack => "channel-slack",
        AnswerChannel::Matrix => "channel-matrix",
        AnswerChannel::Telegram => "channel-telegram",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::AnswerAction;
    use crate::domain::people::AnswerRecord;
    use serde_json::json;
    use time::OffsetDateTime;

    fn resolved(body: Value, status: Status, outcome: Option<Value>) -> Decision {
        let now = OffsetDateTime::now_utc();
        Decision {
            status,
            outcome,
            resolved_at: Some(now),
            ..Decision::asked(&body, now, now)
        }
    }

    fn answer(d: &mut Decision, person: Option<&str>, channel: AnswerChannel) {
        let action = match d.status {
            Status::Declined => AnswerAction::Decline,
            _ => AnswerAction::Answer,
        };
        d.answers.push(AnswerRecord {
            person: person.map(str::to_string),
            person_id: None,
            action,
            value: d.outcome.clone(),
            remark: None,
            edited_command: None,
            at: OffsetDateTime::now_utc(),
            channel,
        });
    }

    #[test]
    fn each_kind_says_what_was_decided() {
        let bool_q = json!({"question": "Deploy?", "kind": "bool"});
        let d = resolved(bool_q.clone(), Status::Answered, Some(json!(false)));
        assert_eq!(words(&T::default(), &d), "No");
        let d = resolved(bool_q.clone(), Status::Answered, Some(json!(true)));
        assert_eq!(words(&T::default(), &d), "Yes");
        let todo = json!({"question": "Renew", "kind": "todo"});
        let d = resolved(todo.clone(), Status::Answered, Some(json!("skipped")));
        assert_eq!(words(&T::default(), &d), "Skipped");
        let d = resolved(todo, Status::Answered, Some(json!("done")));
        assert_eq!(words(&T::default(), &d), "Done");
        let choose = json!({"question": "Which?", "kind": "choose", "options": ["Blue", "Red"]});
        let d = resolved(choose, Status::Answered, Some(json!("Red")));
        assert_eq!(words(&T::default(), &d), "Red");
        let mut d = resolved(bool_q.clone(), Status::Cancelled, None);
        assert_eq!(words(&T::default(), &d), "Cancelled by the agent");
        d.cancel_reason = Some(CancelReason::Abandoned);
        assert_eq!(words(&T::default(), &d), "Withdrawn by the agent");
        assert_eq!(by(&T::default(), &d), None);
        let d = resolved(bool_q, Status::Expired, None);
        assert_eq!(words(&T::default(), &d), "Expired");
    }

    #[test]
    fn who_and_which_way_come_from_the_answers() {
        let q = json!({"question": "Deploy?", "kind": "bool"});
        let mut d = resolved(q.clone(), Status::Answered, Some(json!(false)));
        assert_eq!(by(&T::default(), &d), None, "no answer recorded");
        answer(&mut d, Some("ana"), AnswerChannel::Telegram);
        assert_eq!(by(&T::default(), &d).as_deref(), Some("by ana in Telegram"));
        let mut d = resolved(q, Status::Declined, None);
        answer(&mut d, None, AnswerChannel::Link);
        assert_eq!(words(&T::default(), &d), "Declined");
        assert_eq!(by(&T::default(), &d).as_deref(), Some("through its link"));
    }
}
