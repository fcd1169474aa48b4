//! Refusals at the door. A connection the server cannot take is told why, in one plain
//! HTTP/1.1 503 that names the limit and how to raise it, instead of waiting unanswered in
//! the listen backlog: an agent that opens yet another await learns what stopped it.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Which limit stopped a connection.
#[derive(Debug, Clone, Copy)]
pub(super) enum Limit {
    /// `SAYSO_MAX_CONNECTIONS` connections are open, none of them idle.
    Connections(usize),
    /// The client's address holds `SAYSO_CONNECTIONS_PER_ADDRESS` connections, none idle.
    PerAddress(usize),
    /// The process may open no more files (`ulimit -n`).
    OpenFiles,
}

impl Limit {
    fn message(self) -> String {
        match self {
            Limit::Connections(n) => format!(
                "this server holds its most connections at once ({n}, SAYSO_MAX_CONNECTIONS), \
                 each with a request open; try again shortly, or wait over HTTP/2, where many \
                 requests share one connection (docs/OPERATIONS.md)"
            ),
            Limit::PerAddress(n) => format!(
                "this client address holds its most connections at once ({n}, \
                 SAYSO_CONNECTIONS_PER_ADDRESS), each with a request open; try again shortly, \
                 or wait over HTTP/2, where many requests share one connection \
                 (docs/OPERATIONS.md)"
            ),
            Limit::OpenFiles => "this server may open no more files (its open-files limit, \
                 ulimit -n); try again shortly, or wait over HTTP/2, where many requests share \
                 one connection (docs/OPERATIONS.md)"
                .to_string(),
        }
    }
}

/// Answers `stream` with a 503 naming `limit`, in the error shape of the API, and closes it
/// once the client has had it (within half a second).
pub(super) fn refuse(mut stream: TcpStream, limit: Limit) {
    let body = serde_json::json!({
        "error": {"code": "unavailable", "message": limit.message()}
    })
    .to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    tokio::spawn(async move {
        // The client's request head first (an answer before it was asked is a protocol error
        // to the client, which then never reads it), but not for long: a refusal holds a file.
        let mut head = Vec::with_capacity(1024);
        let mut chunk = [0u8; 1024];
        let _ = tokio::time::timeout(Duration::from_millis(250), async {
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&chunk[..n]),
                }
            }
        })
        .await;
        let _ = tokio::time::timeout(Duration::from_millis(250), async {
            stream.write_all(response.as_bytes()).await?;
            stream.shutdown().await?;
            // Whatever else the client has sent is read before closing: closing with bytes
            // unread would reset the connection and could lose the answer. Not waiting for
            // more: the client may keep its end open.
            while matches!(stream.try_read(&mut chunk), Ok(n) if n > 0) {}
            Ok::<_, std::io::Error>(())
        })
        .await;
    });
}

/// A file kept open so that, when the process has no file left, one can be let go to accept
/// the waiting connection and tell it why.
pub(super) struct Reserve(Option<std::fs::File>);

impl Reserve {
    pub(super) fn new() -> Reserve {
        Reserve(std::fs::File::open("/dev/null").ok())
    }

    /// Whether `error` (from `accept`) means the process is out of files.
    pub(super) fn is_out_of_files(error: &std::io::Error) -> bool {
        // EMFILE (this process) and ENFILE (the whole system).
        matches!(error.raw_os_error(), Some(24) | Some(23))
    }

    /// With the reserve let go, accepts one waiting connection and refuses it; `refill`
    /// takes the reserve back once a file is free again.
    pub(super) async fn refuse_one(&mut self, listener: &TcpListener) {
        if self.0.take().is_some() {
            let accepted = tokio::time::timeout(Duration::from_millis(10), listener.accept()).await;
            if let Ok(Ok((stream, _))) = accepted {
                refuse(stream, Limit::OpenFiles);
            }
        }
    }

    /// Takes the reserve back if it was let go and a file is free; whether it is held.
    pub(super) fn refill(&mut self) -> bool {
        if self.0.is_none() {
            self.0 = std::fs::File::open("/dev/null").ok();
        }
        self.0.is_some()
    }
}
