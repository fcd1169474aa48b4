//! Requests that wait: awaits, event streams, MCP calls that wait for the person. Each holds
//! its connection (over HTTP/1.1) for as long as it waits, and connections are capped
//! (`SAYSO_MAX_CONNECTIONS`); left alone, agents that park enough of them leave none for the
//! person's pages, which then answer 503 to the one who is to answer. So waiting requests
//! take a seat first: at most `SAYSO_WAITING_PER_KEY` per API key, and connections holding
//! one at most `SAYSO_WAITING_CONNECTIONS`, below the cap, so the rest of the connections
//! always serve the pages. A request past either gets 429 naming the limit.
//!
//! A connection is counted once however many of its requests wait: an HTTP/2 connection
//! carrying a thousand awaits as streams takes one connection seat (and a thousand of its
//! key's).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderValue, StatusCode, Version, header};
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

use super::error::ApiError;
use crate::domain::inbox::Inbox;

/// Which connection a request came on: the accept loop numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnectionId(pub u64);

/// How many requests may wait at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitingLimits {
    /// Per API key; `None` for no limit.
    pub per_key: Option<usize>,
    /// Connections holding a waiting request, all keys together.
    pub connections: usize,
}

impl WaitingLimits {
    /// The defaults for a server that holds `max_connections`: half of them per key, and a
    /// tenth kept for the person's pages.
    pub fn for_connections(max_connections: usize) -> WaitingLimits {
        WaitingLimits {
            per_key: Some((max_connections / 2).max(1)),
            connections: max_connections.saturating_sub((max_connections / 10).max(1)),
        }
    }
}

/// The seats taken, shared by every request of the server. Cheap to clone.
#[derive(Clone)]
pub struct Waiting {
    limits: WaitingLimits,
    counts: Arc<Mutex<Counts>>,
}

#[derive(Default)]
struct Counts {
    /// Waiting requests by key; a key with none has no entry.
    keys: HashMap<Uuid, usize>,
    /// Waiting requests by connection; a connection with none has no entry.
    connections: HashMap<ConnectionId, usize>,
}

/// Why a request may not wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Its key has this many waiting already (`SAYSO_WAITING_PER_KEY`).
    Key(usize),
    /// This many connections hold waiting requests (`SAYSO_WAITING_CONNECTIONS`).
    Connections(usize),
}

impl Refused {
    pub fn message(self) -> String {
        match self {
            Refused::Key(n) => format!(
                "this API key already has {n} requests waiting (awaits, event streams, MCP \
                 calls that wait), its most at once (SAYSO_WAITING_PER_KEY); let one finish \
                 first, or follow many decisions on one request with GET /v1/events"
            ),
            Refused::Connections(n) => format!(
                "waiting requests hold {n} connections, the most this server gives them \
                 (SAYSO_WAITING_CONNECTIONS; the rest are kept for the person's pages); try \
                 again shortly, or wait over HTTP/2, where many requests share one connection"
            ),
        }
    }

    /// Seconds to wait before trying again: a key's own requests end at their timeouts;
    /// other keys' connections may free sooner.
    pub fn retry_after(self) -> u64 {
        match self {
            Refused::Key(_) => 10,
            Refused::Connections(_) => 2,
        }
    }
}

impl From<Refused> for ApiError {
    fn from(r: Refused) -> ApiError {
        ApiError {
            retry_after: Some(r.retry_after()),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_waiting",
                r.message(),
            )
        }
    }
}

/// A refusal as the answer to a request on `version`: 429, and over HTTP/1 the connection
/// closed after it, so a refused agent does not keep idling on a connection the person's
/// pages may need.
pub fn refusal(refused: Refused, version: Version) -> Response {
    let mut resp = ApiError::from(refused).into_response();
    if version <= Version::HTTP_11 {
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

impl Waiting {
    pub fn new(limits: WaitingLimits) -> Waiting {
        Waiting {
            limits,
            counts: Arc::default(),
        }
    }

    /// A seat for one more waiting request of `key` on `connection` (`None` for a request
    /// made in-process, which holds no connection).
    pub fn take(&self, key: Uuid, connection: Option<ConnectionId>) -> Result<Seat, Refused> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let of_key = counts.keys.get(&key).copied().unwrap_or(0);
        if let Some(max) = self.limits.per_key
            && of_key >= max
        {
            return Err(Refused::Key(max));
        }
        if let Some(c) = connection
            && !counts.connections.contains_key(&c)
            && counts.connections.len() >= self.limits.connections
        {
            return Err(Refused::Connections(self.limits.connections));
        }
        *counts.keys.entry(key).or_default() += 1;
        if let Some(c) = connection {
            *counts.connections.entry(c).or_default() += 1;
        }
        Ok(Seat {
            waiting: self.clone(),
            key,
            connection,
        })
    }

    fn give_back(&self, key: Uuid, connection: Option<ConnectionId>) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = counts.keys.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                counts.keys.remove(&key);
            }
        }
        if let Some(c) = connection
            && let Some(n) = counts.connections.get_mut(&c)
        {
            *n -= 1;
            if *n == 0 {
                counts.connections.remove(&c);
            }
        }
    }
}

/// One waiting request's seat; given back when dropped (the request ended, or its client
/// went away).
pub struct Seat {
    waiting: Waiting,
    key: Uuid,
    connection: Option<ConnectionId>,
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.waiting.give_back(self.key, self.connection);
    }
}

/// Where a request takes a seat: the server's seats and the request's connection, both put
/// into its extensions (by the router and the accept loop). A request without them (a test
/// calling the router in-process) waits unlimited.
#[derive(Clone, Default)]
pub struct Seats {
    waiting: Option<Waiting>,
    connection: Option<ConnectionId>,
}

impl Seats {
    pub fn of(extensions: &Extensions) -> Seats {
        Seats {
            waiting: extensions.get::<Waiting>().cloned(),
            connection: extensions.get::<ConnectionId>().copied(),
        }
    }

    /// A seat for a waiting request of `inbox`'s key (the inbox itself when it was not read
    /// through a key); `None` where nothing limits waiting.
    pub fn take(&self, inbox: &Inbox) -> Result<Option<Seat>, Refused> {
        let Some(waiting) = &self.waiting else {
            return Ok(None);
        };
        let key = inbox.key.map_or(inbox.id, |k| k.id);
        waiting.take(key, self.connection).map(Some)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Seats {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Seats::of(&parts.extensions))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C1: Option<ConnectionId> = Some(ConnectionId(1));
    const C2: Option<ConnectionId> = Some(ConnectionId(2));
    const C3: Option<ConnectionId> = Some(ConnectionId(3));

    #[test]
    fn a_key_waits_at_most_its_share() {
        let waiting = Waiting::new(WaitingLimits {
            per_key: Some(2),
            connections: 100,
        });
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        let first = waiting.take(a, C1).unwrap();
        let _second = waiting.take(a, C2).unwrap();
        assert_eq!(waiting.take(a, C3).err(), Some(Refused::Key(2)));
        // Another key is not held back by this one.
        let _theirs = waiting.take(b, C3).unwrap();
        drop(first);
        assert!(waiting.take(a, C1).is_ok());
    }

    #[test]
    fn connections_count_once_however_many_of_their_requests_wait() {
        let waiting = Waiting::new(WaitingLimits {
            per_key: None,
            connections: 2,
        });
        let key = Uuid::now_v7();
        let seats: Vec<Seat> = (0..50).map(|_| waiting.take(key, C1).unwrap()).collect();
        let other = waiting.take(key, C2).unwrap();
        assert_eq!(waiting.take(key, C3).err(), Some(Refused::Connections(2)));
        // Yet another request on a connection that already waits is fine.
        assert!(waiting.take(key, C1).is_ok());
        // In-process requests hold no connection.
        assert!(waiting.take(key, None).is_ok());
        drop(other);
        let third = waiting.take(key, C3).unwrap();
        drop(seats);
        drop(third);
        let counts = waiting.counts.lock().unwrap();
        assert!(counts.keys.is_empty() && counts.connections.is_empty());
    }

    #[test]
    fn the_defaults_keep_a_tenth_for_the_pages() {
        let l = WaitingLimits::for_connections(100);
        assert_eq!((l.per_key, l.connections), (Some(50), 90));
        let l = WaitingLimits::for_connections(15_000);
        assert_eq!((l.per_key, l.connections), (Some(7_500), 13_500));
        let l = WaitingLimits::for_connections(5);
        assert_eq!((l.per_key, l.connections), (Some(2), 4));
    }

    #[test]
    fn a_refusal_names_its_setting_and_closes_an_http1_connection() {
        let resp = refusal(Refused::Key(3), Version::HTTP_11);
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(resp.headers()["connection"], "close");
        assert_eq!(resp.headers()["retry-after"], "10");
        assert!(Refused::Key(3).message().contains("SAYSO_WAITING_PER_KEY"));
        assert!(
            Refused::Connections(9)
                .message()
                .contains("SAYSO_WAITING_CONNECTIONS")
        );
        let resp = refusal(Refused::Connections(9), Version::HTTP_2);
        assert!(resp.headers().get("connection").is_none());
    }
}
