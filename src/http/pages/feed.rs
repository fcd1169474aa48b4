//! An inbox's feed (`GET /inbox/{token}`): pending decisions, open to-dos done or skipped in
//! one tap, and recent history.

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use time::OffsetDateTime;

use super::Token;
use super::templates::{FeedItem, FeedPage, FeedTodo, ProjectLink, error_page, render};
use crate::domain::{Decision, Kind, Status};
use crate::render;
use crate::service::{Service, ServiceError};

pub fn routes() -> Router<Service> {
    Router::new().route("/inbox/{token}", axum::routing::get(show_feed))
}

async fn show_feed(
    State(svc): State<Service>,
    Token(token): Token,
    RawQuery(query): RawQuery,
) -> Response {
    let filter = query.as_deref().and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .find(|(k, v)| k == "project" && !v.is_empty())
            .map(|(_, v)| v.into_owned())
    });
    match svc.feed(&token, filter.as_deref()).await {
        Ok(feed) => {
            let push_key = push_key(&svc).await;
            render(StatusCode::OK, &page(&svc, &token, feed, filter, push_key))
        }
        Err(ServiceError::NotFound) => error_page(
            StatusCode::NOT_FOUND,
            "Link not found",
            "This link does not open any inbox.",
        ),
        Err(ServiceError::Unavailable) => error_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Try again in a moment",
            "sayso cannot reach its database right now. Reload in a few seconds.",
        ),
        Err(e) => {
            tracing::error!(error = %e, "the feed failed");
            error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Sorry",
                "Something went wrong; it has been logged.",
            )
        }
    }
}

fn page(
    svc: &Service,
    token: &str,
    feed: crate::service::Feed,
    filter: Option<String>,
    push_key: String,
) -> FeedPage {
    let now = OffsetDateTime::now_utc();
    let base = format!("/inbox/{token}");
    let link = |d: &Decision| format!("/d/{}", svc.tokens().answer_token(d.id));
    let item = |d: &Decision, when: OffsetDateTime| FeedItem {
        question: d.spec.question.clone(),
        project: d.spec.project.clone(),
        kind: d.kind().as_str(),
        status: d.status.as_str(),
        url: link(d),
        when: render::format_time(when),
    };
    let (todos, pending): (Vec<&Decision>, Vec<&Decision>) =
        feed.pending.iter().partition(|d| d.kind() == Kind::Todo);
    FeedPage {
        inbox_name: feed.inbox.name.clone(),
        open_count: feed.pending.len(),
        projects: feed
            .projects
            .iter()
            .map(|p| ProjectLink {
                name: p.clone(),
                url: format!(
                    "{base}?project={}",
                    url::form_urlencoded::byte_serialize(p.as_bytes()).collect::<String>()
                ),
                active: filter.as_deref() == Some(p),
            })
            .collect(),
        filter,
        all_url: base.clone(),
        pending: pending
            .iter()
            .map(|d| FeedItem {
                when: render::time_left(d.expires_at, now),
                ..item(d, d.expires_at)
            })
            .collect(),
        todos: todos
            .iter()
            .map(|d| FeedTodo {
                question: d.spec.question.clone(),
                project: d.spec.project.clone(),
                action: link(d),
                when: render::time_left(d.expires_at, now),
            })
            .collect(),
        history: feed
            .recent
            .iter()
            .filter(|d| d.status != Status::Pending)
            .map(|d| item(d, d.resolved_at.unwrap_or(d.expires_at)))
            .collect(),
        push_key,
        push_url: format!("{base}/push"),
    }
}

/// The VAPID public key, or empty (the page then offers no push) when it cannot be read.
async fn push_key(svc: &Service) -> String {
    svc.vapid_public_key().await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "no VAPID key for the feed page");
        String::new()
    })
}
