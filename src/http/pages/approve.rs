//! A tool approval answered by the person: `/a/{token}`, the approval links that only the
//! person's feed and notifications carry (one per channel, so the answer records which way
//! it came). The page and the posts are those of `/d/{token}` (DESIGN.md §4): `GET` only
//! shows, only `POST` decides; a form post gets 303, JSON 200 with the resolution.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::answer::{FEED_PATH, answer_result, parse_answer};
use super::submitted::Submitted;
use super::templates::error_page;
use super::view::PageErrors;
use super::{Token, device_cookie};
use crate::domain::{Decision, Issue};
use crate::service::{Service, ServiceError};
use crate::web::error::ApiError;

pub fn routes() -> Router<Service> {
    use axum::routing::get;
    Router::new().route("/a/{token}", get(show_approval).post(submit_approval))
}

/// The approval page with its buttons; `?confirm=Allow` (or `Deny`, the mail's links) shows
/// that one button. Showing it changes nothing.
async fn show_approval(
    State(svc): State<Service>,
    Token(token): Token,
    RawQuery(query): RawQuery,
) -> Response {
    match svc.view_approval(&token).await {
        Ok((d, _, _)) => page(
            StatusCode::OK,
            &token,
            &d,
            None,
            &PageErrors::default(),
            confirm_of(query.as_deref()).as_deref(),
        ),
        Err(e) => error(&token, e),
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
            let d = svc
                .submit_approval(&token, &input, device.as_deref())
                .await?;
            Ok::<_, ApiError>(answer_result(&d))
        };
        return answered.await.unwrap_or_else(IntoResponse::into_response);
    }
    let sent = Submitted::parse(&body);
    let d = match svc.approval_by_token(&token).await {
        Ok((d, _, _)) => d,
        Err(e) => return error(&token, e),
    };
    let Some(action) = sent.action() else {
        let issues = [Issue {
            path: "action".into(),
            message: "choose one of the page's buttons".into(),
        }];
        return page(
            StatusCode::UNPROCESSABLE_ENTITY,
            &token,
            &d,
            Some(&sent),
            &PageErrors::from_issues(&issues),
            None,
        );
    };
    let input = sent.to_input(&d.spec, action);
    match svc.submit_approval(&token, &input, device.as_deref()).await {
        Ok(_) if sent.returns_to_feed() => Redirect::to(FEED_PATH).into_response(),
        Ok(_) => Redirect::to(&format!("/a/{token}")).into_response(),
        Err(ServiceError::Validation(issues)) => page(
            StatusCode::UNPROCESSABLE_ENTITY,
            &token,
            &d,
            Some(&sent),
            &PageErrors::from_issues(&issues),
            None,
        ),
        Err(e) => error(&token, e),
    }
}

fn page(
    status: StatusCode,
    token: &str,
    d: &Decision,
    sent: Option<&Submitted>,
    errors: &PageErrors,
    confirm: Option<&str>,
) -> Response {
    match &d.spec.approval {
        Some(a) => super::approval::approval_page(
            status,
            Some(&format!("/a/{token}")),
            d,
            a,
            sent,
            errors,
            confirm,
        ),
        // `approval_by_token` opens approvals only.
        None => not_found(),
    }
}

/// The `confirm` of `?confirm=Allow`.
fn confirm_of(query: Option<&str>) -> Option<String> {
    url::form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == "confirm")
        .map(|(_, v)| v.into_owned())
}

fn not_found() -> Response {
    error_page(
        StatusCode::NOT_FOUND,
        "Link not found",
        "This link does not open any question. It may have been mistyped or cut short.",
    )
}

fn error(token: &str, e: ServiceError) -> Response {
    match e {
        ServiceError::NotFound => not_found(),
        ServiceError::AlreadyResolved(d) => page(
            StatusCode::CONFLICT,
            token,
            &d,
            None,
            &PageErrors::default(),
            None,
        ),
        ServiceError::Expired(d) => page(
            StatusCode::GONE,
            token,
            &d,
            None,
            &PageErrors::default(),
            None,
        ),
        ServiceError::Unavailable => error_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Try again in a moment",
            "sayso cannot reach its database right now. Nothing was lost; reload in a few seconds.",
        ),
        other => {
            let e = ApiError::from(other);
            error_page(e.status, "Sorry", &e.message)
        }
    }
}
