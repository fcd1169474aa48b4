//! The answer page of a decision (docs/PAGES.md). `GET` only shows; only `POST` decides, so
//! mail scanners and link previews that fetch a link decide nothing. A `POST` is a browser
//! form (303 back to the page) or JSON (200 with the resolution), told apart by its
//! `Content-Type`.

use crate::render::project::visible_project;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::Token;
use super::approval::PageQuery;
use super::reader::Reader;
use super::refusal::refusal_page;
use super::submitted::Submitted;
use super::templates::{AnswerPage, error_page, error_page_for, render};
use super::view::{self, PageErrors, PersonLink};
use crate::domain::answer_text::answer_text;
use crate::domain::{AnswerInput, Decision, Issue, Kind, OutcomeSource, Status};
use crate::render::{self, render_markdown};
use crate::service::{Service, ServiceError};
use crate::web::error::ApiError;
use crate::web::extract::parse_json;

pub fn routes() -> Router<Service> {
    use axum::routing::get;
    Router::new()
        .route("/d/{token}", get(show_answer_page).post(submit_answer))
        .route("/d/{token}/image", get(context_image))
}

/// The answer page of a decision, for the person; showing it changes nothing.
#[utoipa::path(
    get, path = "/d/{token}", tag = "answers",
    params(
        ("token" = String, Path, description = "The token of the decision's `web_url`."),
    ),
    responses(
        (status = 200, description = "The page: its controls while the decision is pending, its \
         outcome once resolved. A tool approval's page only shows the call, and the page of a \
         decision sent to people by name only shows the question: they are answered from the \
         people's feeds or notifications.", content_type = "text/html", body = String),
        (status = 404, description = "No decision behind this link.", content_type = "text/html", body = String),
        (status = 429, response = crate::http::shapes::TooManyRequests),
        (status = 503, description = "The database cannot be reached.", content_type = "text/html", body = String),
    )
)]
pub(crate) async fn show_answer_page(
    State(svc): State<Service>,
    Token(token): Token,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    // A tool approval is only shown here (the link is the agent's); its mail's `?confirm=`
    // links are approval links, `/a/{token}` (approve.rs). `?whole=1` shows all of a long
    // change.
    let d = match svc.view_by_token(&token).await {
        Ok(d) => d,
        Err(e) => return service_error_page(&svc, &headers, &token, e).await,
    };
    let reader = Reader::of(&svc, &headers, None, d.inbox_id).await;
    if d.spec.approval.is_some() {
        let query = PageQuery::parse(query.as_deref());
        let shown = PageQuery {
            whole: query.whole,
            confirm: None,
        };
        view_page(StatusCode::OK, &d, &shown, &reader)
    } else {
        let errors = PageErrors::default();
        answer_page(StatusCode::OK, &token, &d, None, &errors, &reader)
    }
}

/// Answers a decision through its link, as the answer page does. (A browser form post,
/// `application/x-www-form-urlencoded`, is answered with a 303 back to the page instead.)
#[utoipa::path(
    post, path = "/d/{token}", tag = "answers",
    params(("token" = String, Path, description = "The token of the decision's `web_url`.")),
    request_body(content = AnswerInput, examples(
        ("yes" = (summary = "bool", value = json!({"action": "answer", "value": "yes", "remark": "after 6pm"}))),
        ("choose" = (summary = "choose", value = json!({"action": "answer", "value": "PostgreSQL"}))),
        ("other" = (summary = "choose, Other", value = json!({"action": "answer", "other": "MariaDB"}))),
        ("form" = (summary = "form", value = json!({"action": "answer", "value": {"email": "ada@example.com", "admin": false}}))),
        ("decline" = (summary = "decline", value = json!({"action": "decline"}))),
        ("done" = (summary = "todo", value = json!({"action": "done"}))),
    )),
    responses(
        (status = 200, description = "The resolution.", body = AnswerResult),
        (status = 403, response = crate::http::shapes::AnswerElsewhere),
        (status = 404, response = crate::http::shapes::NotFound),
        (status = 409, response = crate::http::shapes::AlreadyResolved),
        (status = 410, response = crate::http::shapes::Expired),
        (status = 429, response = crate::http::shapes::TooManyRequests),
        (status = 503, response = crate::http::shapes::Unavailable),
        crate::http::shapes::BodyRefusals,
    )
)]
pub(crate) async fn submit_answer(
    State(svc): State<Service>,
    Token(token): Token,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let is_form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    let device = super::device_cookie(&headers);
    let device = device.as_deref();
    if is_form {
        submit_form(&svc, &headers, &token, &body, device).await
    } else {
        submit_json(&svc, &token, &body, device)
            .await
            .unwrap_or_else(IntoResponse::into_response)
    }
}

/// A browser's form post: 303 back to the page (or the feed), or the page again with the
/// problems shown beside their fields.
async fn submit_form(
    svc: &Service,
    headers: &HeaderMap,
    token: &str,
    body: &[u8],
    device: Option<&str>,
) -> Response {
    let sent = Submitted::parse(body);
    let d = match svc.decision_by_token(token).await {
        Ok(d) => d,
        Err(e) => return service_error_page(svc, headers, token, e).await,
    };
    if d.spec.approval.is_some() || d.spec.routing.is_some() {
        return service_error_page(svc, headers, token, ServiceError::AnswerElsewhere).await;
    }
    let reader = Reader::of(svc, headers, None, d.inbox_id).await;
    // The form again, with what was sent and what is wrong with it.
    let refused = |issues: &[Issue]| {
        answer_page(
            StatusCode::UNPROCESSABLE_ENTITY,
            token,
            &d,
            Some(&sent),
            &PageErrors::from_issues(issues),
            &reader,
        )
    };
    let Some(action) = sent.action() else {
        return refused(&[Issue {
            path: "action".into(),
            message: "choose one of the page's buttons".into(),
        }]);
    };
    let input = sent.to_input(&d.spec, action);
    match svc.submit_answer(token, &input, device).await {
        // The feed's own address, never its link: this page's link may be an agent's.
        Ok(_) if sent.returns_to_feed() => Redirect::to(FEED_PATH).into_response(),
        Ok(_) => Redirect::to(&format!("/d/{token}")).into_response(),
        Err(ServiceError::Validation(issues)) => refused(&issues),
        Err(e) => service_error_page(svc, headers, token, e).await,
    }
}

/// The feed of a bound device (`/inbox`, by its cookie).
pub(super) const FEED_PATH: &str = "/inbox";

/// What a JSON client gets back after an answer.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "decision_id": "01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c", "status": "answered",
    "outcome": true, "outcome_source": "human", "custom": false, "remark": "after 6pm",
    "answered_at": "2026-05-04T17:02:11Z",
    "answer_text": "The user answered \"Deploy v2.3 to production?\" with \"yes\". Remark: \"after 6pm\"."
}))]
pub(super) struct AnswerResult {
    decision_id: Uuid,
    status: Status,
    outcome: Option<Value>,
    outcome_source: Option<OutcomeSource>,
    custom: bool,
    remark: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    answered_at: Option<OffsetDateTime>,
    answer_text: String,
}

async fn submit_json(
    svc: &Service,
    token: &str,
    body: &[u8],
    device: Option<&str>,
) -> Result<Response, ApiError> {
    let input = parse_answer(body)?;
    let d = svc.submit_answer(token, &input, device).await?;
    Ok(answer_result(&d))
}

/// The JSON body of an answer request.
pub(super) fn parse_answer(body: &[u8]) -> Result<AnswerInput, ApiError> {
    serde_json::from_value(parse_json(body)?).map_err(|e| {
        ApiError::validation(vec![Issue {
            path: String::new(),
            message: format!(
                "expected {{\"action\": \"answer|decline|done|skip\", \"value\": …, \"other\": \"…\", \"remark\": \"…\"}}: {e}"
            ),
        }])
    })
}

/// The JSON answer to an answer request that was taken.
pub(super) fn answer_result(d: &Decision) -> Response {
    Json(AnswerResult {
        decision_id: d.id,
        status: d.status,
        outcome: d.outcome.clone(),
        outcome_source: d.outcome_source,
        custom: d.custom,
        remark: d.remark.clone(),
        answered_at: d.resolved_at,
        answer_text: answer_text(d),
    })
    .into_response()
}

/// The context image, with the type sniffed from its bytes when it was created.
async fn context_image(
    State(svc): State<Service>,
    Token(token): Token,
    headers: HeaderMap,
) -> Response {
    match svc.image_by_token(&token).await {
        Ok((content_type, bytes)) => {
            let mut resp = bytes.into_response();
            let h = resp.headers_mut();
            if let Ok(v) = HeaderValue::from_str(&content_type) {
                h.insert(header::CONTENT_TYPE, v);
            }
            h.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("private, max-age=3600"),
            );
            resp
        }
        Err(ServiceError::NotFound) => error_page(
            super::reader::page_t(&headers, None),
            StatusCode::NOT_FOUND,
            "err-not-found",
            "err-no-image",
        ),
        Err(e) => service_error_page(&svc, &headers, &token, e).await,
    }
}

/// The page of a decision through its own link: its controls while pending, its outcome once
/// resolved. A tool approval's, and a decision's sent to people by name, only shows it (an
/// agent holds this link) and says where it is answered.
pub fn answer_page(
    status: StatusCode,
    token: &str,
    d: &Decision,
    sent: Option<&Submitted>,
    errors: &PageErrors,
    reader: &Reader,
) -> Response {
    if let Some(a) = &d.spec.approval {
        let query = PageQuery::default();
        return super::approval::approval_page(status, None, d, a, sent, errors, &query, reader);
    }
    let action = d.spec.routing.is_none().then(|| format!("/d/{token}"));
    decision_page(status, d, action, token, None, sent, errors, reader)
}

/// A tool approval's page through its `web_url`: it only shows it.
fn view_page(status: StatusCode, d: &Decision, query: &PageQuery, reader: &Reader) -> Response {
    let errors = PageErrors::default();
    match &d.spec.approval {
        Some(a) => super::approval::approval_page(status, None, d, a, None, &errors, query, reader),
        None => error_page(
            reader.t,
            StatusCode::NOT_FOUND,
            "err-not-found",
            "err-no-approval",
        ),
    }
}

/// The page of a decision (not a tool approval) through a person link, `/a/{token}`: the
/// same page, its form posting to that link, for that person.
pub(super) fn person_answer_page(
    status: StatusCode,
    link: &PersonLink,
    d: &Decision,
    sent: Option<&Submitted>,
    errors: &PageErrors,
    reader: &Reader,
) -> Response {
    decision_page(
        status,
        d,
        Some(link.action.clone()),
        &link.answer_token,
        Some(link),
        sent,
        errors,
        reader,
    )
}

/// The answer page. `action` is where its form posts; `None` shows the decision without
/// one.
#[allow(clippy::too_many_arguments)]
fn decision_page(
    status: StatusCode,
    d: &Decision,
    action: Option<String>,
    answer_token: &str,
    link: Option<&PersonLink>,
    sent: Option<&Submitted>,
    errors: &PageErrors,
    reader: &Reader,
) -> Response {
    let now = OffsetDateTime::now_utc();
    let open = d.is_open_at(now);
    let t = &reader.t;
    let people = view::people_view(t, d, link, now);
    // The person's answer counted, and the decision waits for others: nothing to send.
    let answerable = open && action.is_some() && people.yours.is_none();
    let body = answerable.then(|| view::body(d, sent, errors));
    let page = AnswerPage {
        action: action.unwrap_or_default(),
        question: d.spec.question.clone(),
        project: d.spec.project.as_deref().map(visible_project),
        context_html: d.spec.context_md.as_deref().map(render_markdown),
        image_url: d.has_image.then(|| format!("/d/{answer_token}/image")),
        attachments: view::attachments(d),
        expires_in: open.then(|| render::time_left(t, d.expires_at, now)),
        expires_at: reader.zone.clock(d.expires_at, now),
        expires_iso: render::iso(d.expires_at),
        needs_submit: !matches!(d.kind(), Kind::Bool | Kind::Todo),
        body,
        allow_remark: d.spec.allow_remark,
        remark: sent
            .and_then(|s| s.get("remark"))
            .unwrap_or_default()
            .to_string(),
        errors: errors.summary.clone(),
        value_error: errors.get("value").or_else(|| errors.get("action")),
        other_error: errors.get("other"),
        remark_error: errors.get("remark"),
        result: (!open && d.status != Status::Pending)
            .then(|| view::result(t, d, now, &reader.zone)),
        people,
        to_feed: reader.to_feed,
        t: reader.t,
    };
    render(status, &page)
}

/// The page for a service error: 404 for an unknown link, 409 / 410 with the outcome for a
/// decision already resolved or expired.
async fn service_error_page(
    svc: &Service,
    headers: &HeaderMap,
    token: &str,
    e: ServiceError,
) -> Response {
    if let ServiceError::AnswerElsewhere = e {
        return elsewhere_page(&Reader::bound(svc, headers).await);
    }
    refusal_page(svc, headers, None, e, |status, d, reader| {
        answer_page(status, token, d, None, &PageErrors::default(), reader)
    })
    .await
}

/// The page for an answer through the `web_url` of a tool approval, or of a decision sent to
/// people by name: refused, nothing changed.
pub(super) fn elsewhere_page(reader: &Reader) -> Response {
    error_page_for(
        reader,
        StatusCode::FORBIDDEN,
        "err-elsewhere-heading",
        "err-elsewhere",
    )
}
