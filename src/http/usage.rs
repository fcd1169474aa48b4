//! `GET /v1/usage`: the inbox's actions today and this month (UTC), and its daily quota.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

use crate::service::{Service, UsageView};
use crate::web::error::ApiError;
use crate::web::extract::Auth;

pub fn routes() -> Router<Service> {
    Router::new().route("/v1/usage", get(show_usage))
}

async fn show_usage(
    State(svc): State<Service>,
    Auth(inbox): Auth,
) -> Result<Json<UsageView>, ApiError> {
    Ok(Json(svc.usage(&inbox).await?))
}
