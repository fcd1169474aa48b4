//! The person's side, reached through an answer link (DESIGN.md §4). `GET` only shows;
//! only `POST` decides, so mail scanners and link previews that fetch a link decide nothing.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::error::ApiError;
use super::extract::{JsonBody, Segment};
use crate::domain::answer_text::answer_text;
use crate::domain::{AnswerInput, Decision, Issue, OutcomeSource, Status};
use crate::service::Service;

pub fn routes() -> Router<Service> {
    Router::new().route("/d/{token}", get(show_answer_page).post(submit_answer))
}

/// What the person's client gets back after an answer.
#[derive(Serialize)]
struct AnswerResult {
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

impl From<&Decision> for AnswerResult {
    fn from(d: &Decision) -> Self {
        AnswerResult {
            decision_id: d.id,
            status: d.status,
            outcome: d.outcome.clone(),
            outcome_source: d.outcome_source,
            custom: d.custom,
            remark: d.remark.clone(),
            answered_at: d.resolved_at,
            answer_text: answer_text(d),
        }
    }
}

async fn submit_answer(
    State(svc): State<Service>,
    Segment(token): Segment,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let input: AnswerInput = serde_json::from_value(body).map_err(|e| {
        ApiError::validation(vec![Issue {
            path: String::new(),
            message: format!(
                "expected {{\"action\": \"answer|decline|done|skip\", \"value\": …, \"other\": \"…\", \"remark\": \"…\"}}: {e}"
            ),
        }])
    })?;
    let d = svc.submit_answer(&token, &input).await?;
    Ok(Json(AnswerResult::from(&d)).into_response())
}

/// A plain page with the question and its state; the full answer page replaces it.
async fn show_answer_page(State(svc): State<Service>, Segment(token): Segment) -> Response {
    let (status, body) = match svc.view_by_token(&token).await {
        Ok(d) => (
            StatusCode::OK,
            format!(
                "<h1>{}</h1><p>{}</p>",
                escape(&d.spec.question),
                escape(&answer_text(&d))
            ),
        ),
        Err(crate::service::ServiceError::NotFound) => (
            StatusCode::NOT_FOUND,
            "<h1>Not found</h1><p>This link does not open any decision.</p>".to_string(),
        ),
        Err(e) => {
            let e = ApiError::from(e);
            (
                e.status,
                format!("<h1>Sorry</h1><p>{}</p>", escape(&e.message)),
            )
        }
    };
    let html = format!(
        "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>sayso</title><body>{body}</body></html>"
    );
    let mut resp = (status, Html(html)).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'; form-action 'self'"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
