//! The part of a decision's page about its people: how far a decision that needs several
//! has come, the viewer's own answer once it counted, who resolved it, and, on the page of
//! its own link, who answers it instead.

use serde_json::Value;
use time::OffsetDateTime;

use crate::domain::AnswerAction;
use crate::domain::approval;
use crate::domain::people::{AnswerRecord, Person};
use crate::domain::tally;
use crate::domain::{Decision, Status};
use crate::render::T;

/// A person link a page was opened through (`/a/{token}`): where its form posts, and whose
/// link it is.
pub struct PersonLink<'a> {
    /// `/a/{token}`.
    pub action: String,
    /// The decision's own token, for the address of its image (`/d/{token}/image`).
    pub answer_token: String,
    /// Whose link it is, when known (a page shown after a refusal may not know).
    pub person: Option<&'a Person>,
    /// The allowance this approval's Allow made, which the page shows and revokes.
    pub allowed: Option<super::super::allowed::AllowedView>,
}

/// What the people asked have done with a decision, for its page.
#[derive(Default)]
pub struct PeopleView {
    /// How far a decision that needs several people has come: "1 of 2 allowed: ana".
    pub progress: Option<String>,
    /// The viewer's own answer, counted while the decision waits for others ("You
    /// allowed."): the page then offers them no buttons.
    pub yours: Option<String>,
    /// Who resolved it: "Allowed by ana and ben", "Denied by ben".
    pub answered_by: Option<String>,
    /// On the page of a decision sent to people by name opened through its own link (which
    /// only shows it): who answers it, and where.
    pub elsewhere: Option<String>,
}

/// The people part of `d`'s page, as `link` shows it (`None`: through the decision's own
/// link).
pub fn people_view(
    t: &T,
    d: &Decision,
    link: Option<&PersonLink>,
    now: OffsetDateTime,
) -> PeopleView {
    let open = d.is_open_at(now);
    let viewer = link.and_then(|l| l.person);
    let yours = viewer
        .filter(|_| open)
        .and_then(|p| d.answers.iter().find(|a| a.person_id == Some(p.id)))
        .map(|a| your_answer(t, d, a));
    let resolved = matches!(d.status, Status::Answered | Status::Declined);
    PeopleView {
        progress: (!resolved).then(|| tally::progress(d)).flatten(),
        yours,
        answered_by: resolved.then(|| answered_by(t, d)).flatten(),
        elsewhere: match &d.spec.routing {
            Some(r) if open && link.is_none() => Some(who_answers(t, &r.approvers)),
            _ => None,
        },
    }
}

/// "You allowed.", "You said yes.": a counted answer, told back to the person who gave it.
fn your_answer(t: &T, d: &Decision, a: &AnswerRecord) -> String {
    t.tr(match (&d.spec.approval, &a.value) {
        _ if a.action == AnswerAction::Decline => "yours-declined",
        (Some(_), v) if approval::allows(v.as_ref()) => "yours-allowed",
        (Some(_), _) => "yours-denied",
        (None, Some(Value::Bool(true))) => "yours-said-yes",
        (None, Some(Value::Bool(false))) => "yours-said-no",
        (None, _) => "yours-answered",
    })
}

/// "ana and ben answer this", "The people of this inbox answer this".
/// Where it is answered instead: from their sayso feed or a notification.
fn who_answers(t: &T, approvers: &[String]) -> String {
    match approvers {
        [] => t.tr("elsewhere-inbox-people"),
        names => t.tr2(
            "elsewhere-named",
            "names",
            join_names(t, names.iter().map(String::as_str)),
            "count",
            names.len(),
        ),
    }
}

/// Who resolved `d`, named from its answers: those who gave the answer it resolved with
/// ("Allowed by ana and ben"), or the one who declined. `None` when no answer is recorded,
/// and for an inbox's own person answering alone, whose page needs no name.
pub fn answered_by(t: &T, d: &Decision) -> Option<String> {
    d.answers.last()?;
    let named = d.spec.routing.is_some()
        || d.answers
            .iter()
            .any(|a| a.person_id.is_some_and(|p| p != d.inbox_id));
    if !named {
        return None;
    }
    let agreeing = deciders(d);
    let id = match (&d.spec.approval, d.status) {
        (Some(_), Status::Answered) if approval::allows(d.outcome.as_ref()) => {
            "answered-by-allowed"
        }
        (Some(_), _) => "answered-by-denied",
        (None, Status::Declined) => "answered-by-declined",
        (None, _) => "answered-by-answered",
    };
    let someone = t.tr("answered-by-someone");
    let names = agreeing
        .iter()
        .map(|a| a.person.as_deref().unwrap_or(&someone));
    Some(t.tr1(id, "names", join_names(t, names)))
}

/// The answers `d` was resolved with: those who gave the answer it resolved with, or the last
/// one (the decline); empty when no answer is recorded.
pub fn deciders(d: &Decision) -> Vec<&AnswerRecord> {
    let Some(last) = d.answers.last() else {
        return Vec::new();
    };
    if d.status == Status::Declined {
        return vec![last];
    }
    let same: Vec<&AnswerRecord> = d
        .answers
        .iter()
        .filter(|a| a.action == last.action && a.value == d.outcome)
        .collect();
    if same.is_empty() { vec![last] } else { same }
}

/// "ana", "ana and ben", "ana, ben and cy".
pub fn join_names<'a>(t: &T, names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => t.tr2("names-and", "first", rest.join(", "), "last", *last),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::AnswerChannel;
    use serde_json::json;
    use uuid::Uuid;

    fn routed(body: Value) -> Decision {
        let now = OffsetDateTime::now_utc();
        Decision::asked(&body, now, now + time::Duration::hours(1))
    }

    fn person(name: &str) -> Person {
        Person::named(Uuid::new_v4(), Uuid::nil(), name, OffsetDateTime::now_utc())
    }

    fn answer(p: Option<&Person>, action: AnswerAction, value: Option<Value>) -> AnswerRecord {
        AnswerRecord {
            person: p.map(|p| p.name.clone()),
            person_id: p.map(|p| p.id),
            action,
            value,
            remark: None,
            edited_command: None,
            at: OffsetDateTime::now_utc(),
            channel: AnswerChannel::Feed,
        }
    }

    fn link(p: &Person) -> PersonLink<'_> {
        PersonLink {
            action: "/a/x".into(),
            answer_token: "x".into(),
            person: Some(p),
            allowed: None,
        }
    }

    #[test]
    fn a_persons_counted_yes_is_told_back_to_them_alone() {
        let (ana, ben) = (person("ana"), person("ben"));
        let mut d = routed(json!({"question": "Ship?", "kind": "bool",
            "approvers": ["ana", "ben"], "required": 2}));
        d.answers
            .push(answer(Some(&ana), AnswerAction::Answer, Some(json!(true))));
        let now = OffsetDateTime::now_utc();
        let v = people_view(&T::default(), &d, Some(&link(&ana)), now);
        assert_eq!(v.yours.as_deref(), Some("You said yes."));
        assert_eq!(v.progress.as_deref(), Some("1 of 2 said yes: ana"));
        assert_eq!(v.elsewhere, None);
        let v = people_view(&T::default(), &d, Some(&link(&ben)), now);
        assert_eq!(v.yours, None);
        // Through the decision's own link: who answers, and where.
        let v = people_view(&T::default(), &d, None, now);
        assert_eq!(
            v.elsewhere.as_deref(),
            Some(
                "ana and ben answer this from their sayso feed or a notification: this link only shows it."
            )
        );
    }

    #[test]
    fn a_resolved_decision_names_who_answered() {
        let (ana, ben) = (person("ana"), person("ben"));
        let approval = json!({"question": "Run?", "kind": "choose", "options": ["Allow", "Deny"],
            "approval": {"harness": "claude", "tool_name": "Bash"},
            "approvers": ["ana", "ben"], "required": 2});
        let mut d = routed(approval.clone());
        d.status = Status::Answered;
        d.outcome = Some(json!("Allow"));
        d.answers = vec![
            answer(Some(&ana), AnswerAction::Answer, Some(json!("Allow"))),
            answer(Some(&ben), AnswerAction::Answer, Some(json!("Allow"))),
        ];
        assert_eq!(
            answered_by(&T::default(), &d).as_deref(),
            Some("Allowed by ana and ben")
        );
        let v = people_view(
            &T::default(),
            &d,
            Some(&link(&ana)),
            OffsetDateTime::now_utc(),
        );
        assert_eq!((v.yours, v.progress), (None, None));

        let mut d = routed(approval);
        d.status = Status::Answered;
        d.outcome = Some(json!("Deny"));
        d.answers = vec![answer(
            Some(&ben),
            AnswerAction::Answer,
            Some(json!("Deny")),
        )];
        assert_eq!(
            answered_by(&T::default(), &d).as_deref(),
            Some("Denied by ben")
        );

        let mut d = routed(json!({"question": "Ship?", "kind": "bool", "approvers": ["ana"]}));
        d.status = Status::Declined;
        d.answers = vec![answer(None, AnswerAction::Decline, None)];
        assert_eq!(
            answered_by(&T::default(), &d).as_deref(),
            Some("Declined by someone")
        );
    }

    #[test]
    fn an_inbox_answered_by_its_own_person_alone_names_nobody() {
        let mut d = routed(json!({"question": "Ship?", "kind": "bool"}));
        let mut own = person("default");
        own.id = d.inbox_id;
        d.status = Status::Answered;
        d.outcome = Some(json!(true));
        d.answers = vec![answer(Some(&own), AnswerAction::Answer, Some(json!(true)))];
        assert_eq!(answered_by(&T::default(), &d), None);
        d.answers = vec![answer(None, AnswerAction::Answer, Some(json!(true)))];
        assert_eq!(answered_by(&T::default(), &d), None);
        let ana = person("ana");
        d.answers = vec![answer(Some(&ana), AnswerAction::Answer, Some(json!(true)))];
        assert_eq!(
            answered_by(&T::default(), &d).as_deref(),
            Some("Answered by ana")
        );
    }

    #[test]
    fn names_are_joined_as_people_read_them() {
        assert_eq!(join_names(&T::default(), ["ana"].into_iter()), "ana");
        assert_eq!(
            join_names(&T::default(), ["ana", "ben", "cy"].into_iter()),
            "ana, ben and cy"
        );
    }
}
