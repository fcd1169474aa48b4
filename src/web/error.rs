//! `ApiError`: every failure of the JSON API in the one shape docs/API.md describes.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::{Issue, Status};
use crate::render::resolved_message;
use crate::service::ServiceError;

/// An error response: `{"error": {"code", "message", "details"}}`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub details: Vec<Issue>,
    /// Seconds for `Retry-After`, on a 429.
    pub retry_after: Option<u64>,
}

/// Every error of the API: `{"error": {"code", "message", "details"}}`.
#[derive(Serialize, ToSchema)]
#[schema(as = Error, example = json!({"error": {
    "code": "validation_failed",
    "message": "options[2].label: must be 1–200 characters",
    "details": [{"path": "options[2].label", "message": "must be 1–200 characters"}]
}}))]
pub(crate) struct Body<'a> {
    error: Inner<'a>,
}

/// What went wrong: a stable `code` to branch on, a `message` for people, and for
/// `validation_failed` every problem with its JSON path.
#[derive(Serialize, ToSchema)]
#[schema(as = ErrorInfo)]
pub(crate) struct Inner<'a> {
    /// `bad_request`, `validation_failed`, `unauthorized`, `not_found`, `already_resolved`,
    /// `expired`, `idempotency_mismatch`, `payload_too_large`, `rate_limited`,
    /// `quota_exceeded`, `unavailable`, …
    code: &'a str,
    message: &'a str,
    details: &'a [Issue],
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            details: Vec::new(),
            retry_after: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", "no such decision")
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is larger than the limit of {limit} bytes"),
        )
    }

    pub fn validation(details: Vec<Issue>) -> Self {
        let message = match details.as_slice() {
            [one] if one.path.is_empty() => one.message.clone(),
            [one] => format!("{}: {}", one.path, one.message),
            many => format!("{} problems with the request; see details", many.len()),
        };
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            code: "validation_failed",
            message,
            details,
            retry_after: None,
        }
    }

    /// Too many requests from one key or address; `retry_after` in seconds.
    pub fn rate_limited(retry_after: u64) -> Self {
        ApiError {
            retry_after: Some(retry_after),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("too many requests; retry in {retry_after} s"),
            )
        }
    }

    pub fn unavailable() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "the database is unavailable; retry shortly",
        )
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Validation(details) => ApiError::validation(details),
            ServiceError::Unauthorized => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "missing or unknown API key: send Authorization: Bearer sk_…",
            ),
            ServiceError::NotFound => ApiError::not_found(),
            ServiceError::AlreadyResolved(d) => ApiError::new(
                StatusCode::CONFLICT,
                "already_resolved",
                resolved_message(d.status, d.resolved_at),
            ),
            ServiceError::Expired(d) => ApiError::new(
                StatusCode::GONE,
                "expired",
                resolved_message(Status::Expired, d.resolved_at),
            ),
            ServiceError::IdempotencyMismatch => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_mismatch",
                "this Idempotency-Key was already used with a different request body",
            ),
            ServiceError::Conflict(m) => ApiError::new(StatusCode::CONFLICT, "conflict", m),
            ServiceError::QuotaExceeded { retry_after } => ApiError {
                retry_after: Some(retry_after),
                ..ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "quota_exceeded",
                    format!(
                        "the daily quota of this inbox is used up; it renews at 00:00 UTC, \
                         in {retry_after} s"
                    ),
                )
            },
            ServiceError::AnswerElsewhere => ApiError::new(
                StatusCode::FORBIDDEN,
                "answer_elsewhere",
                "this is a tool approval, or a question sent to people by name: its web_url \
                 only shows it, and nothing was changed; the people asked answer it from \
                 their sayso feed or a notification",
            ),
            ServiceError::ReceiptNotReady { pending: true } => ApiError::new(
                StatusCode::CONFLICT,
                "pending",
                "the decision is still pending: its receipt is made when it is answered, \
                 declined, cancelled or expires",
            ),
            ServiceError::ReceiptNotReady { pending: false } => ApiError {
                retry_after: Some(1),
                ..ApiError::new(
                    StatusCode::CONFLICT,
                    "receipt_not_ready",
                    "the decision is resolved but its receipt is not chained yet; retry in a \
                     moment",
                )
            },
            ServiceError::Unavailable => ApiError::unavailable(),
            ServiceError::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "something went wrong on the server; it has been logged",
                )
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            error: Inner {
                code: self.code,
                message: &self.message,
                details: &self.details,
            },
        };
        let mut resp = (self.status, Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        match self.status {
            StatusCode::SERVICE_UNAVAILABLE => {
                resp.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            }
            StatusCode::UNAUTHORIZED => {
                resp.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"sayso\""),
                );
            }
            _ => {}
        }
        resp
    }
}
