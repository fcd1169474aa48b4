//! HTTP: the agent API, the person's pages, health checks, and the router that joins them.
//!
//! Uses `web`, `service`, `render`, `metrics` and `domain`; never `mcp` or `notify`
//! (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod allowance_uses;
pub mod allowances;
pub mod api;
mod drain;
pub mod events;
mod metrics;
pub mod openapi;
pub mod pages;
mod rate_limit;
pub mod receipts;
pub mod shapes;
mod trace;
pub mod usage;

pub use rate_limit::RateLimit;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;

use tower::ServiceBuilder;

use crate::service::Service;
use crate::web::client_addr::{self, TrustedProxies};
use crate::web::error::ApiError;
use crate::web::waiting::Waiting;

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
        .merge(allowance_uses::routes())
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
///
/// The layers are put on in as few `Router::layer` calls as their order allows: each call
/// puts every request's future for its layers in an allocation of its own, beside a copy of
/// axum's route future (some 300 bytes), and a parked await keeps all of them for as long as
/// it waits (docs/PERFORMANCE.md, "A parked await's memory").
pub fn finish(
    routes: Router<Service>,
    svc: Service,
    settings: &HttpSettings,
    waiting: Waiting,
) -> Router {
    let routes = match &settings.metrics_token {
        Some(token) => routes.merge(metrics::routes(token)),
        None => routes,
    };
    let counted = svc.metrics().clone();
    let routes = routes
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);
    // Outermost first: the client's address, the seats of waiting requests, the request id
    // and span, the metrics.
    let trusted = settings.trusted_proxies.clone();
    let outer = ServiceBuilder::new()
        .map_request(move |req| client_addr::record(&trusted, req))
        .layer(axum::Extension(waiting))
        .layer(trace::layers())
        .layer(metrics::Measure::layer(counted.clone()));
    // Innermost: the body limit, and the drain of the bodies it refuses.
    let inner = ServiceBuilder::new()
        .layer(drain::DrainRefusedBodies)
        .layer(DefaultBodyLimit::max(crate::web::SMALL_BODY_LIMIT));
    if settings.rate_limit.is_off() {
        return routes.with_state(svc).layer(outer.layer(inner));
    }
    // The rate limit goes between the two, so a request it refuses is neither read nor
    // drained.
    rate_limit::limit(routes.layer(inner), settings.rate_limit, counted)
        .with_state(svc)
        .layer(outer)
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
        (status = 503, response = shapes::Unavailable),
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
