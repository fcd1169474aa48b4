//! The person's side (docs/PAGES.md): answer pages, the feed, and their assets. Every page
//! works without JavaScript.

mod allowed;
pub(crate) mod answer;
mod approval;
mod approve;
mod assets;
mod command;
mod feed;
mod passkeys;
mod push;
mod reader;
mod refusal;
mod security;
mod session;
mod submitted;
mod templates;
mod view;
mod what_runs;

use std::convert::Infallible;

use axum::Router;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::middleware::{from_fn, from_fn_with_state};

use crate::service::Service;
use crate::web::extract::Segment;

pub use security::CONTENT_SECURITY_POLICY;

pub fn routes(svc: Service) -> Router<Service> {
    Router::new()
        .merge(answer::routes())
        .merge(approve::routes())
        .merge(feed::routes())
        .merge(session::routes())
        .merge(push::routes())
        .merge(passkeys::routes())
        .layer(from_fn_with_state(svc, security::refuse_cross_site))
        .layer(from_fn(security::page_headers))
        .merge(assets::routes())
}

/// The token in a page's path. One that is not even UTF-8 opens nothing, like any other wrong
/// token, and gets the very same answer, so no kind of wrong link can be told from another.
pub(crate) struct Token(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Token {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Infallible> {
        let segment = Segment::from_request_parts(parts, state).await;
        Ok(Token(segment.map(|s| s.0).unwrap_or_default()))
    }
}

/// The device cookie a browser sent, if any: `__Host-sayso_device` (set behind https)
/// before `sayso_device` (set over plain http, and behind https before the prefix was used).
pub(crate) fn device_cookie(headers: &axum::http::HeaderMap) -> Option<String> {
    use crate::service::{DEVICE_COOKIE, SECURE_DEVICE_COOKIE};
    let cookies: Vec<(&str, &str)> = headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .collect();
    [SECURE_DEVICE_COOKIE, DEVICE_COOKIE]
        .iter()
        .find_map(|wanted| {
            cookies
                .iter()
                .find(|(name, _)| name == wanted)
                .map(|(_, value)| value.trim().to_string())
        })
}
