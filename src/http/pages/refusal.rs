//! The page a person link shows when the service refuses it, shared by the answer and the
//! approval pages.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::reader::Reader;
use super::templates::{error_page_for, error_page_text};
use crate::domain::decision::Decision;
use crate::domain::people::Person;
use crate::service::{Service, ServiceError};
use crate::web::error::ApiError;

/// The page for the service's refusal `e` of a person link: 404 for an unknown link, the
/// decision's own page (`settled`, with 409 or 410) once it is resolved or expired, 503 to try
/// again, else the refusal in the service's words. The reader is the decision's when there is
/// one, else the bound browser's.
pub async fn refusal_page(
    svc: &Service,
    headers: &HeaderMap,
    person: Option<&Person>,
    e: ServiceError,
    settled: impl FnOnce(StatusCode, &Decision, &Reader) -> Response,
) -> Response {
    let reader = match &e {
        ServiceError::AlreadyResolved(d) | ServiceError::Expired(d) => {
            Reader::of(svc, headers, person, d.inbox_id).await
        }
        _ => Reader::bound(svc, headers).await,
    };
    match e {
        ServiceError::NotFound => error_page_for(
            &reader,
            StatusCode::NOT_FOUND,
            "err-link-not-found",
            "err-no-question",
        ),
        ServiceError::AlreadyResolved(d) => settled(StatusCode::CONFLICT, &d, &reader),
        ServiceError::Expired(d) => settled(StatusCode::GONE, &d, &reader),
        ServiceError::Unavailable => error_page_for(
            &reader,
            StatusCode::SERVICE_UNAVAILABLE,
            "err-try-again",
            "err-unavailable-nothing-lost",
        ),
        other => {
            let e = ApiError::from(other);
            error_page_text(&reader, e.status, &reader.t.tr("err-sorry"), &e.message)
        }
    }
}
