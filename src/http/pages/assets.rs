//! The pages' own assets, built into the binary so a page never needs another host.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const STYLESHEET: &str = include_str!("../../../static/sayso.css");
const APPROVAL_STYLESHEET: &str = include_str!("../../../static/approval.css");
const ICON: &str = include_str!("../../../static/icon.svg");
const FEED_SCRIPT: &str = include_str!("../../../static/feed.js");
const ANSWER_SCRIPT: &str = include_str!("../../../static/answer.js");
const PASSKEY_SCRIPT: &str = include_str!("../../../static/passkey.js");
const EDIT_SCRIPT: &str = include_str!("../../../static/edit.js");
const SERVICE_WORKER: &str = include_str!("../../../static/sw.js");
const MANIFEST: &str = include_str!("../../../static/manifest.webmanifest");

pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/static/sayso.css",
            get(|| async { asset("text/css; charset=utf-8", STYLESHEET) }),
        )
        .route(
            "/static/approval.css",
            get(|| async { asset("text/css; charset=utf-8", APPROVAL_STYLESHEET) }),
        )
        .route(
            "/static/icon.svg",
            get(|| async { asset("image/svg+xml", ICON) }),
        )
        .route(
            "/static/feed.js",
            get(|| async { asset("text/javascript; charset=utf-8", FEED_SCRIPT) }),
        )
        .route(
            "/static/answer.js",
            get(|| async { asset("text/javascript; charset=utf-8", ANSWER_SCRIPT) }),
        )
        .route(
            "/static/passkey.js",
            get(|| async { asset("text/javascript; charset=utf-8", PASSKEY_SCRIPT) }),
        )
        .route(
            "/static/edit.js",
            get(|| async { asset("text/javascript; charset=utf-8", EDIT_SCRIPT) }),
        )
        // At the root, so its scope is the whole site; revalidated on every registration
        // check so a new version reaches phones promptly.
        .route(
            "/sw.js",
            get(|| async {
                let mut resp = asset("text/javascript; charset=utf-8", SERVICE_WORKER);
                resp.headers_mut()
                    .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
                resp
            }),
        )
        .route(
            "/manifest.webmanifest",
            get(|| async { asset("application/manifest+json", MANIFEST) }),
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
    crate::web::headers::no_sniff(h);
    resp
}
