//! The pages' own assets, built into the binary so a page never needs another host.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const STYLESHEET: &str = include_str!("../../../static/sayso.css");
const ICON: &str = include_str!("../../../static/icon.svg");

pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/static/sayso.css",
            get(|| async { asset("text/css; charset=utf-8", STYLESHEET) }),
        )
        .route(
            "/static/icon.svg",
            get(|| async { asset("image/svg+xml", ICON) }),
        )
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut resp = body.into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=86400"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}
