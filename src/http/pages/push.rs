//! The feed page's script stores this browser's Web Push subscription for its person, so
//! their decisions reach this device: `POST /inbox/push` for a bound device (its cookie names
//! the person; taken only from sayso's own page, as JSON: `security::same_origin_json`), and
//! `POST /inbox/{token}/push` for the feed link itself.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::json;

use super::security::same_origin_json;
use super::{Token, device_cookie};
use crate::service::{Service, ServiceError};
use crate::web::error::ApiError;
use crate::web::extract::parse_json;

pub fn routes() -> Router<Service> {
    Router::new()
        .route("/inbox/push", axum::routing::post(subscribe_device_to_push))
        .route(
            "/inbox/{token}/push",
            axum::routing::post(subscribe_to_push),
        )
}

/// The feed of a bound device (`/inbox`): its cookie names the person. 403 from another
/// site or an unbound device, 415 for a body not sent as JSON.
async fn subscribe_device_to_push(
    State(svc): State<Service>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    same_origin_json(&headers, &svc.settings().public_url)?;
    let viewer = match svc.device_viewer(device_cookie(&headers).as_deref()).await {
        Ok(viewer) => viewer,
        Err(ServiceError::NotFound) => {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "not_bound",
                "this device is not linked to an inbox: open the feed link on it first",
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let sub = svc
        .subscribe_person_to_push(&viewer.person, &parse_json(&body)?)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"subscribed": true, "endpoint": sub.endpoint})),
    )
        .into_response())
}

/// 201 once stored; 400 for a body that is not JSON, 422 for a subscription that is not
/// usable, 404 for an unknown feed link.
async fn subscribe_to_push(
    State(svc): State<Service>,
    Token(token): Token,
    body: Bytes,
) -> Result<Response, ApiError> {
    // An unknown link is refused before the body is even parsed.
    if svc.tokens().open_feed_token(&token).is_none() {
        return Err(no_such_inbox());
    }
    let sub = match svc.subscribe_to_push(&token, &parse_json(&body)?).await {
        Ok(sub) => sub,
        Err(ServiceError::NotFound) => return Err(no_such_inbox()),
        Err(e) => return Err(e.into()),
    };
    Ok((
        StatusCode::CREATED,
        Json(json!({"subscribed": true, "endpoint": sub.endpoint})),
    )
        .into_response())
}

fn no_such_inbox() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "this link does not open any inbox",
    )
}
