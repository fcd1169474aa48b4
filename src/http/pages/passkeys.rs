//! Passkeys from the person's side, for `static/passkey.js`:
//!
//! - `GET /inbox/passkeys/new` and `POST /inbox/passkeys`: a device bound to a person (its
//!   device cookie, set by their feed link) adds a passkey to that person from the feed; once
//!   they have one, only with an assertion of it. No API key can. The POST is taken only
//!   from sayso's own page, as JSON (`security::same_origin_json`).
//! - `GET /a/{token}/passkey`: the options an approval's page asks the passkey with, a
//!   challenge bound to that decision and the link's person's passkeys. Only an approval
//!   link opens it.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::json;

use super::security::same_origin_json;
use super::{Token, device_cookie};
use crate::domain::Status;
use crate::service::{Service, ServiceError, Viewer};
use crate::web::error::ApiError;
use crate::web::extract::parse_json;

pub fn routes() -> Router<Service> {
    use axum::routing::{get, post};
    Router::new()
        .route("/inbox/passkeys/new", get(creation_options))
        .route("/inbox/passkeys", post(add_passkey))
        .route("/a/{token}/passkey", get(step_up_options))
}

/// The person (and inbox) of the device cookie; 403 for a browser not bound to one.
async fn bound_viewer(svc: &Service, headers: &HeaderMap) -> Result<Viewer, ApiError> {
    match svc.device_viewer(device_cookie(headers).as_deref()).await {
        Ok(viewer) => Ok(viewer),
        Err(ServiceError::NotFound) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "not_bound",
            "this device is not linked to an inbox: open your feed link on it first",
        )),
        Err(e) => Err(e.into()),
    }
}

async fn creation_options(
    State(svc): State<Service>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let viewer = bound_viewer(&svc, &headers).await?;
    Ok(Json(svc.passkey_creation_options(&viewer).await?).into_response())
}

/// 201 once stored; 403 from another site or an unbound device, 415 for a body not sent as
/// JSON, 422 naming what is wrong with the passkey (or the existing one's assertion it
/// needs), 409 for one already added.
async fn add_passkey(
    State(svc): State<Service>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    same_origin_json(&headers, &svc.settings().public_url)?;
    let viewer = bound_viewer(&svc, &headers).await?;
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    let stored = svc
        .register_passkey(&viewer, &parse_json(&body)?, user_agent)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"added": true, "id": stored.credential_id})),
    )
        .into_response())
}

/// 200 with the options; 404 for a wrong link, 409 / 410 once resolved or expired, 422 when
/// the approval needs no passkey or the person has none.
async fn step_up_options(
    State(svc): State<Service>,
    Token(token): Token,
) -> Result<Response, ApiError> {
    let (d, _, person) = svc.approval_by_token(&token).await?;
    match d.status {
        Status::Pending => {}
        Status::Expired => return Err(ServiceError::Expired(Box::new(d)).into()),
        _ => return Err(ServiceError::AlreadyResolved(Box::new(d)).into()),
    }
    if d.spec.approval.as_ref().and_then(|a| a.step_up).is_none() {
        return Err(ServiceError::invalid("passkey", "this approval needs no passkey").into());
    }
    Ok(Json(svc.step_up_options(&d, &person).await?).into_response())
}
