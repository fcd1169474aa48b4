//! `GET /v1/events`: the inbox's resolutions as Server-Sent Events.
//!
//! Each resolution (answered, declined, cancelled, expired) is one `decision.resolved` event
//! whose data is the Decision and whose `id:` is the id of its resolution event in the
//! database: increasing, durable, the same on every replica. A client that reconnects with
//! `Last-Event-ID` (or `?last_event_id=`) gets exactly what it missed, then the live ones.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Version};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::{Stream, StreamExt};

use crate::domain::Issue;
use crate::service::{DecisionView, ResolutionFeed, Service};
use crate::web::error::ApiError;
use crate::web::extract::Auth;
use crate::web::waiting::{Seat, Seats, refusal};

/// A comment line this often keeps proxies and clients from timing the stream out.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub fn routes() -> Router<Service> {
    Router::new().route("/v1/events", get(stream_events))
}

async fn stream_events(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    seats: Seats,
    version: Version,
) -> Result<Response, ApiError> {
    let after = last_event_id(&headers, query.as_deref())?;
    // The stream waits as long as it is open: it holds a seat until it ends.
    let seat = match seats.take(&inbox) {
        Ok(seat) => seat,
        Err(refused) => return Ok(refusal(refused, version)),
    };
    let feed = svc.resolution_feed(inbox, after);
    let mut resp = Sse::new(events(feed, seat))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    // Reverse proxies that buffer responses (nginx) would hold events back.
    resp.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(resp)
}

/// Where to resume: the `Last-Event-ID` header, else `?last_event_id=`, else the start.
fn last_event_id(headers: &HeaderMap, query: Option<&str>) -> Result<i64, ApiError> {
    let from_query = || {
        url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
            .find(|(k, _)| k == "last_event_id")
            .map(|(_, v)| v.into_owned())
    };
    let (raw, path) = match headers.get("last-event-id") {
        Some(v) => (Some(v.to_str().unwrap_or("-").to_string()), "Last-Event-ID"),
        None => (from_query(), "last_event_id"),
    };
    match raw.as_deref().map(str::trim) {
        None | Some("") => Ok(0),
        Some(v) => v.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
            ApiError::validation(vec![Issue {
                path: path.into(),
                message: "must be the id of an event this stream sent (a whole number)".into(),
            }])
        }),
    }
}

/// The feed as SSE events; ends when the server shuts down or the database fails (the
/// client reconnects with `Last-Event-ID` and misses nothing). `seat` is given back with
/// the stream.
fn events(
    feed: ResolutionFeed,
    seat: Option<Seat>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let state = (feed, VecDeque::<(i64, DecisionView)>::new());
    let stream = futures::stream::unfold(state, |(mut feed, mut pending)| async move {
        loop {
            if let Some((id, view)) = pending.pop_front() {
                let event = match Event::default()
                    .event("decision.resolved")
                    .id(id.to_string())
                    .json_data(&view)
                {
                    Ok(event) => event,
                    Err(error) => {
                        tracing::error!(%error, "cannot serialise a decision for the event stream");
                        continue;
                    }
                };
                return Some((Ok(event), (feed, pending)));
            }
            match feed.next_batch().await {
                Ok(Some(batch)) => pending.extend(batch),
                Ok(None) => return None,
                Err(error) => {
                    tracing::warn!(%error, "event stream ended by an error");
                    return None;
                }
            }
        }
    });
    stream.map(move |event| {
        let _held = &seat;
        event
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_wins_over_the_query() {
        let mut h = HeaderMap::new();
        assert_eq!(last_event_id(&h, None).unwrap(), 0);
        assert_eq!(last_event_id(&h, Some("last_event_id=7")).unwrap(), 7);
        h.insert("last-event-id", HeaderValue::from_static("12"));
        assert_eq!(last_event_id(&h, Some("last_event_id=7")).unwrap(), 12);
        h.insert("last-event-id", HeaderValue::from_static("x"));
        let err = last_event_id(&h, None).unwrap_err();
        assert_eq!(err.details[0].path, "Last-Event-ID");
        assert!(last_event_id(&HeaderMap::new(), Some("last_event_id=-1")).is_err());
    }
}
