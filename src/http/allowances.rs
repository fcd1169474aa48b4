//! Standing allowances over the agent API (docs/API.md): the hook reads them before it asks,
//! `sayso allowances` lists and revokes them. The key can only read and revoke: an
//! allowance is made by the person's Allow on their own approval link, and nothing here
//! makes, extends or widens one.

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{delete, get};
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

#[allow(unused_imports)] // named only in the OpenAPI annotations
use super::shapes::{KeyedRefusals, NotFound, ValidationFailed};
use crate::domain::Issues;
use crate::domain::allowance::{Allowance, Scope};
use crate::service::Service;
use crate::web::error::ApiError;
use crate::web::extract::{Auth, Segment, decision_id};
use crate::web::json;

/// The longest value a scope query takes: enough for any approval's project, tool or rule.
const MAX_SCOPE_CHARS: usize = 4000;

pub fn routes() -> Router<Service> {
    Router::new()
        .route(
            "/v1/allowances",
            get(list_allowances).delete(revoke_all_allowances),
        )
        .route("/v1/allowances/{id}", delete(revoke_allowance))
}

/// A standing allowance: until `until` (the server's clock), calls of its scope pass
/// without asking.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AllowanceView {
    pub id: Uuid,
    /// The approval whose Allow made it.
    pub decision_id: Uuid,
    /// Who allowed it (`null` only for an answer from before people).
    pub allowed_by: Option<String>,
    /// Which of the person's ways they answered by: `feed`, `push`, `ntfy` or `email`.
    #[schema(value_type = String, example = "feed")]
    pub channel: String,
    pub scope: Scope,
    /// The agent session it was given in; shown, never matched.
    pub session_id: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// It counts before this instant, and not from it on.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub until: OffsetDateTime,
    /// How many calls it let through so far (`GET /v1/allowances/{id}/uses` lists them).
    pub uses: u64,
}

impl From<(Allowance, u64)> for AllowanceView {
    fn from((a, uses): (Allowance, u64)) -> Self {
        AllowanceView {
            uses,
            id: a.id,
            decision_id: a.decision_id,
            allowed_by: a.person,
            channel: a.channel.as_str().to_string(),
            scope: a.scope,
            session_id: a.session_id,
            created_at: a.created_at,
            until: a.until,
        }
    }
}

/// A list of allowances.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AllowanceList {
    pub items: Vec<AllowanceView>,
}

/// How many allowances a revoke ended.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Revoked {
    pub revoked: u64,
}

/// The inbox's standing allowances that count now, soonest end first; with `harness` and
/// `tool_name`, only those of exactly that scope (a `project` or `rule` left out matches
/// only allowances without one), latest end first: what the hook asks before it puts a call
/// to the person.
#[utoipa::path(
    get, path = "/v1/allowances", tag = "allowances", security(("bearer" = [])),
    params(
        ("harness" = Option<String>, Query, description = "With `tool_name`: only this harness's."),
        ("tool_name" = Option<String>, Query, description = "With `harness`: only this tool's."),
        ("project" = Option<String>, Query, description = "With a scope: this project (absent: none)."),
        ("rule" = Option<String>, Query, description = "With a scope: this policy rule (absent: calls no rule matched)."),
    ),
    responses(
        (status = 200, description = "The allowances that count now.", body = AllowanceList),
        (status = 422, response = ValidationFailed),
        KeyedRefusals,
    )
)]
pub(crate) async fn list_allowances(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let scope = parse_scope(query.as_deref()).map_err(ApiError::validation)?;
    let items = svc
        .allowances_with_uses(inbox.id, scope.as_ref(), crate::service::now())
        .await?;
    Ok(json::response(
        StatusCode::OK,
        &AllowanceList {
            items: items.into_iter().map(Into::into).collect(),
        },
    ))
}

/// Revokes one allowance: calls of its scope are asked again from now on.
#[utoipa::path(
    delete, path = "/v1/allowances/{id}", tag = "allowances", security(("bearer" = [])),
    params(("id" = String, Path, description = "The allowance's id.")),
    responses(
        (status = 200, description = "Revoked.", body = Revoked),
        (status = 404, response = NotFound),
        KeyedRefusals,
    )
)]
pub(crate) async fn revoke_allowance(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    Segment(id): Segment,
) -> Result<Response, ApiError> {
    let revoked = svc
        .revoke_allowances(&inbox, Some(decision_id(&id)?))
        .await?;
    Ok(json::response(StatusCode::OK, &Revoked { revoked }))
}

/// Revokes every allowance of the inbox.
#[utoipa::path(
    delete, path = "/v1/allowances", tag = "allowances", security(("bearer" = [])),
    responses(
        (status = 200, description = "How many were revoked (0 when there were none).", body = Revoked),
        KeyedRefusals,
    )
)]
pub(crate) async fn revoke_all_allowances(
    State(svc): State<Service>,
    Auth(inbox): Auth,
) -> Result<Response, ApiError> {
    let revoked = svc.revoke_allowances(&inbox, None).await?;
    Ok(json::response(StatusCode::OK, &Revoked { revoked }))
}

/// The scope a list asks for: none without `harness` and `tool_name`; one of the two alone,
/// or a `project` or `rule` without them, is an issue (a half scope would match more than
/// the caller meant).
fn parse_scope(query: Option<&str>) -> Result<Option<Scope>, Vec<crate::domain::Issue>> {
    let mut issues = Issues::new();
    let (mut harness, mut tool_name, mut project, mut rule) = (None, None, None, None);
    for (k, v) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        let slot = match k.as_ref() {
            "harness" => &mut harness,
            "tool_name" => &mut tool_name,
            "project" => &mut project,
            "rule" => &mut rule,
            _ => continue,
        };
        if v.is_empty() || v.chars().count() > MAX_SCOPE_CHARS {
            issues.push(
                k.to_string(),
                format!("must be 1 to {MAX_SCOPE_CHARS} characters"),
            );
            continue;
        }
        *slot = Some(v.into_owned());
    }
    let scope = match (harness, tool_name) {
        (Some(harness), Some(tool_name)) => Some(Scope {
            harness,
            project,
            tool_name,
            rule,
        }),
        (None, None) if project.is_none() && rule.is_none() => None,
        (h, _) => {
            let missing = if h.is_none() { "harness" } else { "tool_name" };
            issues.push(
                missing,
                "is required with any other scope parameter (harness and tool_name together)",
            );
            None
        }
    };
    issues.finish(scope)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_is_whole_or_none() {
        assert_eq!(parse_scope(None).unwrap(), None);
        let s = parse_scope(Some("harness=claude&tool_name=Bash&project=shop"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (s.harness.as_str(), s.tool_name.as_str()),
            ("claude", "Bash")
        );
        assert_eq!(s.project.as_deref(), Some("shop"));
        assert_eq!(s.rule, None);
        let err = parse_scope(Some("tool_name=Bash")).unwrap_err();
        assert_eq!(err[0].path, "harness");
        let err = parse_scope(Some("rule=x")).unwrap_err();
        assert_eq!(err[0].path, "harness");
        let err = parse_scope(Some("harness=&tool_name=Bash")).unwrap_err();
        assert_eq!(err[0].path, "harness");
    }
}
