//! Passkeys from the person's side, for `static/passkey.js`:
//!
//! - `GET /inbox/passkeys/new` and `POST /inbox/passkeys`: a device bound to an inbox (its
//!   device cookie, set by the feed link) adds a passkey from the feed. No API key can.
//! - `GET /a/{token}/passkey`: the options an approval's page asks the passkey with, a
//!   challenge bound to that decision. Only an approval link opens it.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::json;

use super::{Token, device_cookie};
use crate::domain::Status;
use crate::domain::inbox::Inbox;
use crate::service::{Service, ServiceError};
use crate::web::error::ApiError;
use crate::web::extract::parse_json;

pub fn routes() -> Router<Service> {
    use axum::routing::{get, post};
    Router::new()
        .route("/inbox/passkeys/new", get(creation_options))
        .route("/inbox/passkeys", post(add_passkey))
        .route("/a/{token}/passkey", get(step_up_options))
}

/// The inbox of the device cookie; 403 for a browser not bound to one.
async fn bound_inbox(svc: &Service, headers: &HeaderMap) -> Result<Inbox, ApiError> {
    match svc.device_inbox(device_cookie(headers).as_deref()).await {
        Ok(inbox) => Ok(inbox),
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
    let inbox = bound_inbox(&svc, &headers).await?;
    Ok(Json(svc.passkey_creation_options(&inbox).await?).into_response())
}

/// 201 once stored; 422 naming what is wrong with the passkey; 409 for one already added.
async fn add_passkey(
    State(svc): State<Service>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let inbox = bound_inbox(&svc, &headers).await?;
    let stored = svc.register_passkey(&inbox, &parse_json(&body)?).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"added": true, "id": stored.credential_id})),
    )
        .into_response())
}

/// 200 with the options; 404 for a wrong link, 409 / 410 once resolved or expired, 422 when
/// the approval needs no passkey or the inbox has none.
async fn step_up_options(
    State(svc): State<Service>,
    Token(token): Token,
) -> Result<Response, ApiError> {
    let (d, _, _) = svc.approval_by_token(&token).await?;
    match d.status {
        Status::Pending => {}
        Status::Expired => return Err(ServiceError::Expired(Box::new(d)).into()),
        _ => return Err(ServiceError::AlreadyResolved(Box::new(d)).into()),
    }
    if d.spec.approval.as_ref().and_then(|a| a.step_up).is_none() {
        return Err(ServiceError::invalid("passkey", "this approval needs no passkey").into());
    }
    Ok(Json(svc.step_up_options(&d).await?).into_response())
}
