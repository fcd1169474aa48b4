//! HTTP: the agent API, the person's pages, health checks, and the router that joins them.

pub mod allowances;
pub mod api;
mod drain;
pub mod events;
mod metrics;
pub mod openapi;
pub mod pages;
mod rate_limit;
pub mod receipts;
mod trace;
pub mod usage;

pub use rate_limit::RateLimit;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::service::Service;
use crate::web::client_addr::{self, TrustedProxies};
use crate::web::error::ApiError;

/// How the HTTP side is set up; `app` makes it from the command line.
#[derive(Debug, Clone, Default)]
pub struct HttpSettings {
    /// Requests allowed per API key (under `/v1`) and per client address (elsewhere).
    pub rate_limit: RateLimit,
    /// Proxies whose `Forwarded` / `X-Forwarded-For` name the client.
    pub trusted_proxies: TrustedProxies,
    /// Serve `GET /metrics` to requests bearing this token; `None` leaves it unrouted (on
    /// this listener: `SAYSO_METRICS_LISTEN` serves it on its own).
    pub metrics_token: Option<String>,
}

/// The API's and the pages' routes, without the layers `finish` adds around everything.
pub fn routes(svc: &Service) -> Router<Service> {
    Router::new()
        .merge(api::routes())
        .merge(allowances::routes())
        .merge(pages::routes(svc.clone()))
        .merge(events::routes())
        .merge(usage::routes())
        .merge(receipts::routes())
        .merge(openapi::routes())
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

/// Wraps `routes` (and whatever else is served beside them, such as MCP) in what every request
/// goes through: the JSON 404 and 405, the body limit, the rate limit and request tracing.
pub fn finish(routes: Router<Service>, svc: Service, settings: &HttpSettings) -> Router {
    let routes = match &settings.metrics_token {
        Some(token) => routes.merge(metrics::routes(token)),
        None => routes,
    };
    let counted = svc.metrics().clone();
    let app = routes
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(crate::web::SMALL_BODY_LIMIT))
        .layer(drain::DrainRefusedBodies);
    let app = rate_limit::limit(app, settings.rate_limit, counted.clone())
        .with_state(svc)
        .layer(metrics::Measure::layer(counted));
    let trusted = settings.trusted_proxies.clone();
    trace::traced(app).layer(tower::util::MapRequestLayer::new(move |req| {
        client_addr::record(&trusted, req)
    }))
}

/// `GET /metrics` alone, for `SAYSO_METRICS_LISTEN`: an address of its own that only the
/// scraper reaches. The token is asked for there too.
pub fn metrics_only(svc: Service, token: &str) -> Router {
    trace::traced(
        metrics::routes(token)
            .fallback(not_found)
            .method_not_allowed_fallback(method_not_allowed)
            .with_state(svc),
    )
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
