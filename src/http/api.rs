//! The agent API under `/v1` (docs/API.md).

use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Version, header};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::Value;
use uuid::Uuid;

#[allow(unused_imports)] // named only in the OpenAPI annotations
use super::shapes::{
    AlreadyResolved, BodyRefusals, CreateDecision, EventList, KeyedRefusals, NotFound,
    ValidationFailed,
};
use crate::domain::{Issues, Kind, Status};
#[allow(unused_imports)] // named only in the OpenAPI annotations
use crate::service::{AskHandle, DecisionView, ListPage};
use crate::service::{ListQuery, Service};
use crate::web::CREATE_BODY_LIMIT;
use crate::web::error::ApiError;
use crate::web::extract::{ApiKey, Auth, JsonBody, Segment, decision_id};
use crate::web::json;
use crate::web::waiting::{Seats, refusal};

/// The default wait of an await, below common client and proxy timeouts.
const DEFAULT_AWAIT_S: u64 = 50;

pub fn routes() -> Router<Service> {
    Router::new()
        .route(
            "/v1/decisions",
            post(create_decision)
                .layer(DefaultBodyLimit::max(CREATE_BODY_LIMIT))
                .get(list_decisions),
        )
        .route("/v1/decisions/{id}", get(get_decision))
        .route("/v1/decisions/{id}/await", get(await_decision))
        .route("/v1/decisions/{id}/cancel", post(cancel_decision))
        .route("/v1/decisions/{id}/events", get(decision_events))
}

/// Ask a person: creates a decision and notifies them. The answer comes back through
/// `GET /v1/decisions/{id}/await` (or `/v1/events`, or the `callback_url`).
#[utoipa::path(
    post, path = "/v1/decisions", tag = "decisions", security(("bearer" = [])),
    params(
        ("Idempotency-Key" = Option<String>, Header, min_length = 1, max_length = 255,
         description = "Scoped to the inbox. The same key with the same body returns the first \
         handle with `200` and notifies nobody again; with another body, `422 idempotency_mismatch`."),
    ),
    request_body(content = CreateDecision, examples(
        ("bool" = (summary = "A yes/no question", value = json!({
            "question": "Deploy v2.3 to production?", "kind": "bool", "project": "billing",
            "context_md": "All checks green. Migration `0042` is reversible.", "ttl_minutes": 30}))),
        ("choose" = (summary = "Pick one option", value = json!({
            "question": "Which database for the staging cluster?", "kind": "choose",
            "options": [{"label": "PostgreSQL", "description": "what production runs"}, "SQLite"],
            "recommended": 0, "allow_other": true}))),
        ("text" = (summary = "Free text", value = json!({
            "question": "What should the release be called?", "kind": "text",
            "placeholder": "e.g. Otter", "ttl_seconds": 600}))),
        ("form" = (summary = "A small form", value = json!({
            "question": "Details for the new user", "kind": "form",
            "schema": {"type": "object", "properties": {
                "email": {"type": "string", "format": "email", "title": "Email"},
                "admin": {"type": "boolean", "title": "Admin?"}}, "required": ["email"]}}))),
        ("todo" = (summary = "A task for the person", value = json!({
            "question": "Rotate the staging TLS certificate", "kind": "todo", "notify": "none"}))),
    )),
    responses(
        (status = 201, description = "Created: the handle.", body = AskHandle,
         headers(("Location" = String, description = "`/v1/decisions/{id}`"))),
        (status = 200, description = "The same `Idempotency-Key` and body as an earlier create: \
         its handle, and no new decision.", body = AskHandle,
         headers(("Location" = String, description = "`/v1/decisions/{id}`"))),
        BodyRefusals,
        KeyedRefusals,
    )
)]
pub(crate) async fn create_decision(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let key = match headers.get("idempotency-key") {
        None => None,
        Some(v) => Some(v.to_str().map_err(|_| {
            ApiError::validation(vec![crate::domain::Issue {
                path: "Idempotency-Key".into(),
                message: "must be visible ASCII characters".into(),
            }])
        })?),
    };
    let created = svc.create_decision(&inbox, &body, key).await?;
    let status = if created.replayed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    let location = format!("/v1/decisions/{}", created.handle.decision_id);
    let mut resp = json::response(status, &created.handle);
    if let Ok(v) = HeaderValue::from_str(&location) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    Ok(resp)
}

/// A decision as it stands.
#[utoipa::path(
    get, path = "/v1/decisions/{id}", tag = "decisions", security(("bearer" = [])),
    params(("id" = String, Path, description = "The decision's id.",
            example = "01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c")),
    responses(
        (status = 200, description = "The decision.", body = DecisionView),
        (status = 404, response = NotFound),
        KeyedRefusals,
    )
)]
pub(crate) async fn get_decision(
    State(svc): State<Service>,
    ApiKey(key): ApiKey,
    Segment(id): Segment,
) -> Result<Response, ApiError> {
    let id = match decision_id(&id) {
        Ok(id) => id,
        // A bad key is still a 401 before the id is looked at, as on every other endpoint.
        Err(e) => {
            svc.authenticate(&key).await?;
            return Err(e);
        }
    };
    let view = svc.decision_json(&key, id).await?;
    Ok(json::written(StatusCode::OK, view))
}

/// The audit trail: every step of the decision's life, oldest first.
#[utoipa::path(
    get, path = "/v1/decisions/{id}/events", tag = "decisions", security(("bearer" = [])),
    params(("id" = String, Path, description = "The decision's id.",
            example = "01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c")),
    responses(
        (status = 200, description = "`created`, `viewed`, `answered`, `declined`, `cancelled`, \
         `expired`, …, each with its time and details.", body = EventList),
        (status = 404, response = NotFound),
        KeyedRefusals,
    )
)]
pub(crate) async fn decision_events(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    Segment(id): Segment,
) -> Result<Response, ApiError> {
    let events = svc.decision_events(&inbox, decision_id(&id)?).await?;
    Ok(json::response(
        StatusCode::OK,
        &serde_json::json!({ "items": events }),
    ))
}

/// Waits for the answer: returns the decision as soon as it is not `pending`, or still
/// `pending` when `timeout_s` passes; call again while it is `pending`. A decision that
/// expires while awaited comes back `expired` at its `expires_at`. A wait past the waiting
/// limits (per key, `SAYSO_WAITING_PER_KEY`; connections, `SAYSO_WAITING_CONNECTIONS`) is
/// `429 too_many_waiting`, unless the decision is already resolved.
#[utoipa::path(
    get, path = "/v1/decisions/{id}/await", tag = "decisions", security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The decision's id.",
         example = "01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c"),
        ("timeout_s" = Option<u64>, Query, minimum = 0, example = 0,
         description = "Seconds to wait, default 50, clamped to the server's maximum (600 \
         unless configured); `0` returns at once."),
    ),
    responses(
        (status = 200, description = "The decision, resolved or still `pending`.", body = DecisionView),
        (status = 404, response = NotFound),
        (status = 422, response = ValidationFailed),
        KeyedRefusals,
    )
)]
pub(crate) async fn await_decision(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    Segment(id): Segment,
    RawQuery(query): RawQuery,
    seats: Seats,
    version: Version,
) -> Result<Response, ApiError> {
    let id = decision_id(&id)?;
    let mut issues = Issues::new();
    let mut timeout_s = DEFAULT_AWAIT_S;
    for (k, v) in pairs(&query) {
        if k == "timeout_s" {
            match v.parse::<u64>() {
                Ok(n) => timeout_s = n,
                Err(_) => issues.push("timeout_s", "must be a whole number of seconds"),
            }
        }
    }
    issues.finish(()).map_err(ApiError::validation)?;
    // Waiting takes a seat; without one it only looks. A decision already resolved is
    // answered all the same: only a wait that would hold the connection is refused.
    let seat = match timeout_s {
        0 => Ok(None),
        _ => seats.take(&inbox),
    };
    let (wait, _seat, refused) = match seat {
        Ok(seat) => (Duration::from_secs(timeout_s), seat, None),
        Err(refused) => (Duration::ZERO, None, Some(refused)),
    };
    let d = svc.await_decision(&inbox, id, wait).await?;
    if let Some(refused) = refused
        && d.status == Status::Pending
    {
        return Ok(refusal(refused, version));
    }
    // Boxed: the view's reads would otherwise size the future that waits.
    let view = Box::pin(svc.view(&d)).await?;
    Ok(json::response(StatusCode::OK, &view))
}

/// Withdraws a pending decision; it becomes `cancelled`.
#[utoipa::path(
    post, path = "/v1/decisions/{id}/cancel", tag = "decisions", security(("bearer" = [])),
    params(("id" = String, Path, description = "The decision's id.",
            example = "01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c")),
    request_body(content = Option<CancelRequest>, description = "Optional; an empty body is fine.",
                 example = json!({"reason": "fixed it myself"})),
    responses(
        (status = 200, description = "The decision, `cancelled`.", body = DecisionView),
        (status = 404, response = NotFound),
        (status = 409, response = AlreadyResolved),
        BodyRefusals,
        KeyedRefusals,
    )
)]
pub(crate) async fn cancel_decision(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    Segment(id): Segment,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let id = decision_id(&id)?;
    // The body is optional: no body, or `{"reason": "…"}`.
    let reason = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        let v = crate::web::extract::parse_json(&body)?;
        cancel_reason(&v).map_err(ApiError::validation)?
    };
    let d = svc.cancel_decision(&inbox, id, reason).await?;
    Ok(json::response(StatusCode::OK, &svc.view(&d).await?))
}

/// The body of a cancel.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // parsed by hand in `cancel_reason`
pub(crate) struct CancelRequest {
    /// At most 2000 characters; kept in the audit trail.
    reason: Option<String>,
}

fn cancel_reason(v: &Value) -> Result<Option<String>, Vec<crate::domain::Issue>> {
    let mut issues = Issues::new();
    let reason = match v {
        Value::Object(m) => crate::domain::decision::cancel_reason(m.get("reason"), &mut issues),
        _ => {
            issues.push("", "the request body must be a JSON object");
            None
        }
    };
    issues.finish(reason)
}

/// The inbox's decisions, newest first, a page at a time.
#[utoipa::path(
    get, path = "/v1/decisions", tag = "decisions", security(("bearer" = [])),
    params(
        ("status" = Option<Status>, Query, description = "Only decisions in this status."),
        ("kind" = Option<Kind>, Query, description = "Only decisions of this kind."),
        ("project" = Option<String>, Query, description = "Only decisions of this project."),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 200,
         description = "Page size, default 50."),
        ("cursor" = Option<String>, Query,
         description = "The `next` of the previous page."),
    ),
    responses(
        (status = 200, description = "One page; `next` is null on the last.", body = ListPage),
        (status = 422, response = ValidationFailed),
        KeyedRefusals,
    )
)]
pub(crate) async fn list_decisions(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let q = parse_list_query(query.as_deref()).map_err(ApiError::validation)?;
    Ok(json::response(
        StatusCode::OK,
        &svc.list_decisions(&inbox, q).await?,
    ))
}

fn parse_list_query(query: Option<&str>) -> Result<ListQuery, Vec<crate::domain::Issue>> {
    let mut issues = Issues::new();
    let mut q = ListQuery {
        limit: 50,
        ..ListQuery::default()
    };
    for (k, v) in pairs(&query.map(str::to_string)) {
        match k.as_str() {
            "status" if !v.is_empty() => match Status::parse(&v) {
                Some(s) => q.status = Some(s),
                None => issues.push(
                    "status",
                    "must be one of pending, answered, declined, expired, cancelled",
                ),
            },
            "kind" if !v.is_empty() => match Kind::parse(&v) {
                Some(kind) => q.kind = Some(kind),
                None => issues.push("kind", "must be one of bool, choose, text, form, todo"),
            },
            "project" if !v.is_empty() => q.project = Some(v),
            "limit" => match v.parse::<u32>() {
                Ok(n) if (1..=200).contains(&n) => q.limit = n,
                _ => issues.push("limit", "must be a whole number from 1 to 200"),
            },
            "cursor" if !v.is_empty() => match Uuid::parse_str(&v) {
                Ok(id) => q.cursor = Some(id),
                Err(_) => issues.push("cursor", "is not a cursor this server returned"),
            },
            _ => {}
        }
    }
    issues.finish(q)
}

fn pairs(query: &Option<String>) -> Vec<(String, String)> {
    query
        .as_deref()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_query_names_each_bad_parameter() {
        let err = parse_list_query(Some("status=done&kind=poll&limit=0&cursor=zzz")).unwrap_err();
        let paths: Vec<_> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["status", "kind", "limit", "cursor"]);
    }

    #[test]
    fn list_query_reads_filters() {
        let q = parse_list_query(Some("status=pending&kind=todo&project=ops&limit=5")).unwrap();
        assert_eq!(q.status, Some(Status::Pending));
        assert_eq!(q.kind, Some(Kind::Todo));
        assert_eq!(q.project.as_deref(), Some("ops"));
        assert_eq!(q.limit, 5);
    }

    #[test]
    fn cancel_reason_is_an_optional_string() {
        assert_eq!(cancel_reason(&serde_json::json!({})).unwrap(), None);
        assert_eq!(
            cancel_reason(&serde_json::json!({"reason": " done "})).unwrap(),
            Some("done".into())
        );
        assert!(cancel_reason(&serde_json::json!({"reason": 3})).is_err());
        assert!(cancel_reason(&serde_json::json!([1])).is_err());
    }
}
