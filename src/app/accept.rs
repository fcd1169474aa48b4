//! Serving: the accept loop with a header-read timeout, a body-read timeout and a connection
//! cap, and graceful shutdown that answers parked awaits before the process leaves.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::StatusCode;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

use super::body::{IdleTimeoutBody, body_timed_out};
use super::{AppSettings, router};
use crate::service::Service;

/// Limits of the accept loop.
#[derive(Debug, Clone)]
pub struct ServeLimits {
    /// A client must send its request head within this time, or is disconnected. Also how
    /// long a kept-alive connection may sit idle between requests.
    pub header_read_timeout: Duration,
    /// A request body that stops arriving for this long (no byte while the server waits for
    /// one) is answered 408 and the connection closed.
    pub body_read_timeout: Duration,
    /// Connections held at once; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// How long shutdown waits for open requests to finish.
    pub shutdown_grace: Duration,
}

impl Default for ServeLimits {
    fn default() -> Self {
        ServeLimits {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 15_000,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// Serves `svc` on `listener` until `shutdown` completes, then tells parked awaits to return,
/// and waits (up to the grace period) for open requests to finish.
pub async fn serve(
    listener: TcpListener,
    svc: Service,
    settings: AppSettings,
    shutdown: impl Future<Output = ()> + Send,
) {
    let app: Router = router(&svc, &settings);
    serve_router(listener, app, settings.limits, shutdown, move || {
        tracing::info!("shutting down: answering parked awaits");
        svc.shut_down();
    })
    .await;
}

/// Serves `app` on `listener` until `shutdown` completes; then calls `stopping` and waits
/// (up to the grace period) for open requests to finish.
pub async fn serve_router(
    listener: TcpListener,
    app: Router,
    limits: ServeLimits,
    shutdown: impl Future<Output = ()> + Send,
    stopping: impl FnOnce(),
) {
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&slots).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: pause instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let body_timeout = limits.body_read_timeout;
        let hyper_svc = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            // Router is always ready and never fails: `oneshot` cannot return an error.
            let app = app.clone();
            let stalled = Arc::new(AtomicBool::new(false));
            let req = req.map(|body| {
                axum::body::Body::new(IdleTimeoutBody::new(
                    body,
                    body_timeout,
                    Arc::clone(&stalled),
                ))
            });
            async move {
                let resp = app
                    .oneshot(req)
                    .await
                    .unwrap_or_else(|never: Infallible| match never {});
                // Whatever the handler made of the failed read, the client hears why. A
                // refused body (413) keeps its answer: its rest was only being discarded.
                if stalled.load(Ordering::Relaxed) && resp.status() != StatusCode::PAYLOAD_TOO_LARGE
                {
                    return Ok(body_timed_out(body_timeout));
                }
                Ok::<_, Infallible>(resp)
            }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .serve_connection(TokioIo::new(stream), hyper_svc);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop(permit);
        });
    }
    drop(listener);
    stopping();
    if tokio::time::timeout(limits.shutdown_grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some connections were still open after the grace period");
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
