//! An inbox's feed: pending decisions, open to-dos done or skipped in one tap, and recent
//! history. `GET /inbox/{token}` (the feed link) binds the browser to the person with an
//! HttpOnly cookie and sends it on to `GET /inbox`, which shows the feed; the pages link
//! there, never to the link. Tool approvals are linked with their feed approval links,
//! which no API response shows, and so are decisions sent to people by name, with how far
//! they have come where several must answer. In an inbox of several people, the feed says
//! whose it is.

use crate::render::project::visible_project;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use time::OffsetDateTime;

use super::answer::FEED_PATH;
use super::reader::{Reader, page_t};
use super::session::session_url;
use super::templates::{
    FeedAllowance, FeedItem, FeedPage, FeedPaging, FeedTodo, PendingEntry, ProjectLink,
    SessionLink, error_page, error_page_for, failure_page, render,
};
use super::view::decided;
use super::{Token, device_cookie};
use crate::domain::tally;
use crate::domain::{Decision, Kind, PersonChannel, Status};
use crate::render::T;
use crate::render::approval::agent_name;
use crate::render::visible::{Lines, clip, visible};
use crate::render::{self, Zone, render_markdown};
use crate::service::{
    DEVICE_COOKIE, FeedCursor, SECURE_DEVICE_COOKIE, Service, ServiceError, Viewer, Waiting,
};
use crate::web::extract::Segment;

pub fn routes() -> Router<Service> {
    use axum::routing::get;
    Router::new()
        .route("/inbox", get(show_bound_feed))
        .route("/inbox/{token}", get(show_feed))
        .route(
            "/inbox/allowances/{id}/revoke",
            axum::routing::post(revoke_allowance),
        )
}

/// The person revokes a standing allowance from their feed, on a bound device (a post from
/// another site is refused before it gets here, `security::refuse_cross_site`), and is sent
/// back to the feed. Revoking only narrows what passes without asking.
async fn revoke_allowance(
    State(svc): State<Service>,
    Segment(id): Segment,
    headers: HeaderMap,
) -> Response {
    let viewer = match svc.device_viewer(device_cookie(&headers).as_deref()).await {
        Ok(v) => v,
        Err(ServiceError::NotFound) => {
            return error_page(
                page_t(&headers, None),
                StatusCode::FORBIDDEN,
                "err-not-linked",
                "err-not-linked-revoke",
            );
        }
        Err(e) => return feed_error(page_t(&headers, None), e),
    };
    let Ok(id) = uuid::Uuid::parse_str(&id) else {
        return feed_error(page_t(&headers, None), ServiceError::NotFound);
    };
    match svc.revoke_allowance_from_feed(&viewer, id).await {
        // Revoked, or already gone (ended, or revoked elsewhere): either way it is not there.
        Ok(()) | Err(ServiceError::NotFound) => {
            axum::response::Redirect::to(FEED_PATH).into_response()
        }
        Err(e) => feed_error(page_t(&headers, None), e),
    }
}

/// How long a device stays bound without opening the feed link again: 400 days, the most
/// browsers keep a cookie.
const DEVICE_COOKIE_MAX_AGE_S: u64 = 400 * 24 * 3600;
/// The most characters of an approval's command shown in its feed item.
const FEED_SUBJECT_CHARS: usize = 160;
/// The most characters of a to-do's context shown in the feed (its page shows all of it).
const FEED_CONTEXT_CHARS: usize = 1_000;

/// The feed link: binds this browser to its person (unless it already is) and sends it on
/// to `/inbox` with a 303, so the link leaves the address bar (and whatever reads it later:
/// a shared screen, the page's own script, a bookmark) at once.
async fn show_feed(
    State(svc): State<Service>,
    Token(token): Token,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let cookie = device_cookie(&headers);
    let new_cookie = match svc.bind_device(&token, cookie.as_deref()).await {
        Ok((_, new_cookie)) => new_cookie,
        Err(e) => return feed_error(page_t(&headers, None), e),
    };
    let target = match project_filter(query.as_deref()) {
        Some(p) => format!(
            "{FEED_PATH}?project={}",
            url::form_urlencoded::byte_serialize(p.as_bytes()).collect::<String>()
        ),
        None => FEED_PATH.to_string(),
    };
    let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, target)]).into_response();
    if let Some(value) = new_cookie {
        for cookie in device_cookies(&value, svc.settings().public_url.starts_with("https://")) {
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                resp.headers_mut().append(header::SET_COOKIE, v);
            }
        }
    }
    resp
}

/// The `Set-Cookie` values that bind a browser to the device `value`. Behind https the
/// cookie is `__Host-sayso_device` (Secure, `Path=/`, no `Domain`), and a `sayso_device` left
/// from before is cleared; over plain http it is `sayso_device`.
fn device_cookies(value: &str, https: bool) -> Vec<String> {
    let attributes = format!("Path=/; Max-Age={DEVICE_COOKIE_MAX_AGE_S}; HttpOnly; SameSite=Lax");
    if https {
        vec![
            format!("{SECURE_DEVICE_COOKIE}={value}; {attributes}; Secure"),
            format!("{DEVICE_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure"),
        ]
    } else {
        vec![format!("{DEVICE_COOKIE}={value}; {attributes}")]
    }
}

/// The feed of the inbox this browser is bound to, with the time the server took on it in a
/// `Server-Timing` header (the benchmark's measure; a browser's developer tools show it):
/// `data` reading what the feed shows, `page` writing its HTML, `app` the whole.
async fn show_bound_feed(
    State(svc): State<Service>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let started = Instant::now();
    let mut spent = Spent::default();
    let mut resp = bound_feed(&svc, &headers, query.as_deref(), &mut spent).await;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let timing = format!(
        "data;dur={:.2}, page;dur={:.2}, app;dur={:.2}",
        ms(spent.data),
        ms(spent.page),
        ms(started.elapsed())
    );
    if let Ok(v) = HeaderValue::from_str(&timing) {
        resp.headers_mut().insert("server-timing", v);
    }
    resp
}

/// Where a feed page's time went (`show_bound_feed`).
#[derive(Debug, Default)]
struct Spent {
    data: Duration,
    page: Duration,
}

async fn bound_feed(
    svc: &Service,
    headers: &HeaderMap,
    query: Option<&str>,
    spent: &mut Spent,
) -> Response {
    let filter = project_filter(query);
    let after = match page_cursor(query) {
        Ok(after) => after,
        Err(()) => return bad_cursor(page_t(headers, None)),
    };
    match svc.device_viewer(device_cookie(headers).as_deref()).await {
        Ok(viewer) => feed_response(svc, headers, viewer, filter, after, spent).await,
        Err(ServiceError::NotFound) => error_page(
            page_t(headers, None),
            StatusCode::FORBIDDEN,
            "err-not-linked",
            "err-not-linked-feed",
        ),
        Err(e) => feed_error(page_t(headers, None), e),
    }
}

fn project_filter(query: Option<&str>) -> Option<String> {
    query.and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .find(|(k, v)| k == "project" && !v.is_empty())
            .map(|(_, v)| v.into_owned())
    })
}

/// The page's place in the pending list, from its `after` parameter: `Ok(None)` for the
/// first page, `Err` for a cursor the feed never wrote (a hand-edited or cut link).
fn page_cursor(query: Option<&str>) -> Result<Option<FeedCursor>, ()> {
    let Some(q) = query else { return Ok(None) };
    match url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "after") {
        None => Ok(None),
        Some((_, v)) => FeedCursor::parse(&v).map(Some).ok_or(()),
    }
}

/// A 400 for a page link whose cursor the feed cannot read, with the way back to its first
/// page.
fn bad_cursor(t: T) -> Response {
    error_page_for(
        &Reader {
            to_feed: true,
            t,
            ..Reader::default()
        },
        StatusCode::BAD_REQUEST,
        "err-bad-cursor-heading",
        "err-bad-cursor",
    )
}

async fn feed_response(
    svc: &Service,
    headers: &HeaderMap,
    viewer: Viewer,
    filter: Option<String>,
    after: Option<FeedCursor>,
    spent: &mut Spent,
) -> Response {
    let started = Instant::now();
    let t = page_t(headers, viewer.person.lang);
    match svc.person_feed(viewer, filter.as_deref(), after).await {
        Ok(feed) => {
            let push_key = push_key(svc).await;
            spent.data = started.elapsed();
            let started = Instant::now();
            let resp = render(StatusCode::OK, &page(&t, svc, feed, filter, push_key));
            spent.page = started.elapsed();
            resp
        }
        Err(e) => feed_error(t, e),
    }
}

fn feed_error(t: T, e: ServiceError) -> Response {
    match e {
        ServiceError::NotFound => error_page(
            t,
            StatusCode::NOT_FOUND,
            "err-link-not-found",
            "err-no-inbox",
        ),
        e => failure_page(t, e, "err-unavailable", "the feed"),
    }
}

fn page(
    t: &T,
    svc: &Service,
    feed: crate::service::Feed,
    filter: Option<String>,
    push_key: String,
) -> FeedPage {
    let now = OffsetDateTime::now_utc();
    let zone = Zone::of(feed.zone.as_deref());
    // The feed's own address, never its link, so the link leaves no trace in the page.
    let base = FEED_PATH.to_string();
    let person = feed.viewer.person.id;
    let link = |d: &Decision| {
        if d.spec.approval.is_some() || d.spec.routing.is_some() {
            format!(
                "/a/{}",
                svc.tokens()
                    .approve_token(d.id, PersonChannel::Feed, person)
            )
        } else {
            format!("/d/{}", svc.tokens().answer_token(d.id))
        }
    };
    // An approval is named by what runs, never by the asker's question.
    let shown = |d: &Decision| {
        d.spec
            .approval
            .as_ref()
            .map(|a| render::what_runs::shown(t, a, FEED_SUBJECT_CHARS))
    };
    // An approval allowed with the person's edit is named by what runs: their command,
    // marked as theirs, with the agent's beside it.
    let ran = |d: &Decision| {
        d.ran_instead()
            .map(|c| clip(c, FEED_SUBJECT_CHARS, Lines::Marked).with_note())
    };
    let item = |d: &Decision, when: OffsetDateTime| FeedItem {
        question: shown(d).map_or_else(|| d.spec.question.clone(), |s| s.title),
        detail: ran(d).or_else(|| shown(d).map(|s| s.subject.with_note())),
        edited_from: ran(d).and(shown(d).map(|s| s.subject.with_note())),
        dangers: shown(d).map(|s| s.dangers).unwrap_or_default(),
        project: d.spec.project.as_deref().map(visible_project),
        kind: kind_in_words(t, d),
        status: d.status.as_str(),
        status_words: decided::words(t, d),
        decided_by: decided::by(t, d),
        url: link(d),
        when: zone.date_time(when),
        progress: None,
    };
    let (todos, pending): (Vec<&Decision>, Vec<&Decision>) =
        feed.pending.iter().partition(|d| d.kind() == Kind::Todo);
    // The feed's own address with the project filter, to which a page's cursor is added.
    let filtered = match &filter {
        Some(p) => format!(
            "{base}?project={}",
            url::form_urlencoded::byte_serialize(p.as_bytes()).collect::<String>()
        ),
        None => base.clone(),
    };
    let join = if filter.is_some() { '&' } else { '?' };
    let shown = feed.pending.len();
    let (heading, title_count) = match feed.waiting {
        Waiting::Exactly(0) => (t.tr("feed-nothing-waiting"), None),
        Waiting::Exactly(n) => (t.tr1("feed-waiting", "count", n), Some(n.to_string())),
        Waiting::MoreThan(n) => (
            t.tr1("feed-waiting-more-than", "count", n),
            Some(format!("{n}+")),
        ),
        Waiting::Unknown if feed.first_page && shown > 0 => (
            t.tr1("feed-waiting-or-more", "count", shown),
            Some(format!("{shown}+")),
        ),
        Waiting::Unknown => (t.tr("feed-waiting-unknown"), None),
    };
    let paging = (feed.next.is_some() || !feed.first_page).then(|| FeedPaging {
        shown: if feed.first_page {
            t.tr1("feed-paging-first", "count", shown)
        } else {
            t.tr1("feed-paging-later", "count", shown)
        },
        next_url: feed
            .next
            .map(|c| format!("{filtered}{join}after={}", c.encode())),
        first_url: (!feed.first_page).then(|| filtered.clone()),
    });
    let more_pages = feed.next.is_some() || !feed.first_page;
    FeedPage {
        inbox_name: feed.viewer.inbox.name.clone(),
        person_name: feed.shared.then(|| feed.viewer.person.name.clone()),
        heading,
        title_count,
        paging,
        projects: feed
            .projects
            .iter()
            .map(|p| ProjectLink {
                name: visible_project(p).name,
                title: visible_project(p).path,
                url: format!(
                    "{base}?project={}",
                    url::form_urlencoded::byte_serialize(p.as_bytes()).collect::<String>()
                ),
                active: filter.as_deref() == Some(p),
            })
            .collect(),
        filter,
        all_url: base.clone(),
        pending_count: pending.len(),
        pending: gather_sessions(t, &pending, more_pages, |d| FeedItem {
            when: render::time_left(t, d.expires_at, now),
            progress: tally::progress(d),
            ..item(d, d.expires_at)
        }),
        todos: todos
            .iter()
            .map(|d| FeedTodo {
                question: visible(&d.spec.question, Lines::Marked),
                context_html: d.spec.context_md.as_deref().map(todo_context),
                project: d.spec.project.as_deref().map(visible_project),
                action: link(d),
                when: render::time_left(t, d.expires_at, now),
            })
            .collect(),
        history: feed
            .recent
            .iter()
            .filter(|d| d.status != Status::Pending)
            .map(|d| item(d, d.resolved_at.unwrap_or(d.expires_at)))
            .collect(),
        push_key,
        push_url: format!("{base}/push"),
        has_passkey: feed.has_passkey,
        to_feed: false,
        secure_context: crate::domain::origin::is_secure_context(&svc.settings().public_url),
        allowances: feed
            .allowances
            .iter()
            .map(|a| feed_allowance(t, a, &zone, now))
            .collect(),
        t: *t,
    }
}

/// A standing allowance as the feed lists it, with the calls it let through; every text in
/// it is visible.
fn feed_allowance(
    t: &T,
    a: &crate::service::AllowanceUses,
    zone: &Zone,
    now: OffsetDateTime,
) -> FeedAllowance {
    let (allowance, s) = (&a.allowance, &a.allowance.scope);
    let covers = render::allowance::covers(t, s);
    FeedAllowance {
        headline: render::allowance::headline(t, s, allowance.until, zone, now),
        uses_words: render::allowance::uses_words(t, a.count),
        what: covers.sentence(),
        rule: covers.rule,
        until_iso: render::iso(allowance.until),
        by: allowance
            .person
            .as_deref()
            .map(|p| visible(p, Lines::Marked)),
        uses: a
            .uses
            .iter()
            .map(|u| render::allowance::use_line(u, zone, now))
            .collect(),
        more_uses: a.count.saturating_sub(a.uses.len() as u64),
        id: allowance.id.to_string(),
        revoke: format!("/inbox/allowances/{}/revoke", allowance.id),
    }
}

/// The pending list, in order, with the approvals of an agent session that has more than
/// one waiting gathered where its first one stands, under the link to the session page.
/// With `more_pages`, the page holds only some of the list, and a session's count on it may
/// not be all of the session's calls (its own page shows them all), so none is given.
fn gather_sessions(
    t: &T,
    pending: &[&Decision],
    more_pages: bool,
    item: impl Fn(&Decision) -> FeedItem,
) -> Vec<PendingEntry> {
    let key = |d: &Decision| {
        let a = d.spec.approval.as_ref()?;
        Some((a.harness.clone(), a.session_id.clone()?))
    };
    let mut entries: Vec<PendingEntry> = Vec::new();
    let mut placed: Vec<((String, String), usize)> = Vec::new();
    for d in pending {
        let Some(k) = key(d) else {
            entries.push(PendingEntry {
                session: None,
                items: vec![item(d)],
            });
            continue;
        };
        if let Some((_, at)) = placed.iter().find(|(p, _)| *p == k) {
            entries[*at].items.push(item(d));
            continue;
        }
        let count = pending
            .iter()
            .filter(|o| key(o).as_ref() == Some(&k))
            .count();
        let agent = visible(agent_name(&k.0), Lines::Marked);
        let session = clip(&k.1, 24, Lines::Marked).with_note();
        let session = (count > 1).then(|| SessionLink {
            label: if more_pages {
                t.tr2("feed-session-link", "agent", agent, "session", session)
            } else {
                t.tr3(
                    "feed-session-link-count",
                    "count",
                    count,
                    "agent",
                    agent,
                    "session",
                    session,
                )
            },
            url: d
                .spec
                .approval
                .as_ref()
                .and_then(session_url)
                .unwrap_or_default(),
        });
        placed.push((k, entries.len()));
        entries.push(PendingEntry {
            session,
            items: vec![item(d)],
        });
    }
    entries
}

/// What kind of answer a decision asks for, in the person's words. An approval (a decision
/// with an `approval` block from a harness) is an approval, whatever kind carries it.
fn kind_in_words(t: &T, d: &Decision) -> String {
    if d.spec.approval.is_some() {
        return t.tr("kind-approval");
    }
    t.tr(match d.kind() {
        Kind::Bool => "kind-bool",
        Kind::Choose => "kind-choose",
        Kind::Text => "kind-text",
        Kind::Form => "kind-form",
        Kind::Todo => "kind-todo",
    })
}

/// A to-do's context for the feed: every hidden character shown as its code point (as on
/// an approval's page), cut to a few lines with a note saying so, then rendered as the
/// answer page renders context (Markdown made safe).
fn todo_context(source: &str) -> String {
    render_markdown(&clip(source, FEED_CONTEXT_CHARS, Lines::Kept).with_note())
}

/// The VAPID public key, or empty (the page then offers no push) when it cannot be read.
async fn push_key(svc: &Service) -> String {
    svc.vapid_public_key().await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "no VAPID key for the feed page");
        String::new()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behind_https_the_device_cookie_is_host_only_and_the_old_one_cleared() {
        let set = device_cookies("v", true);
        assert!(
            set[0].starts_with("__Host-sayso_device=v; Path=/; Max-Age="),
            "{set:?}"
        );
        assert!(
            set[0].ends_with("; HttpOnly; SameSite=Lax; Secure"),
            "{set:?}"
        );
        assert!(!set[0].contains("Domain"), "{set:?}");
        assert!(
            set[1].starts_with("sayso_device=; Path=/; Max-Age=0;"),
            "{set:?}"
        );
        let set = device_cookies("v", false);
        assert_eq!(set.len(), 1);
        assert!(set[0].starts_with("sayso_device=v; Path=/;"), "{set:?}");
        assert!(!set[0].contains("Secure"), "{set:?}");
    }
}
