//! Request tracing: each request gets an id (the caller's `X-Request-Id`, or a new UUID),
//! returned in the response and carried by its span, so one request's log lines can be
//! picked out. The span names the route template, `/d/{token}`, never the path itself: paths
//! carry capability tokens, and logs must not.

use axum::Router;
use axum::extract::{MatchedPath, Request};
use axum::http::HeaderName;
use tower::ServiceBuilder;
use tower::layer::util::{Identity, Stack};
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::web::client_addr::ClientAddr;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Wraps `app` in the request id and the request span.
pub fn traced(app: Router) -> Router {
    app.layer(layers())
}

/// The layers of `layers`, innermost last.
pub type Layers = Stack<
    TraceLayer<SharedClassifier<ServerErrorsAsFailures>, fn(&Request) -> tracing::Span>,
    Stack<PropagateRequestIdLayer, Stack<SetRequestIdLayer<MakeRequestUuid>, Identity>>,
>;

/// The request id and the request span as one stack, outermost first: the id is set, then
/// copied to the response, then the span made (it carries the id).
pub fn layers() -> ServiceBuilder<Layers> {
    ServiceBuilder::new()
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(TraceLayer::new_for_http().make_span_with(span as fn(&Request) -> tracing::Span))
}

fn span(req: &Request) -> tracing::Span {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("(no route)", MatchedPath::as_str);
    let request_id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let client = req
        .extensions()
        .get::<ClientAddr>()
        .map(|ClientAddr(ip)| tracing::field::display(*ip));
    tracing::info_span!("request", method = %req.method(), route, request_id, client)
}
