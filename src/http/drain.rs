//! Refused bodies are read to the end before the refusal goes out.
//!
//! A body over its limit is refused (413) as soon as the limit is passed. If the server
//! then closed the connection while the client was still sending, most clients would see a
//! reset instead of the 413. So the rest of a refused body is read and thrown away, up to a
//! bound, and the client gets its answer.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::Response;
use futures::StreamExt;
use futures::future::{BoxFuture, Either};
use tokio::sync::Mutex;
use tower::{Layer, Service, ServiceExt};

/// The most of a refused body read and discarded; past it the connection is closed.
const DRAIN_LIMIT: usize = 64 * 1024 * 1024;
/// The longest spent discarding it.
const DRAIN_TIME: Duration = Duration::from_secs(10);

type Chunks = axum::body::BodyDataStream;

/// The layer. A request without a body (every GET, every waiting request) goes straight
/// through, holding nothing more while it runs.
#[derive(Clone, Copy, Default)]
pub struct DrainRefusedBodies;

impl<S> Layer<S> for DrainRefusedBodies {
    type Service = Drain<S>;
    fn layer(&self, inner: S) -> Drain<S> {
        Drain { inner }
    }
}

#[derive(Clone)]
pub struct Drain<S> {
    inner: S,
}

impl<S> Service<Request> for Drain<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        if req.body().is_end_stream() {
            return Either::Left(self.inner.call(req));
        }
        // The service that was made ready answers this request; a clone waits for the next.
        let inner = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, inner);
        Either::Right(Box::pin(async move {
            Ok(drain_refused_bodies(req, ready).await)
        }))
    }
}

async fn drain_refused_bodies<S>(req: Request, inner: S) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let (parts, body) = req.into_parts();
    let shared: Arc<Mutex<Option<Chunks>>> = Arc::new(Mutex::new(Some(body.into_data_stream())));
    let reader = Arc::clone(&shared);
    let stream = futures::stream::unfold(reader, |reader| async move {
        let next = {
            let mut guard = reader.lock().await;
            guard.as_mut()?.next().await
        };
        next.map(|chunk| (chunk, reader))
    });
    let Ok(resp) = inner
        .oneshot(Request::from_parts(parts, Body::from_stream(stream)))
        .await;
    if resp.status() == StatusCode::PAYLOAD_TOO_LARGE
        && let Some(mut rest) = shared.lock().await.take()
    {
        let discard = async {
            let mut seen = 0usize;
            while let Some(Ok(chunk)) = rest.next().await {
                seen += chunk.len();
                if seen > DRAIN_LIMIT {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(DRAIN_TIME, discard).await;
    }
    resp
}
