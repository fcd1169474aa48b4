//! Bodies: a request body that may stall (the server's answer when it does), and a response
//! body that keeps its request open on its connection until it is sent.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};

use super::connections::InFlight;
use crate::web::error::ApiError;

/// The answer to a request whose body stopped arriving; the connection is closed after it.
pub(super) fn body_timed_out(timeout: Duration) -> axum::response::Response {
    let mut resp = ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        "request_timeout",
        format!(
            "the request body stopped arriving: no data for {} s",
            timeout.as_secs_f64()
        ),
    )
    .into_response();
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// A request body that fails when no data arrives for `timeout` while it is being read.
/// The clock runs only while the body is polled and nothing is ready, so a handler that reads
/// the body late (after authentication, say) does not count against the client.
pub(super) struct IdleTimeoutBody {
    inner: Incoming,
    timeout: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    stalled: Arc<AtomicBool>,
}

impl IdleTimeoutBody {
    pub(super) fn new(inner: Incoming, timeout: Duration, stalled: Arc<AtomicBool>) -> Self {
        IdleTimeoutBody {
            inner,
            timeout,
            sleep: None,
            stalled,
        }
    }
}

impl Body for IdleTimeoutBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.sleep = None;
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                let timeout = this.timeout;
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.stalled.store(true, Ordering::Relaxed);
                Poll::Ready(Some(Err("the request body stopped arriving".into())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that holds its request open on its connection (`InFlight`) until it is
/// sent or dropped: an event stream or a long answer keeps its connection busy, not idle.
pub(super) struct TrackedBody {
    inner: axum::body::Body,
    _open: InFlight,
}

impl TrackedBody {
    pub(super) fn new(inner: axum::body::Body, open: InFlight) -> Self {
        TrackedBody { inner, _open: open }
    }
}

impl Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
