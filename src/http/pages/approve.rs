//! A decision answered by one person: `/a/{token}`, the person links that only the person's
//! feed and notifications carry (one per channel, so the answer records which way it came),
//! for a tool approval and for a decision sent to people by name. The page and the posts
//! are those of `/d/{token}` (docs/PAGES.md): `GET` only shows, only `POST` decides; a form
//! post gets 303, JSON 200 with the resolution. Where several people must answer, the page
//! shows how far it has come, and once the person's own answer counted it offers them no
//! more buttons.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::allowed::allowed_view;
use super::answer::{FEED_PATH, answer_result, parse_answer};
use super::approval::PageQuery;
use super::reader::Reader;
use super::refusal::refusal_page;
use super::submitted::Submitted;
use super::templates::error_page;
use super::view::{PageErrors, PersonLink};
use super::{Token, device_cookie};
use crate::domain::allowance::AllowFor;
use crate::domain::approval::{ALLOW, allows};
use crate::domain::people::Person;
use crate::domain::{Decision, Issue};
use crate::service::{Service, ServiceError};
use crate::web::error::ApiError;

pub fn routes() -> Router<Service> {
    use axum::routing::get;
    Router::new()
        .route("/a/{token}", get(show_approval).post(submit_approval))
        .route("/a/{token}/revoke", axum::routing::post(revoke))
}

/// The decision's page with its buttons; on an approval's, `?confirm=Allow` (or `Deny`, the
/// mail's links) shows that one button. Showing it changes nothing.
async fn show_approval(
    State(svc): State<Service>,
    Token(token): Token,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    match svc.view_approval(&token).await {
        Ok((d, _, person)) => {
            let reader = Reader::of(&svc, &headers, Some(&person), d.inbox_id).await;
            let mut link = link(&svc, &token, &d, Some(&person));
            // What an Allow for a while made, and what ran on it; a page that cannot read
            // it shows the approval without it.
            if d.status != crate::domain::Status::Pending
                && let Ok(Some(made)) = svc.made_allowance(&d).await
            {
                let now = time::OffsetDateTime::now_utc();
                link.allowed = Some(allowed_view(
                    &reader.t,
                    &made,
                    &link.action,
                    &reader.zone,
                    now,
                ));
            }
            page(
                StatusCode::OK,
                &link,
                &d,
                None,
                &PageErrors::default(),
                &PageQuery::parse(query.as_deref()),
                &reader,
            )
        }
        Err(e) => error(&svc, &headers, &token, None, e).await,
    }
}

async fn submit_approval(
    State(svc): State<Service>,
    Token(token): Token,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let device = device_cookie(&headers);
    let is_form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    if !is_form {
        let answered = async {
            let input = parse_answer(&body)?;
            let allow_for = json_allow_for(&body)?;
            if (allow_for.is_some() || allows(input.value.as_ref())) && !json_whole(&body)? {
                refuse_unseen_allow(&svc, &token).await?;
            }
            let (d, _) = svc
                .submit_approval_for(&token, &input, device.as_deref(), allow_for)
                .await?;
            Ok::<_, ApiError>(answer_result(&d))
        };
        return answered.await.unwrap_or_else(IntoResponse::into_response);
    }
    let sent = Submitted::parse(&body);
    let (d, person) = match svc.approval_by_token(&token).await {
        Ok((d, _, person)) => (d, person),
        Err(e) => return error(&svc, &headers, &token, None, e).await,
    };
    let reader = Reader::of(&svc, &headers, Some(&person), d.inbox_id).await;
    let link = link(&svc, &token, &d, Some(&person));
    // The page again, with what was sent and why it was refused.
    let refused = |issues: &[Issue]| {
        page(
            StatusCode::UNPROCESSABLE_ENTITY,
            &link,
            &d,
            Some(&sent),
            &PageErrors::from_issues(issues),
            &PageQuery::default(),
            &reader,
        )
    };
    let Some(action) = sent.action() else {
        let issues = [Issue {
            path: "action".into(),
            message: "choose one of the page's buttons".into(),
        }];
        return refused(&issues);
    };
    let mut input = sent.to_input(&d.spec, action);
    // "For 15 min", "For 1 hour", "Until tomorrow 09:00" are Allows that also stand for a
    // while; they send `allow_for` alone.
    let allow_for = match sent.get("allow_for").filter(|v| !v.is_empty()) {
        None => None,
        Some(v) => match AllowFor::parse(v) {
            Some(a) => Some(a),
            None => {
                return refused(&[allow_for_issue(v)]);
            }
        },
    };
    if allow_for.is_some() && input.value.is_none() && input.other.is_none() {
        input.value = Some(serde_json::Value::from(ALLOW));
    }
    // The page offers Allow for a change too long to show only once all of it was opened;
    // a form that did not come from that page allows nothing.
    if let Some(a) = &d.spec.approval
        && allows(input.value.as_ref())
        && sent.get("whole") != Some("1")
        && super::what_runs::is_cut(a)
    {
        let issues = [Issue {
            path: "value".into(),
            message:
                "this change is too long to show at once: open all of it (\"Show all of it\") \
                      before allowing it"
                    .into(),
        }];
        return refused(&issues);
    }
    match svc
        .submit_approval_for(&token, &input, device.as_deref(), allow_for)
        .await
    {
        Ok(_) if sent.returns_to_feed() => Redirect::to(FEED_PATH).into_response(),
        // Back to the session's other calls; the address is made from the approval, never
        // from what was sent.
        Ok(_) if sent.returns_to_session() => {
            let back = d
                .spec
                .approval
                .as_ref()
                .and_then(super::session::session_url);
            Redirect::to(back.as_deref().unwrap_or(FEED_PATH)).into_response()
        }
        Ok(_) => Redirect::to(&format!("/a/{token}")).into_response(),
        Err(ServiceError::Validation(issues)) => refused(&issues),
        Err(e) => error(&svc, &headers, &token, Some(&person), e).await,
    }
}

/// Whether a JSON answer says its page showed the whole change (`"whole": true`), as the
/// page's form does with `whole=1`.
fn json_whole(body: &[u8]) -> Result<bool, ApiError> {
    let v = crate::web::extract::parse_json(body)?;
    match v.get("whole") {
        None | Some(serde_json::Value::Null) => Ok(false),
        Some(serde_json::Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ApiError::validation(vec![Issue {
            path: "whole".into(),
            message: "must be true or false".into(),
        }])),
    }
}

/// A JSON Allow sent without `whole` for a change too long to show at once is refused: the
/// page offers Allow for it only once all of it is open, and says so with `whole`. (A
/// notification never offers it in one tap.) Any other trouble with the link is left to the
/// answer itself to report.
async fn refuse_unseen_allow(svc: &Service, token: &str) -> Result<(), ApiError> {
    let Ok((d, _, _)) = svc.approval_by_token(token).await else {
        return Ok(());
    };
    match &d.spec.approval {
        Some(a) if super::what_runs::is_cut(a) => Err(ApiError::validation(vec![Issue {
            path: "whole".into(),
            message: "this change is too long to show at once: an Allow needs \"whole\": true, \
                      sent once all of it was opened (\"Show all of it\" on the page)"
                .into(),
        }])),
        _ => Ok(()),
    }
}

/// The `allow_for` of a JSON answer, if it has one.
fn json_allow_for(body: &[u8]) -> Result<Option<AllowFor>, ApiError> {
    let v = crate::web::extract::parse_json(body)?;
    match v.get("allow_for") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => match AllowFor::parse(s) {
            Some(a) => Ok(Some(a)),
            None => Err(ApiError::validation(vec![allow_for_issue(s)])),
        },
        Some(_) => Err(ApiError::validation(vec![allow_for_issue(
            "(not a string)",
        )])),
    }
}

fn allow_for_issue(got: &str) -> Issue {
    Issue {
        path: "allow_for".into(),
        message: format!(
            "must be one of {} (got {})",
            AllowFor::NAMES.join(", "),
            got.chars().take(40).collect::<String>()
        ),
    }
}

/// The person link `token` as a page's: where its form posts, and whose it is.
fn link<'a>(
    svc: &Service,
    token: &str,
    d: &Decision,
    person: Option<&'a Person>,
) -> PersonLink<'a> {
    PersonLink {
        action: format!("/a/{token}"),
        answer_token: svc.tokens().answer_token(d.id),
        person,
        allowed: None,
    }
}

/// The approval page for a tool approval, the answer page for any other decision.
fn page(
    status: StatusCode,
    link: &PersonLink,
    d: &Decision,
    sent: Option<&Submitted>,
    errors: &PageErrors,
    query: &PageQuery,
    reader: &Reader,
) -> Response {
    match &d.spec.approval {
        Some(a) => {
            super::approval::approval_page(status, Some(link), d, a, sent, errors, query, reader)
        }
        None => super::answer::person_answer_page(status, link, d, sent, errors, reader),
    }
}

async fn error(
    svc: &Service,
    headers: &HeaderMap,
    token: &str,
    person: Option<&Person>,
    e: ServiceError,
) -> Response {
    refusal_page(svc, headers, person, e, |status, d, reader| {
        let link = link(svc, token, d, person);
        let (errors, query) = (PageErrors::default(), PageQuery::default());
        page(status, &link, d, None, &errors, &query, reader)
    })
    .await
}

/// The person's Revoke on the approval page: the allowance ends at once and the page says
/// so. The approval link the person allowed with is enough to revoke: revoking only narrows
/// what passes without asking. One already gone (revoked elsewhere, or ended) is as revoked: either way it is not
/// there. A post from another site is refused before it gets here.
async fn revoke(
    State(svc): State<Service>,
    Token(token): Token,
    headers: axum::http::HeaderMap,
) -> Response {
    match svc.revoke_made_allowance(&token).await {
        Ok(()) | Err(ServiceError::NotFound) => {
            Redirect::to(&format!("/a/{token}")).into_response()
        }
        Err(e) => {
            tracing::warn!(error = %e, "revoking an allowance from its page failed");
            error_page(
                super::reader::page_t(&headers, None),
                StatusCode::SERVICE_UNAVAILABLE,
                "err-try-again",
                "err-not-revoked",
            )
        }
    }
}
