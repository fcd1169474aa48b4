//! `GET /metrics` for Prometheus, and the layer that counts every request for it.
//!
//! The endpoint is not public: it exists only when `SAYSO_METRICS_TOKEN` is set (otherwise
//! it is an unknown path, 404), and answers only a request bearing that token (401 without).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::StreamExt;
use sha2::{Digest, Sha256};
use tower::Layer;

use crate::metrics::Metrics;
use crate::service::Service;
use crate::web::error::ApiError;

/// What Prometheus asks for and `prometheus-client` writes.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The `/metrics` route, answering only requests that bear `token`.
pub fn routes(token: &str) -> Router<Service> {
    let token: Arc<[u8; 32]> = Arc::new(Sha256::digest(token.as_bytes()).into());
    Router::new().route(
        "/metrics",
        get(move |State(svc): State<Service>, headers: HeaderMap| scrape(svc, headers, token)),
    )
}

async fn scrape(svc: Service, headers: HeaderMap, token: Arc<[u8; 32]>) -> Response {
    let offered = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    // Digests are compared, not the tokens: the time taken says nothing about the token.
    let allowed = offered.is_some_and(|t| Sha256::digest(t.as_bytes()).as_slice() == *token);
    if !allowed {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "send Authorization: Bearer with the value of SAYSO_METRICS_TOKEN",
        )
        .into_response();
    }
    let text = svc.scrape_metrics().await;
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(OPENMETRICS)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        text,
    )
        .into_response()
}

/// Counts a request by method, route template and status, with the time to its response
/// head; a streamed response (SSE, an MCP stream) also counts as open until its body ends.
/// Its future holds the inner one and a few words, so a waiting request costs no more.
#[derive(Clone)]
pub struct Measure {
    metrics: Metrics,
}

impl Measure {
    pub fn layer(metrics: Metrics) -> Self {
        Measure { metrics }
    }
}

impl<S> Layer<S> for Measure {
    type Service = Measured<S>;
    fn layer(&self, inner: S) -> Measured<S> {
        Measured {
            inner,
            metrics: self.metrics.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Measured<S> {
    inner: S,
    metrics: Metrics,
}

impl<S> tower::Service<Request> for Measured<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Measuring<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        Measuring {
            started: Instant::now(),
            method: method_label(req.method()),
            // Templates only: a path carries ids and capability tokens, and would make a
            // series per decision.
            route: req.extensions().get::<MatchedPath>().cloned(),
            metrics: self.metrics.clone(),
            inner: self.inner.call(req),
        }
    }
}

pin_project_lite::pin_project! {
    pub struct Measuring<F> {
        #[pin]
        inner: F,
        started: Instant,
        method: &'static str,
        route: Option<MatchedPath>,
        metrics: Metrics,
    }
}

impl<F> Future for Measuring<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(resp) = std::task::ready!(this.inner.poll(cx));
        let route = this.route.as_ref().map_or("unmatched", MatchedPath::as_str);
        let (metrics, method) = (&*this.metrics, *this.method);
        metrics.request(
            method,
            route,
            resp.status().as_u16(),
            this.started.elapsed(),
        );
        let streamed = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if !streamed {
            return Poll::Ready(Ok(resp));
        }
        let open = metrics.stream_opened(method, route);
        Poll::Ready(Ok(resp.map(|body| {
            Body::from_stream(body.into_data_stream().map(move |chunk| {
                // Held by the stream, dropped with it.
                let _ = &open;
                chunk
            }))
        })))
    }
}

/// The method as a label: the standard ones by name, anything else as `other`, so a
/// client inventing methods cannot add series.
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}
