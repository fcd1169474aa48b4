//! HTTP: the agent API, the person's pages, health checks, and the router that joins them.

pub mod api;
mod drain;
pub mod error;
pub mod events;
pub mod extract;
pub mod openapi;
pub mod pages;
mod rate_limit;
pub mod usage;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use tower_http::trace::TraceLayer;

use crate::service::Service;
use error::ApiError;

/// The whole application as one router, ready to serve or to call with `oneshot` in tests.
pub fn router(svc: Service) -> Router {
    let app = Router::new()
        .merge(api::routes())
        .merge(pages::routes(svc.clone()))
        .merge(events::routes())
        .merge(usage::routes())
        .merge(crate::mcp::routes(svc.clone()))
        .merge(openapi::routes())
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(api::SMALL_BODY_LIMIT))
        .layer(axum::middleware::from_fn(drain::drain_refused_bodies));
    rate_limit::limit(app, svc.settings().rate_limit)
        .layer(TraceLayer::new_for_http())
        .with_state(svc)
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, description = "The process is up.", content_type = "text/plain", body = String, example = "ok\n")))]
pub(crate) async fn healthz() -> &'static str {
    "ok\n"
}

/// The database answers.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "The database answers.", content_type = "text/plain", body = String, example = "ready\n"),
        (status = 503, response = openapi::Unavailable),
    ))]
pub(crate) async fn readyz(State(svc): State<Service>) -> impl IntoResponse {
    if svc.ready().await {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        ApiError::unavailable().into_response()
    }
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method",
    )
}
