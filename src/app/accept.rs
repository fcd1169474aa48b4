//! Serving: the accept loop with a header-read timeout, a body-read timeout, an idle timeout
//! and the connection caps (connections.rs), and graceful shutdown that answers parked awaits
//! before the process leaves.
//!
//! Each connection speaks HTTP/1.1, or HTTP/2 when it opens with the HTTP/2 preface (h2c with
//! prior knowledge): one HTTP/2 connection carries many parked awaits as streams, so a fleet of
//! waiting agents is not bounded by the process's open files. TLS, and with it ALPN, is the
//! reverse proxy's (docs/OPERATIONS.md).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::StatusCode;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulConnection;
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

use super::body::{IdleTimeoutBody, TrackedBody, body_timed_out};
use super::connections::{Admitted, Close, Connections, InFlight, MAKE_WAY_GRACE};
use super::limits::ServeLimits;
use super::refuse::{Reserve, refuse};
use super::{AppSettings, router};
use crate::service::Service;
use crate::web::waiting::ConnectionId;

/// Connections the kernel holds for the accept loop before it takes them. tokio's default,
/// 1 024, let a burst of agents reconnecting at once (19 000 long-polls over HTTP/1.1 in the
/// fleet benchmark, on two busy cores) overflow the queue: the kernel then drops their
/// handshakes' last step and each client waits out TCP's doubling retransmissions, tens of
/// seconds for the last of them. The kernel caps it at `net.core.somaxconn` (4 096 by default).
const ACCEPT_BACKLOG: u32 = 65_535;

/// Listens on `addr` with the accept queue above.
pub fn listen(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As `TcpListener::bind` does: a restarted server can take its port back at once.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(ACCEPT_BACKLOG)
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
    let connections = Connections::new(&limits);
    let sweep = connections.sweep_idle();
    let mut reserve = Reserve::new();
    // Out of files, the loop refuses a connection every few milliseconds: say so once a
    // second, not each time.
    let mut out_of_files_said: Option<std::time::Instant> = None;
    // Each connection's number, which its requests carry (a waiting request's seat counts
    // its connection once, however many of its requests wait).
    let mut numbered = 0u64;
    tokio::pin!(shutdown);
    loop {
        // The reserve comes back before any other connection is taken: while it is out, the
        // next file freed is its.
        if !reserve.refill() {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(10)) => continue,
                _ = &mut shutdown => break,
            }
        }
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) if Reserve::is_out_of_files(&e) => {
                    if out_of_files_said.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
                        tracing::warn!(error = %e, "out of files (ulimit -n): refusing connections");
                        out_of_files_said = Some(std::time::Instant::now());
                    }
                    reserve.refuse_one(&listener).await;
                    // Give the files a moment to come back instead of spinning.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        numbered += 1;
        let admitted = match connections.admit(ConnectionId(numbered), peer.ip()) {
            Ok(admitted) => admitted,
            Err(limit) => {
                refuse(stream, limit);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(serve_connection(
            stream,
            peer,
            admitted,
            app.clone(),
            limits.clone(),
        ));
    }
    drop(listener);
    sweep.abort();
    stopping();
    connections.shut_down();
    let all_closed = async {
        while connections.open() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    if tokio::time::timeout(limits.shutdown_grace, all_closed)
        .await
        .is_err()
    {
        tracing::warn!("some connections were still open after the grace period");
    }
}

/// The first bytes of every HTTP/2 connection (RFC 9113, 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Serves one connection until it closes, in the protocol its first bytes ask for.
async fn serve_connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    admitted: Admitted,
    app: Router,
    limits: ServeLimits,
) {
    let body_timeout = limits.body_read_timeout;
    let id = admitted.id();
    let conn = std::sync::Arc::clone(admitted.conn());
    let hyper_svc = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        // Open from here to the end of its response body: the connection is busy, not idle.
        let open = InFlight::begin(&conn);
        req.extensions_mut().insert(ConnectInfo(peer));
        req.extensions_mut().insert(id);
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
            let resp = if stalled.load(Ordering::Relaxed)
                && resp.status() != StatusCode::PAYLOAD_TOO_LARGE
            {
                body_timed_out(body_timeout)
            } else {
                resp
            };
            Ok::<_, Infallible>(resp.map(|body| TrackedBody::new(body, open)))
        }
    });
    // A client that sends nothing is dropped at the header timeout, whichever protocol it
    // would have spoken, or sooner if its place is wanted.
    let speaks_h2 = tokio::select! {
        peeked = tokio::time::timeout(limits.header_read_timeout, opens_with_h2_preface(&stream)) => {
            match peeked {
                Ok(Ok(h2)) => h2,
                Ok(Err(_)) | Err(_) => return,
            }
        }
        _ = admitted.conn().told_to_close() => return,
    };
    let io = TokioIo::new(stream);
    // Each connection is pinned where it is made: bound to a name first, it was kept beside
    // the future that owns it, and every open connection held both. An HTTP/2 connection's
    // state is boxed: kept inline, it sized every connection's task, and HTTP/1.1 ones (a
    // connection an await) are the many.
    if speaks_h2 {
        admitted.conn().answered_now();
        let mut connection = Box::pin(
            hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .max_concurrent_streams(limits.h2_max_streams)
                // A dead peer's streams are let go: a ping every 20 s, answered within 20 s.
                .keep_alive_interval(Duration::from_secs(20))
                .keep_alive_timeout(Duration::from_secs(20))
                .serve_connection(io, hyper_svc),
        );
        until_closed(connection.as_mut(), &admitted).await;
    } else {
        let connection = std::pin::pin!(
            hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .serve_connection(io, hyper_svc)
        );
        until_closed(connection, &admitted).await;
    }
}

/// Runs `connection` until it ends, or until it is told to close: then it closes gracefully
/// (HTTP/1.1 after the answer in progress, HTTP/2 with GOAWAY after its open streams), and,
/// when its place went to another connection, within `MAKE_WAY_GRACE` whatever is open.
async fn until_closed<C: GracefulConnection>(
    mut connection: std::pin::Pin<&mut C>,
    admitted: &Admitted,
) {
    let why = tokio::select! {
        _ = connection.as_mut() => return,
        why = admitted.conn().told_to_close() => why,
    };
    connection.as_mut().graceful_shutdown();
    if why == Close::MakeWay {
        let _ = tokio::time::timeout(MAKE_WAY_GRACE, connection).await;
        return;
    }
    tokio::select! {
        _ = connection.as_mut() => {}
        // Told to make way while closing: not longer than that allows.
        _ = admitted.conn().told_to_make_way() => {
            let _ = tokio::time::timeout(MAKE_WAY_GRACE, connection).await;
        }
    }
}

/// Whether the connection's first bytes are the HTTP/2 preface; peeks, so the bytes stay for
/// whichever protocol serves it. Decides as soon as the bytes differ from the preface.
async fn opens_with_h2_preface(stream: &TcpStream) -> std::io::Result<bool> {
    let mut buf = [0u8; H2_PREFACE.len()];
    loop {
        let n = stream.peek(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if buf[..n] != H2_PREFACE[..n] {
            return Ok(false);
        }
        if n == H2_PREFACE.len() {
            return Ok(true);
        }
        // Part of the preface so far. Peeking leaves the socket readable, so waiting for
        // readiness would spin: look again shortly (the header timeout bounds the whole).
        tokio::time::sleep(Duration::from_millis(5)).await;
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
