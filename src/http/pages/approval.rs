//! The approval page: a coding agent's tool call laid out for a tired person on a phone.
//! The title says who wants to do what ("Claude Code wants to run a Bash command"), then the
//! agent's own description, what deserves a second look, and what runs, once: the command
//! (wrapped at spaces, its dangerous parts marked), an edit's added lines before its removed
//! ones, a write's content, a fetch's host. Deny and Allow sit side by side in a bar that never
//! leaves the screen. All of it comes from the approval object, never from the asker's
//! `question`, and every hidden character is shown as its code point (render/visible.rs).
//!
//! What does not fit is cut with a note saying so, and then the page offers no Allow until the
//! whole change is opened (`?whole=1`): a person never allows what they could not see.
//! It posts the same form as every answer page (`value` is the label), so answering and the
//! rules of docs/API.md are those of any `choose` decision.

use crate::render::project::visible_project;
use askama::Template;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;
use time::OffsetDateTime;

use super::reader::Reader;
use super::submitted::Submitted;
use super::templates::render;
use super::view::{self, PageErrors, PeopleView, PersonLink};
use super::what_runs::{FieldView, SHOWN_CHARS, What, what};
use crate::domain::allowance::{AllowFor, scope_of};
use crate::domain::approval::{ALLOW, ALLOW_SESSION, Action, ApprovalSpec, DENY, action_of};
use crate::domain::danger::dangers;
use crate::domain::tally;
use crate::domain::{CancelReason, Decision, Status};
use crate::render;
use crate::render::edit_diff::{Piece, changes, word_diff};
use crate::render::visible::{Lines, clip, cut_note, has_hidden, visible};
use crate::render::what_runs;

#[derive(Template)]
#[template(path = "approval.html")]
pub struct ApprovalPage {
    pub action: String,
    /// Pending, but opened through its `web_url`, which only shows it: the page says where
    /// it is answered instead of offering buttons.
    pub elsewhere: bool,
    /// "Claude Code wants to run a Bash command".
    pub title: String,
    /// The agent's own words about the call.
    pub description: Option<String>,
    /// What the command does that deserves a second look, one plain line each.
    pub dangers: Vec<&'static str>,
    pub project: Option<crate::render::project::ProjectName>,
    pub expires_in: Option<String>,
    pub expires_iso: String,
    /// The tool as the harness named it, whole.
    pub tool_name: String,
    /// Its MCP server, for an `mcp__<server>__<tool>` name.
    pub mcp_server: Option<String>,
    pub what: What,
    /// Every field of the input the rendering of `what` does not show.
    pub fields: Vec<FieldView>,
    /// Part of what runs was left out: the note, and the link to the whole of it.
    pub cut: Option<Cut>,
    /// The page shows the whole change (`?whole=1`): the form says so with its Allow.
    pub whole: bool,
    pub cwd: Option<String>,
    pub session_id: Option<String>,
    /// Pending: the buttons are shown.
    pub open: bool,
    pub with_session: bool,
    /// "Allow all Bash commands in this session", and what it does not cover.
    pub session_label: String,
    pub session_note: String,
    /// The Allows that also stand for a while ("For 15 min", …), with what they cover;
    /// none where the approval may not make one (a passkey's, one naming people).
    pub timed: Vec<Timed>,
    pub timed_note: String,
    /// The policy rule that put the question, when one did.
    pub rule: Option<String>,
    /// Set once the agent has stopped waiting for this answer.
    pub stopped_waiting: Option<String>,
    /// The one answer a notification's link asked to confirm (`?confirm=Allow`): the page
    /// then offers that button alone, still only a POST decides.
    pub confirm: Option<&'static str>,
    /// An editable command: the text box's content (the command, or what was sent).
    pub edit_command: Option<String>,
    /// The command the agent asked, which the page's script diffs the text box against.
    pub asked_command: String,
    /// A sent edit shown back (a form returned with an error): what it changes, word by
    /// word, before anything is allowed.
    pub edit_preview: Option<Vec<Piece>>,
    /// Allowed with the command edited: the edit against what the agent asked.
    pub ran_edit: Option<Vec<Piece>>,
    pub remark: String,
    pub errors: Vec<String>,
    pub result: Option<Outcome>,
    /// The allowance its Allow for a while made (a person link's page only).
    pub allowed: Option<super::allowed::AllowedView>,
    pub allow: &'static str,
    pub deny: &'static str,
    pub allow_session: &'static str,
    /// The rule wants a passkey with the Allow: the page says so, and its script asks the
    /// passkey (options from `passkey_url`) before an Allow is posted.
    pub step_up: bool,
    pub passkey_url: String,
    /// Progress, the viewer's own answer, who resolved it, who answers it instead.
    pub people: PeopleView,
    /// The browser is bound to a person: the page links back to their feed.
    pub to_feed: bool,
    /// The page's language.
    pub t: render::T,
}

/// One "Allow for a while" button: its `allow_for` value and its label.
pub struct Timed {
    pub value: &'static str,
    pub label: String,
}

/// The buttons that allow for a while, labelled in the reader's zone; the last ends at
/// 09:00 of the person's next day.
fn timed_buttons(t: &render::T, zone: &render::Zone, now: OffsetDateTime) -> Vec<Timed> {
    AllowFor::ALL
        .into_iter()
        .map(|a| Timed {
            value: a.as_str(),
            label: match a {
                AllowFor::Quarter => t.tr("timed-quarter"),
                AllowFor::Hour => t.tr("timed-hour"),
                AllowFor::Morning => {
                    let until = a.until(now, zone.name());
                    t.tr1("timed-morning", "clock", zone.clock(until, until))
                }
            },
        })
        .collect()
}

/// What an allowance for a while covers, in the person's words.
fn timed_note(t: &render::T, a: &ApprovalSpec, d: &Decision) -> String {
    let agent = visible(render::approval::agent_name(&a.harness), Lines::Marked);
    let tool = clip(&a.tool_name, 40, Lines::Marked).with_note();
    let id = match (&a.rule, &d.spec.project) {
        (Some(_), Some(_)) => "timed-note-rule-project",
        (Some(_), None) => "timed-note-rule",
        (None, Some(_)) => "timed-note-project",
        (None, None) => "timed-note",
    };
    let project = d.spec.project.as_deref().map(|p| visible(p, Lines::Marked));
    t.tr3(
        id,
        "tool",
        tool,
        "agent",
        agent,
        "project",
        project.unwrap_or_default(),
    )
}

/// How the approval ended.
pub struct Outcome {
    pub class: &'static str,
    pub heading: String,
    pub remark: Option<String>,
    pub when: String,
    pub when_iso: String,
    /// Said when the answer came after the agent stopped waiting.
    pub late: Option<String>,
}

/// What was left out of a long change, and where the whole of it is.
pub struct Cut {
    /// "[cut: 2,731 more characters]".
    pub note: String,
    pub whole_url: String,
}

/// How the page was asked for: `?confirm=Allow` from a mail's link, `?whole=1` for the whole
/// of a long change.
#[derive(Debug, Clone, Default)]
pub struct PageQuery {
    pub confirm: Option<String>,
    pub whole: bool,
}

impl PageQuery {
    pub fn parse(query: Option<&str>) -> PageQuery {
        let mut q = PageQuery::default();
        for (k, v) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            match &*k {
                "confirm" => q.confirm = Some(v.into_owned()),
                "whole" => q.whole = v == "1",
                _ => {}
            }
        }
        q
    }
}

/// The approval page of `d`. `link` is the person link the form posts to; `None` for the
/// page its `web_url` shows, which offers no answer (an agent holds that link). Its times
/// are in the `reader`'s zone.
#[allow(clippy::too_many_arguments)]
pub fn approval_page(
    status: StatusCode,
    link: Option<&PersonLink>,
    d: &Decision,
    a: &ApprovalSpec,
    sent: Option<&Submitted>,
    errors: &PageErrors,
    query: &PageQuery,
    reader: &Reader,
) -> Response {
    let now = OffsetDateTime::now_utc();
    let zone = &reader.zone;
    let confirm = [ALLOW, DENY, ALLOW_SESSION]
        .into_iter()
        .find(|label| query.confirm.as_deref() == Some(*label))
        .filter(|label| *label != ALLOW_SESSION || d.spec.offers_session());
    let pending = d.is_open_at(now);
    let action = link.map(|l| l.action.as_str());
    let t = &reader.t;
    let people = view::people_view(t, d, link, now);
    // The person's Allow counted, and the approval waits for others: nothing to send.
    let open = pending && action.is_some() && people.yours.is_none();
    let input = Value::Object(a.tool_input.clone());
    let stopped = a.answer_by.filter(|by| *by <= now);
    // A form sent back with an error keeps the whole change open.
    let whole = query.whole || sent.and_then(|s| s.get("whole")) == Some("1");
    let shown = what(
        &a.tool_name,
        &input,
        if whole { usize::MAX } else { SHOWN_CHARS },
    );
    let found = match action_of(&a.tool_name, &input) {
        Action::Shell { command } => dangers(command).into_iter().map(|d| d.reason).collect(),
        _ => Vec::new(),
    };
    let page = ApprovalPage {
        action: action.unwrap_or_default().to_string(),
        elsewhere: pending && action.is_none(),
        title: what_runs::title(t, a),
        description: what_runs::description(a),
        dangers: found,
        project: d.spec.project.as_deref().map(visible_project),
        // While the agent waits, that is the time that counts; after, the question's own.
        // Both are under way already: "for 9 more minutes", never "in 9 min".
        expires_in: pending.then(|| match a.answer_by.filter(|by| *by > now) {
            Some(by) => t.tr2(
                "approval-agent-waits",
                "for",
                render::time_for(t, by, now),
                "clock",
                zone.clock(by, now),
            ),
            None => t.tr2(
                "approval-open-for",
                "for",
                render::time_for(t, d.expires_at, now),
                "clock",
                zone.clock(d.expires_at, now),
            ),
        }),
        expires_iso: render::iso(a.answer_by.filter(|by| *by > now).unwrap_or(d.expires_at)),
        tool_name: visible(&a.tool_name, Lines::Marked),
        mcp_server: what_runs::mcp_server(&a.tool_name).map(|s| visible(s, Lines::Marked)),
        what: shown.what,
        fields: shown.fields,
        cut: (shown.left_out > 0).then(|| Cut {
            note: cut_note(shown.left_out),
            whole_url: whole_url(action.unwrap_or_default(), confirm),
        }),
        whole,
        cwd: a.cwd.as_deref().map(|c| visible(c, Lines::Marked)),
        session_id: a.session_id.as_deref().map(|s| visible(s, Lines::Marked)),
        open,
        with_session: a.session_id.is_some() && d.spec.offers_session(),
        session_label: session_label(t, a),
        session_note: session_note(t, a),
        timed: if open && scope_of(d).is_ok() {
            timed_buttons(t, zone, now)
        } else {
            Vec::new()
        },
        timed_note: timed_note(t, a, d),
        rule: a.rule.as_deref().map(|r| visible(r, Lines::Marked)),
        stopped_waiting: (open && stopped.is_some()).then(|| {
            t.tr1(
                "approval-stopped-waiting",
                "clock",
                zone.clock(stopped.unwrap_or(now), now),
            )
        }),
        confirm,
        edit_command: edit_command(d, a, &input).map(|asked| {
            sent.and_then(|s| s.get("command"))
                .unwrap_or(asked)
                .to_string()
        }),
        asked_command: edit_command(d, a, &input).unwrap_or_default().to_string(),
        edit_preview: edit_command(d, a, &input).and_then(|asked| {
            let sent = sent.and_then(|s| s.get("command"))?.trim();
            let diff = word_diff(asked.trim(), sent);
            (!sent.is_empty() && changes(&diff)).then_some(diff)
        }),
        ran_edit: match (action_of(&a.tool_name, &input), d.ran_instead()) {
            (Action::Shell { command }, Some(ran)) => Some(word_diff(command.trim(), ran)),
            _ => None,
        },
        remark: sent
            .and_then(|s| s.get("remark"))
            .unwrap_or_default()
            .to_string(),
        errors: errors.summary.clone(),
        result: (!pending && d.status != Status::Pending).then(|| outcome(t, d, a, now, zone)),
        allowed: link.and_then(|l| l.allowed.clone()),
        allow: ALLOW,
        deny: DENY,
        allow_session: ALLOW_SESSION,
        step_up: a.step_up.is_some(),
        passkey_url: match action {
            Some(action) if open && a.step_up.is_some() => format!("{action}/passkey"),
            _ => String::new(),
        },
        people,
        to_feed: reader.to_feed,
        t: reader.t,
    };
    render(status, &page)
}

/// The command the page offers for editing: a shell command of an editable approval, where
/// one person's Allow resolves it (where several must agree, the others allow the command
/// asked, so none may change it alone). A command with hidden characters is not offered
/// either: a text box would draw them as nothing (or reversed) again.
fn edit_command<'a>(d: &Decision, a: &ApprovalSpec, input: &'a Value) -> Option<&'a str> {
    match action_of(&a.tool_name, input) {
        Action::Shell { command }
            if a.editable && !has_hidden(command) && tally::required(d) <= 1 =>
        {
            Some(command)
        }
        _ => None,
    }
}

/// The page with the whole change, keeping what a notification's link asked to confirm.
fn whole_url(action: &str, confirm: Option<&str>) -> String {
    match confirm {
        Some(c) => format!(
            "{action}?whole=1&confirm={}",
            url::form_urlencoded::byte_serialize(c.as_bytes()).collect::<String>()
        ),
        None => format!("{action}?whole=1"),
    }
}

/// "Allow all Bash commands in this session": what the session answer allows, exactly.
fn session_label(t: &render::T, a: &ApprovalSpec) -> String {
    let input = Value::Object(a.tool_input.clone());
    match action_of(&a.tool_name, &input) {
        Action::Shell { .. } => t.tr(match what_runs::shell_kind(&a.tool_name) {
            "a Bash command" => "session-allow-bash",
            "a PowerShell command" => "session-allow-powershell",
            _ => "session-allow-shell",
        }),
        _ => t.tr1(
            "session-allow-tool",
            "tool",
            clip(&a.tool_name, 40, Lines::Marked).with_note(),
        ),
    }
}

/// What "Allow for this session" does not cover, in the person's words.
fn session_note(t: &render::T, a: &ApprovalSpec) -> String {
    let agent = visible(render::approval::agent_name(&a.harness), Lines::Marked);
    let id = match &a.rule {
        None => "session-note",
        Some(_) => "session-note-rule",
    };
    t.tr1(id, "agent", agent)
}

fn outcome(
    t: &render::T,
    d: &Decision,
    a: &ApprovalSpec,
    now: OffsetDateTime,
    zone: &render::Zone,
) -> Outcome {
    let when = d.resolved_at.unwrap_or(d.expires_at);
    let (class, heading) = match (d.status, d.outcome.as_ref().and_then(Value::as_str)) {
        (Status::Answered, Some(ALLOW)) if d.custom => ("allowed", t.tr("decided-allowed-edited")),
        (Status::Answered, Some(ALLOW)) => ("allowed", t.tr("decided-allowed")),
        (Status::Answered, Some(ALLOW_SESSION)) => (
            "allowed",
            t.tr1("outcome-allowed-session", "tool", &a.tool_name),
        ),
        (Status::Answered, _) | (Status::Declined, _) => ("denied", t.tr("decided-denied")),
        (Status::Expired, _) => ("expired", t.tr("outcome-expired")),
        // The server's own words, never the agent's: its free-text reason is not shown here.
        (Status::Cancelled, _) if d.cancel_reason == Some(CancelReason::Abandoned) => (
            "cancelled",
            t.tr2(
                "outcome-stopped-waiting",
                "agent",
                clip(render::approval::agent_name(&a.harness), 40, Lines::Marked).with_note(),
                "clock",
                zone.clock(when, now),
            ),
        ),
        (Status::Cancelled, _) => ("cancelled", t.tr("decided-withdrawn")),
        (Status::Pending, _) => ("pending", render::heading(t, d, now)),
    };
    let late = match (a.answer_by, d.resolved_at) {
        _ if d.cancel_reason == Some(CancelReason::Abandoned) => Some(t.tr("outcome-withdrew")),
        (Some(by), Some(at)) if at > by && d.status == Status::Answered => {
            Some(t.tr1("outcome-late", "time", zone.date_time(by)))
        }
        _ => None,
    };
    Outcome {
        class,
        heading,
        remark: d.remark.clone(),
        when: zone.date_time(when),
        when_iso: render::iso(when),
        late,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_session_answer_says_what_it_allows() {
        let mut a = ApprovalSpec {
            harness: "claude".into(),
            tool_name: "Bash".into(),
            tool_input: json!({"command": "ls"}).as_object().unwrap().clone(),
            cwd: None,
            session_id: Some("s".into()),
            answer_by: None,
            editable: false,
            step_up: None,
            rule: None,
            honours_allowances: false,
        };
        assert_eq!(
            session_label(&render::T::default(), &a),
            "Allow all Bash commands in this session"
        );
        a.tool_name = "WebFetch".into();
        a.tool_input = json!({"prompt": "x"}).as_object().unwrap().clone();
        assert_eq!(
            session_label(&render::T::default(), &a),
            "Allow all WebFetch calls in this session"
        );
    }
}
