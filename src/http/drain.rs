//! Refused bodies are read to the end before the refusal goes out.
//!
//! A body over its limit is refused (413) as soon as the limit is passed. If the server
//! then closed the connection while the client was still sending, most clients would see a
//! reset instead of the 413. So the rest of a refused body is read and thrown away, up to a
//! bound, and the client gets its answer.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use tokio::sync::Mutex;

/// The most of a refused body read and discarded; past it the connection is closed.
const DRAIN_LIMIT: usize = 64 * 1024 * 1024;
/// The longest spent discarding it.
const DRAIN_TIME: Duration = Duration::from_secs(10);

type Chunks = axum::body::BodyDataStream;

pub async fn drain_refused_bodies(req: Request, next: Next) -> Response {
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
    let resp = next
        .run(Request::from_parts(parts, Body::from_stream(stream)))
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
