//! The person's side (DESIGN.md §4): answer pages, the feed, and their assets. Every page
//! works without JavaScript.

pub(crate) mod answer;
mod assets;
mod feed;
mod markdown;
mod push;
mod security;
mod submitted;
mod templates;
mod view;

use axum::Router;
use axum::middleware::{from_fn, from_fn_with_state};

use crate::service::Service;

pub use markdown::render_markdown;
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
