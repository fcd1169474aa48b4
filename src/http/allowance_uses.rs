//! The calls standing allowances let through, over the agent API (docs/API.md, Allowances):
//! `sayso hook` records each one before it lets it run, and `sayso list --allowed-by`
//! reads them. The key adds a use only to a live allowance of its own inbox, for a call of
//! exactly its scope; nothing here edits or deletes one.

use axum::Router;
use axum::extract::{DefaultBodyLimit, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

#[allow(unused_imports)] // named only in the OpenAPI annotations
use super::shapes::{BodyRefusals, KeyedRefusals, NotFound, ValidationFailed};
use crate::domain::allowance::uses::{AllowanceUse, UsedCall, parse_use};
use crate::domain::{Issue, Issues};
use crate::service::{MAX_USES_PAGE, Service};
use crate::web::USE_BODY_LIMIT;
use crate::web::error::ApiError;
use crate::web::extract::{Auth, JsonBody, Segment, decision_id};
use crate::web::json;

pub fn routes() -> Router<Service> {
    Router::new().route(
        "/v1/allowances/{id}/uses",
        post(record_use)
            .layer(DefaultBodyLimit::max(USE_BODY_LIMIT))
            .get(list_uses),
    )
}

/// A call a standing allowance let through, as the hook recorded it before it ran.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct UseView {
    /// Increasing: the order uses were recorded in (`after` pages on it).
    pub id: i64,
    pub allowance_id: Uuid,
    /// The approval whose Allow made the allowance: the use is in its audit trail
    /// (`GET /v1/decisions/{id}/events`, kind `allowance_used`).
    pub decision_id: Uuid,
    /// When the server recorded it, just before the call ran.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
    pub call: UsedCall,
}

impl From<AllowanceUse> for UseView {
    fn from(u: AllowanceUse) -> Self {
        UseView {
            id: u.id,
            allowance_id: u.allowance_id,
            decision_id: u.decision_id,
            at: u.at,
            call: u.call,
        }
    }
}

/// A recorded use, and the fields of the request sayso does not know.
#[derive(Serialize, utoipa::ToSchema)]
pub struct UseRecorded {
    #[serde(flatten)]
    pub used: UseView,
    pub warnings: Vec<String>,
}

/// A page of uses, oldest first.
#[derive(Serialize, utoipa::ToSchema)]
pub struct UseList {
    pub items: Vec<UseView>,
    /// The `after` of the next page; `null` on the last.
    pub next: Option<i64>,
}

/// Records that a call runs on the allowance: sent by the hook before it lets the call
/// through, which it does only once this answered `201`. The allowance must count now and
/// be of exactly the call's harness, tool, project and rule.
#[utoipa::path(
    post, path = "/v1/allowances/{id}/uses", tag = "allowances", security(("bearer" = [])),
    params(("id" = String, Path, description = "The allowance's id.")),
    request_body(content = UsedCall, description = "The call, as the hook read it."),
    responses(
        (status = 201, description = "Recorded: the call may run.", body = UseRecorded),
        (status = 404, response = NotFound),
        BodyRefusals,
        KeyedRefusals,
    )
)]
pub(crate) async fn record_use(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    Segment(id): Segment,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let which = allowance_id(&id)?;
    let mut warnings = Vec::new();
    let call = parse_use(&body, &mut warnings).map_err(ApiError::validation)?;
    let used = svc.record_allowance_use(&inbox, which, &call).await?;
    Ok(json::response(
        StatusCode::CREATED,
        &UseRecorded {
            used: used.into(),
            warnings,
        },
    ))
}

/// The calls the allowance let through, oldest first; they are kept after it ends or is
/// revoked. An id the inbox never had lists none.
#[utoipa::path(
    get, path = "/v1/allowances/{id}/uses", tag = "allowances", security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The allowance's id."),
        ("after" = Option<i64>, Query, description = "Only uses after this id (a page's `next`)."),
        ("limit" = Option<u32>, Query, description = "1 to 200, default 50."),
    ),
    responses(
        (status = 200, description = "The uses.", body = UseList),
        (status = 404, response = NotFound),
        (status = 422, response = ValidationFailed),
        KeyedRefusals,
    )
)]
pub(crate) async fn list_uses(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    Segment(id): Segment,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let which = allowance_id(&id)?;
    let (after, limit) = page_query(query.as_deref()).map_err(ApiError::validation)?;
    let items = svc.allowance_uses(&inbox, which, after, limit).await?;
    let next = (items.len() as u32 == limit)
        .then(|| items.last().map(|u| u.id))
        .flatten();
    Ok(json::response(
        StatusCode::OK,
        &UseList {
            items: items.into_iter().map(Into::into).collect(),
            next,
        },
    ))
}

fn allowance_id(raw: &str) -> Result<Uuid, ApiError> {
    decision_id(raw)
}

/// `after` (an id, default 0) and `limit` (1 to 200, default 50).
fn page_query(query: Option<&str>) -> Result<(i64, u32), Vec<Issue>> {
    let mut issues = Issues::new();
    let (mut after, mut limit) = (0, 50);
    for (k, v) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match k.as_ref() {
            "after" => match v.parse::<i64>() {
                Ok(n) if n >= 0 => after = n,
                _ => issues.push("after", "must be the id of a use (a whole number)"),
            },
            "limit" => match v.parse::<u32>() {
                Ok(n) if (1..=MAX_USES_PAGE).contains(&n) => limit = n,
                _ => issues.push("limit", format!("must be 1 to {MAX_USES_PAGE}")),
            },
            _ => {}
        }
    }
    issues.finish((after, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_bounded_and_names_a_bad_value() {
        assert_eq!(page_query(None).unwrap(), (0, 50));
        assert_eq!(page_query(Some("after=7&limit=200")).unwrap(), (7, 200));
        assert_eq!(page_query(Some("limit=201")).unwrap_err()[0].path, "limit");
        assert_eq!(page_query(Some("after=-1")).unwrap_err()[0].path, "after");
    }
}
