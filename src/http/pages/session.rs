//! One screen for the approvals a coding agent's session asks at once (parallel tool calls,
//! a batch of edits): `GET /inbox/session?harness=…&session=…` on a device bound to the
//! person (docs/PAGES.md). Each call is shown in full, as its own approval page shows it
//! (what runs, made visible, cut with a note), numbered, with its own Deny and Allow side by
//! side; each form posts to that call's own approval link (`/a/{token}`), so every answer
//! takes the very path of the single page, and comes back here.
//!
//! "Allow all" is offered only where every call could be allowed right here: none cut, none
//! wanting a passkey, none needing more than one person's Allow. Those are answered on their
//! own page. "Deny all" is always offered. Both post the tokens of exactly the calls shown,
//! so a call that arrived after the page was drawn is never answered unseen; the server
//! checks each again before answering any.

use crate::render::project::visible_project;
use askama::Template;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde_json::Value;
use time::OffsetDateTime;

use super::answer::FEED_PATH;
use super::approval::Cut;
use super::device_cookie;
use super::reader::page_t;
use super::submitted::Submitted;
use super::templates::{error_page, failure_page, render};
use super::what_runs::{FieldView, SHOWN_CHARS, What, is_cut, what};
use crate::domain::approval::{ALLOW, Action, ApprovalSpec, DENY, action_of};
use crate::domain::danger::dangers;
use crate::domain::tally;
use crate::domain::{AnswerInput, Decision, PersonChannel};
use crate::render::T;
use crate::render::approval::agent_name;
use crate::render::visible::{Lines, cut_note, visible};
use crate::render::{self, Zone, what_runs};
use crate::service::{Service, ServiceError, Viewer};

/// The page's own address.
pub const SESSION_PATH: &str = "/inbox/session";

pub fn routes() -> Router<Service> {
    use axum::routing::get;
    Router::new().route(SESSION_PATH, get(show_session).post(answer_all))
}

/// The session page of the approval `a` (where an answer from there returns).
pub fn session_url(a: &ApprovalSpec) -> Option<String> {
    let session = a.session_id.as_deref()?;
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    Some(format!(
        "{SESSION_PATH}?harness={}&session={}",
        enc(&a.harness),
        enc(session)
    ))
}

#[derive(Template)]
#[template(path = "session.html")]
pub struct SessionPage {
    /// "Claude Code".
    pub agent: String,
    pub session_id: String,
    pub project: Option<crate::render::project::ProjectName>,
    pub calls: Vec<CallView>,
    /// Every call can be allowed here: the page offers "Allow all".
    pub allow_all: bool,
    /// Why it does not, one line per call that cannot.
    pub not_all: Vec<String>,
    pub errors: Vec<String>,
    /// What the "all" forms send back: the harness and session.
    pub harness: String,
    pub session: String,
    pub action: String,
    pub allow: &'static str,
    pub deny: &'static str,
    pub to_feed: bool,
    /// The page's language.
    pub t: crate::render::T,
}

/// One call of the session, as its own approval page shows it.
pub struct CallView {
    /// 1-based, as the person counts them.
    pub number: usize,
    pub title: String,
    pub description: Option<String>,
    pub dangers: Vec<&'static str>,
    pub tool_name: String,
    pub what: What,
    /// Every field of the input the rendering of `what` does not show.
    pub fields: Vec<FieldView>,
    pub cut: Option<Cut>,
    pub cwd: Option<String>,
    pub rule: Option<String>,
    pub expires: String,
    pub progress: Option<String>,
    /// The call's own approval link: its forms post there, and its page opens there.
    pub action: String,
    /// That link's token, which "Allow all" and "Deny all" send for this call.
    pub token: String,
    /// Why Allow is given on the call's own page only; `None` when it is given here.
    pub allow_elsewhere: Option<String>,
}

/// What the page is asked for.
struct Which {
    harness: String,
    session: String,
}

impl Which {
    fn parse(query: Option<&str>) -> Option<Which> {
        let mut harness = None;
        let mut session = None;
        for (k, v) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            match &*k {
                "harness" => harness = Some(v.into_owned()),
                "session" => session = Some(v.into_owned()),
                _ => {}
            }
        }
        Some(Which {
            harness: harness.filter(|h| !h.is_empty())?,
            session: session.filter(|s| !s.is_empty())?,
        })
    }

    fn holds(&self, d: &Decision) -> bool {
        d.spec.approval.as_ref().is_some_and(|a| {
            a.harness == self.harness && a.session_id.as_deref() == Some(self.session.as_str())
        })
    }
}

async fn show_session(
    State(svc): State<Service>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let Some(which) = Which::parse(query.as_deref()) else {
        return bad_query(page_t(&headers, None));
    };
    let viewer = match svc.device_viewer(device_cookie(&headers).as_deref()).await {
        Ok(v) => v,
        Err(e) => return viewer_error(page_t(&headers, None), e),
    };
    session_page(
        &svc,
        page_t(&headers, viewer.person.lang),
        viewer,
        &which,
        StatusCode::OK,
        Vec::new(),
    )
    .await
}

/// The calls of `which` still waiting for `viewer`, in the order the agent asked them.
async fn pending_calls(
    svc: &Service,
    viewer: Viewer,
    which: &Which,
) -> Result<(Viewer, Vec<Decision>, Zone), ServiceError> {
    let mut calls = svc.all_pending_asking(&viewer, |d| which.holds(d)).await?;
    let zone = Zone::of(svc.viewer_zone(&viewer).await?.as_deref());
    calls.sort_by_key(|d| (d.created_at, d.id));
    Ok((viewer, calls, zone))
}

async fn session_page(
    svc: &Service,
    t: T,
    viewer: Viewer,
    which: &Which,
    status: StatusCode,
    errors: Vec<String>,
) -> Response {
    let (viewer, calls, zone) = match pending_calls(svc, viewer, which).await {
        Ok(found) => found,
        Err(e) => return viewer_error(t, e),
    };
    let now = OffsetDateTime::now_utc();
    let views: Vec<CallView> = calls
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let a = d.spec.approval.as_ref()?;
            let token = svc
                .tokens()
                .approve_token(d.id, PersonChannel::Feed, viewer.person.id);
            Some(call_view(&t, i + 1, d, a, &token, now, &zone))
        })
        .collect();
    let not_all: Vec<String> = views
        .iter()
        .filter_map(|c| {
            c.allow_elsewhere
                .as_ref()
                .map(|why| t.tr2("session-call-elsewhere", "number", c.number, "why", why))
        })
        .collect();
    let page = SessionPage {
        agent: visible(agent_name(&which.harness), Lines::Marked),
        session_id: visible(&which.session, Lines::Marked),
        project: calls
            .first()
            .and_then(|d| d.spec.project.as_deref())
            .map(visible_project),
        allow_all: views.len() > 1 && not_all.is_empty(),
        not_all,
        calls: views,
        errors,
        harness: which.harness.clone(),
        session: which.session.clone(),
        action: SESSION_PATH.to_string(),
        allow: ALLOW,
        deny: DENY,
        to_feed: true,
        t,
    };
    render(status, &page)
}

fn call_view(
    t: &T,
    number: usize,
    d: &Decision,
    a: &ApprovalSpec,
    token: &str,
    now: OffsetDateTime,
    zone: &Zone,
) -> CallView {
    let action = format!("/a/{token}");
    let input = Value::Object(a.tool_input.clone());
    let shown = what(&a.tool_name, &input, SHOWN_CHARS);
    let found = match action_of(&a.tool_name, &input) {
        Action::Shell { command } => dangers(command).into_iter().map(|d| d.reason).collect(),
        _ => Vec::new(),
    };
    let by = a.answer_by.filter(|by| *by > now).unwrap_or(d.expires_at);
    CallView {
        number,
        title: what_runs::title(t, a),
        description: what_runs::description(a),
        dangers: found,
        tool_name: visible(&a.tool_name, Lines::Marked),
        what: shown.what,
        fields: shown.fields,
        cut: (shown.left_out > 0).then(|| Cut {
            note: cut_note(shown.left_out),
            whole_url: format!("{action}?whole=1"),
        }),
        cwd: a.cwd.as_deref().map(|c| visible(c, Lines::Marked)),
        rule: a.rule.as_deref().map(|r| visible(r, Lines::Marked)),
        expires: t.tr2(
            "session-waits",
            "for",
            render::time_for(t, by, now),
            "clock",
            zone.clock(by, now),
        ),
        progress: tally::progress(d),
        allow_elsewhere: allow_elsewhere(d, a).map(|id| t.tr(id)),
        action,
        token: token.to_string(),
    }
}

/// Why `d` cannot be allowed from this screen (so neither by "Allow all"): its own page
/// shows all of a long change, asks the passkey, and counts one of several people's Allow
/// with its progress. `None` when one tap here may allow it.
fn allow_elsewhere(d: &Decision, a: &ApprovalSpec) -> Option<&'static str> {
    if a.step_up.is_some() {
        Some("session-why-passkey")
    } else if tally::required(d) > 1 {
        Some("session-why-people")
    } else if is_cut(a) {
        Some("session-why-long")
    } else {
        None
    }
}

/// "Allow all" or "Deny all": the calls the page showed (their approval links, `call`),
/// each answered through the service's one answer path, as its own page would. Every call
/// is checked before any is answered: a call not the viewer's, or one this screen cannot
/// allow, answers none.
async fn answer_all(State(svc): State<Service>, headers: HeaderMap, body: Bytes) -> Response {
    let sent = Submitted::parse(&body);
    let which = match (sent.get("harness"), sent.get("session")) {
        (Some(h), Some(s)) if !h.is_empty() && !s.is_empty() => Which {
            harness: h.to_string(),
            session: s.to_string(),
        },
        _ => return bad_query(page_t(&headers, None)),
    };
    let device = device_cookie(&headers);
    let viewer = match svc.device_viewer(device.as_deref()).await {
        Ok(v) => v,
        Err(e) => return viewer_error(page_t(&headers, None), e),
    };
    let t = page_t(&headers, viewer.person.lang);
    let refused = |svc, viewer, which, errors| async move {
        session_page(
            svc,
            t,
            viewer,
            which,
            StatusCode::UNPROCESSABLE_ENTITY,
            errors,
        )
        .await
    };
    let value = match sent.get("value") {
        Some(v) if v == ALLOW || v == DENY => v,
        _ => return refused(&svc, viewer, &which, vec![t.tr("session-refused-value")]).await,
    };
    let open = match calls_to_answer(&svc, t, &viewer, &which, value, &sent.all("call")).await {
        Ok(open) => open,
        Err(Refusal::Page(why)) => return refused(&svc, viewer, &which, vec![why]).await,
        Err(Refusal::Service(e)) => return viewer_error(page_t(&headers, None), e),
    };
    let input = AnswerInput {
        value: Some(Value::from(value)),
        ..AnswerInput::default()
    };
    let mut errors = Vec::new();
    for token in open {
        match svc.submit_approval(token, &input, device.as_deref()).await {
            Ok(_) | Err(ServiceError::AlreadyResolved(_) | ServiceError::Expired(_)) => {}
            Err(ServiceError::Validation(issues)) => {
                errors.extend(issues.into_iter().map(|i| i.message));
            }
            Err(e) => return viewer_error(page_t(&headers, None), e),
        }
    }
    if errors.is_empty() {
        return Redirect::to(FEED_PATH).into_response();
    }
    refused(&svc, viewer, &which, errors).await
}

/// Why "Allow all" or "Deny all" answers nothing: a sentence for the page, in the viewer's
/// language, or the service's failure.
enum Refusal {
    Page(String),
    Service(ServiceError),
}

/// The calls `tokens` that `value` answers, every one checked before any is answered: the
/// viewer's own, of this session, and (for Allow) one this screen may allow. Answered or
/// expired ones are left out (someone else got there first).
async fn calls_to_answer<'a>(
    svc: &Service,
    t: T,
    viewer: &Viewer,
    which: &Which,
    value: &str,
    tokens: &[&'a str],
) -> Result<Vec<&'a str>, Refusal> {
    let not_ours = || Refusal::Page(t.tr("session-refused-not-ours"));
    if tokens.is_empty() {
        return Err(Refusal::Page(t.tr("session-refused-none")));
    }
    let mut open = Vec::new();
    for token in tokens {
        let (d, _, person) = match svc.approval_by_token(token).await {
            Ok(found) => found,
            Err(ServiceError::AlreadyResolved(_) | ServiceError::Expired(_)) => continue,
            Err(ServiceError::NotFound) => return Err(not_ours()),
            Err(e) => return Err(Refusal::Service(e)),
        };
        let Some(a) = d
            .spec
            .approval
            .as_ref()
            .filter(|_| which.holds(&d) && person.id == viewer.person.id)
        else {
            return Err(not_ours());
        };
        if value == ALLOW
            && let Some(why) = allow_elsewhere(&d, a)
        {
            let why = t.tr(why);
            return Err(Refusal::Page(t.tr1("session-refused-allow", "why", why)));
        }
        open.push(*token);
    }
    Ok(open)
}

fn bad_query(t: T) -> Response {
    error_page(
        t,
        StatusCode::BAD_REQUEST,
        "err-which-session",
        "err-which-session-text",
    )
}

fn viewer_error(t: T, e: ServiceError) -> Response {
    match e {
        ServiceError::NotFound => error_page(
            t,
            StatusCode::FORBIDDEN,
            "err-not-linked",
            "err-not-linked-session",
        ),
        e => failure_page(t, e, "err-unavailable-nothing-answered", "the session page"),
    }
}
