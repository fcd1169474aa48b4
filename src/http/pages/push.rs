//! `POST /inbox/{token}/push`: the feed page's script stores this browser's Web Push
//! subscription for the feed link's inbox, so its decisions reach this device.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::json;

use super::Token;
use crate::http::error::ApiError;
use crate::http::extract::parse_json;
use crate::notify::push::parse_subscription;
use crate::service::{Service, ServiceError};

pub fn routes() -> Router<Service> {
    Router::new().route(
        "/inbox/{token}/push",
        axum::routing::post(subscribe_to_push),
    )
}

/// 201 once stored; 400 for a body that is not JSON, 422 for a subscription that is not
/// usable, 404 for an unknown feed link.
async fn subscribe_to_push(
    State(svc): State<Service>,
    Token(token): Token,
    body: Bytes,
) -> Result<Response, ApiError> {
    let Some(inbox_id) = svc.tokens().open_feed_token(&token) else {
        return Err(no_such_inbox());
    };
    let sub = parse_subscription(&parse_json(&body)?).map_err(ApiError::validation)?;
    let store = svc.store();
    let inbox = store
        .inbox_by_id(inbox_id)
        .await
        .map_err(ServiceError::from)?
        .ok_or_else(no_such_inbox)?;
    store
        .add_push_subscription(inbox.id, &sub, crate::service::now())
        .await
        .map_err(ServiceError::from)?;
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
