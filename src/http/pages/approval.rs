//! The approval page: a coding agent's tool call laid out for a glance on a phone (the
//! command highlighted, an edit as a diff, a write with its path and size, a fetch with its
//! host; where and in which session), with one-tap Allow / Allow for this session / Deny.
//! It posts the same form as every answer page (`value` is the label), so answering and
//! the rules of DESIGN.md §4 are those of any `choose` decision.

use askama::Template;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;
use time::OffsetDateTime;

use super::submitted::Submitted;
use super::templates::render;
use super::view::{self, PageErrors, PeopleView, PersonLink};
use crate::domain::approval::{
    ALLOW, ALLOW_SESSION, Action, ApprovalSpec, DENY, action_of, size_in_words, unified_diff,
};
use crate::domain::{Decision, Status};
use crate::render;

/// Most characters of a written file or a diff shown.
const SHOWN_CHARS: usize = 20_000;

#[derive(Template)]
#[template(path = "approval.html")]
pub struct ApprovalPage {
    pub action: String,
    /// Pending, but opened through its `web_url`, which only shows it: the page says where
    /// it is answered instead of offering buttons.
    pub elsewhere: bool,
    pub question: String,
    pub project: Option<String>,
    pub expires_in: Option<String>,
    pub expires_iso: String,
    pub agent: String,
    pub tool_name: String,
    pub what: What,
    pub cwd: Option<String>,
    pub session_id: Option<String>,
    /// Pending: the buttons are shown.
    pub open: bool,
    pub with_session: bool,
    /// Set once the agent has stopped waiting for this answer.
    pub stopped_waiting: Option<String>,
    /// The one answer a notification's link asked to confirm (`?confirm=Allow`): the page
    /// then offers that button alone, still only a POST decides.
    pub confirm: Option<&'static str>,
    /// An editable command: the text box's content (the command, or what was sent).
    pub edit_command: Option<String>,
    pub remark: String,
    pub errors: Vec<String>,
    pub result: Option<Outcome>,
    pub allow: &'static str,
    pub deny: &'static str,
    pub allow_session: &'static str,
    /// The rule wants a passkey with the Allow: the page says so, and its script asks the
    /// passkey (options from `passkey_url`) before an Allow is posted.
    pub step_up: bool,
    pub passkey_url: String,
    /// Progress, the viewer's own answer, who resolved it, who answers it instead.
    pub people: PeopleView,
}

/// What the call does, ready for the template.
pub enum What {
    /// A shell command, split into highlighted pieces: (class, text).
    Shell(Vec<(&'static str, String)>),
    /// A diff, one (class, line) per line.
    Diff {
        path: Option<String>,
        lines: Vec<(&'static str, String)>,
    },
    Write {
        path: String,
        size: String,
        content: String,
        cut: bool,
    },
    Fetch {
        host: String,
        url: String,
    },
    Other(String),
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

/// The approval page of `d`. `link` is the person link the form posts to; `None` for the
/// page its `web_url` shows, which offers no answer (an agent holds that link).
pub fn approval_page(
    status: StatusCode,
    link: Option<&PersonLink>,
    d: &Decision,
    a: &ApprovalSpec,
    sent: Option<&Submitted>,
    errors: &PageErrors,
    confirm: Option<&str>,
) -> Response {
    let now = OffsetDateTime::now_utc();
    let confirm = [ALLOW, DENY, ALLOW_SESSION]
        .into_iter()
        .find(|label| confirm == Some(*label))
        .filter(|label| *label != ALLOW_SESSION || a.session_id.is_some());
    let pending = d.is_open_at(now);
    let action = link.map(|l| l.action.as_str());
    let people = view::people_view(d, link, now);
    // The person's Allow counted, and the approval waits for others: nothing to send.
    let open = pending && action.is_some() && people.yours.is_none();
    let input = Value::Object(a.tool_input.clone());
    let stopped = a.answer_by.filter(|by| *by <= now);
    let page = ApprovalPage {
        action: action.unwrap_or_default().to_string(),
        elsewhere: pending && action.is_none(),
        question: d.spec.question.clone(),
        project: d.spec.project.clone(),
        // While the agent waits, that is the time that counts; after, the question's own.
        expires_in: pending.then(|| match a.answer_by.filter(|by| *by > now) {
            Some(by) => format!("The agent waits for your answer {}", render::time_left(by, now)),
            None => format!("Open {}", render::time_left(d.expires_at, now)),
        }),
        expires_iso: render::iso(a.answer_by.filter(|by| *by > now).unwrap_or(d.expires_at)),
        agent: render::approval::agent_name(&a.harness).to_string(),
        tool_name: a.tool_name.clone(),
        what: what(&a.tool_name, &input),
        cwd: a.cwd.clone(),
        session_id: a.session_id.clone(),
        open,
        with_session: a.session_id.is_some(),
        stopped_waiting: (open && stopped.is_some()).then(|| {
            format!(
                "The agent stopped waiting at {}; an answer now is recorded, but it went on without it.",
                render::format_time(stopped.unwrap_or(now))
            )
        }),
        confirm,
        edit_command: match action_of(&a.tool_name, &input) {
            Action::Shell { command } if a.editable => Some(
                sent.and_then(|s| s.get("command"))
                    .unwrap_or(command)
                    .to_string(),
            ),
            _ => None,
        },
        remark: sent
            .and_then(|s| s.get("remark"))
            .unwrap_or_default()
            .to_string(),
        errors: errors.summary.clone(),
        result: (!pending && d.status != Status::Pending).then(|| outcome(d, a, now)),
        allow: ALLOW,
        deny: DENY,
        allow_session: ALLOW_SESSION,
        step_up: a.step_up.is_some(),
        passkey_url: match action {
            Some(action) if open && a.step_up.is_some() => format!("{action}/passkey"),
            _ => String::new(),
        },
        people,
    };
    render(status, &page)
}

fn what(tool_name: &str, input: &Value) -> What {
    match action_of(tool_name, input) {
        Action::Shell { command } => What::Shell(highlight(command)),
        Action::Edit { path, old, new } => What::Diff {
            path: path.map(str::to_string),
            lines: diff_lines(&unified_diff(path.unwrap_or("file"), old, new)),
        },
        Action::Patch { patch } => What::Diff {
            path: None,
            lines: diff_lines(patch),
        },
        Action::Write { path, content } => {
            let shown = cut(content);
            What::Write {
                path: path.to_string(),
                size: size_in_words(content.len()),
                cut: shown.len() < content.len(),
                content: shown.to_string(),
            }
        }
        Action::Fetch { url } => What::Fetch {
            host: url::Url::parse(url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
                .unwrap_or_else(|| "(no host)".into()),
            url: url.to_string(),
        },
        Action::Other => What::Other(serde_json::to_string_pretty(input).unwrap_or_default()),
    }
}

fn cut(s: &str) -> &str {
    match s.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

fn diff_lines(diff: &str) -> Vec<(&'static str, String)> {
    cut(diff)
        .lines()
        .map(|l| {
            let class = if l.starts_with("+++") || l.starts_with("---") {
                "file"
            } else if l.starts_with("@@") || l.starts_with("***") {
                "hunk"
            } else if l.starts_with('+') {
                "add"
            } else if l.starts_with('-') {
                "del"
            } else {
                "ctx"
            };
            (class, l.to_string())
        })
        .collect()
}

/// Splits a shell command into pieces to colour: the program of each simple command,
/// flags, quoted strings, variables, and the operators that chain or redirect.
pub fn highlight(command: &str) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let chars: Vec<char> = command.chars().collect();
    let mut i = 0;
    let mut expect_program = true;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let class = if c.is_whitespace() {
            while i < chars.len() && chars[i].is_whitespace() {
                i += 1;
            }
            ""
        } else if c == '\'' || c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' && c == '"' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(chars.len());
            expect_program = false;
            "str"
        } else if "|&;<>()".contains(c) {
            while i < chars.len() && "|&;<>".contains(chars[i]) {
                i += 1;
            }
            i = i.max(start + 1);
            expect_program = !chars[start..i].iter().all(|c| *c == '<' || *c == '>');
            "op"
        } else {
            while i < chars.len() && !chars[i].is_whitespace() && !"|&;<>()'\"".contains(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if word.starts_with('$') {
                "var"
            } else if expect_program && !word.contains('=') {
                expect_program = false;
                "cmd"
            } else if word.starts_with('-') {
                "flag"
            } else {
                ""
            }
        };
        let text: String = chars[start..i].iter().collect();
        match out.last_mut() {
            Some((last, t)) if *last == class && class.is_empty() => t.push_str(&text),
            _ => out.push((class, text)),
        }
    }
    out
}

fn outcome(d: &Decision, a: &ApprovalSpec, now: OffsetDateTime) -> Outcome {
    let when = d.resolved_at.unwrap_or(d.expires_at);
    let (class, heading) = match (d.status, d.outcome.as_ref().and_then(Value::as_str)) {
        (Status::Answered, Some(ALLOW)) if d.custom => {
            ("allowed", "Allowed, with the command edited".to_string())
        }
        (Status::Answered, Some(ALLOW)) => ("allowed", "Allowed".to_string()),
        (Status::Answered, Some(ALLOW_SESSION)) => (
            "allowed",
            format!("Allowed {} for this session", a.tool_name),
        ),
        (Status::Answered, _) | (Status::Declined, _) => ("denied", "Denied".to_string()),
        (Status::Expired, _) => ("expired", "Nobody answered in time".to_string()),
        (Status::Cancelled, _) => ("cancelled", "Withdrawn by the agent".to_string()),
        (Status::Pending, _) => ("pending", render::heading(d, now).to_string()),
    };
    let late = match (a.answer_by, d.resolved_at) {
        (Some(by), Some(at)) if at > by && d.status == Status::Answered => Some(format!(
            "This answer came after the agent stopped waiting at {}: it is recorded, but the agent had already gone on without it.",
            render::format_time(by)
        )),
        _ => None,
    };
    Outcome {
        class,
        heading,
        remark: d.remark.clone(),
        when: render::format_time(when),
        when_iso: render::iso(when),
        late,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_split_into_what_to_colour() {
        let h = highlight("cd build && rm -rf \"out dir\" $HOME/x > log");
        let classed: Vec<(&str, &str)> = h
            .iter()
            .filter(|(c, _)| !c.is_empty())
            .map(|(c, t)| (*c, t.as_str()))
            .collect();
        assert_eq!(
            classed,
            [
                ("cmd", "cd"),
                ("op", "&&"),
                ("cmd", "rm"),
                ("flag", "-rf"),
                ("str", "\"out dir\""),
                ("var", "$HOME/x"),
                ("op", ">"),
            ]
        );
        let whole: String = h.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(whole, "cd build && rm -rf \"out dir\" $HOME/x > log");
    }

    #[test]
    fn diff_lines_are_classed() {
        let lines = diff_lines(&unified_diff("a.rs", "x", "y"));
        let classes: Vec<&str> = lines.iter().map(|(c, _)| *c).collect();
        assert_eq!(classes, ["file", "file", "hunk", "del", "add"]);
    }
}
