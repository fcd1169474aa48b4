//! The person's side (DESIGN.md §4): answer pages, the feed, and their assets. Every page
//! works without JavaScript.

pub(crate) mod answer;
mod approval;
mod assets;
mod feed;
mod push;
mod security;
mod submitted;
mod templates;
mod view;

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
        .merge(feed::routes())
        .merge(push::routes())
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
