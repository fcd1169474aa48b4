//! A TCP proxy in front of a database that can, on command, refuse connections (and cut the
//! open ones), black-hole them (keep them open, pass nothing: a database that hangs), or pass
//! traffic again. The faults a network or a stuck server produce, made on demand.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Traffic passes.
    None,
    /// New connections are closed at once and open ones cut.
    Refuse,
    /// Connections are accepted and kept, and nothing passes either way.
    BlackHole,
    /// Traffic passes, but an HTTP request that begins with `POST` is held; once traffic
    /// passes again it is delivered, and the answer awaited, even if the client has gone: a
    /// create slow on its way that arrives after its sender stopped waiting.
    HoldPosts,
}

pub struct FaultyProxy {
    pub addr: SocketAddr,
    fault: watch::Sender<Fault>,
    held: Arc<AtomicUsize>,
}

impl FaultyProxy {
    /// A proxy on 127.0.0.1:0 to `upstream`.
    pub async fn start(upstream: SocketAddr) -> FaultyProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (fault, watching) = watch::channel(Fault::None);
        let held = Arc::new(AtomicUsize::new(0));
        let holding = held.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let watching = watching.clone();
                tokio::spawn(relay(client, upstream, watching, holding.clone()));
            }
        });
        FaultyProxy { addr, fault, held }
    }

    pub fn set(&self, fault: Fault) {
        self.fault.send_replace(fault);
    }

    /// How many requests are being held (`Fault::HoldPosts`).
    pub fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }
}

async fn relay(
    mut client: TcpStream,
    upstream: SocketAddr,
    mut fault: watch::Receiver<Fault>,
    held: Arc<AtomicUsize>,
) {
    let now = *fault.borrow_and_update();
    // A connection that held a request delivers it whole: its client going away does not
    // end it before the server has answered.
    let mut delivered_whole = false;
    match now {
        Fault::Refuse => return,
        // Held open, unanswered, until the fault changes; then cut, as a reset would.
        Fault::BlackHole => {
            let _ = fault.changed().await;
            return;
        }
        Fault::None | Fault::HoldPosts => {}
    }
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (mut cr, mut cw) = client.split();
    let (mut sr, mut sw) = server.split();
    let mut up = [0u8; 16 * 1024];
    let mut down = [0u8; 16 * 1024];
    let mut client_open = true;
    loop {
        tokio::select! {
            changed = fault.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = *fault.borrow_and_update();
                match now {
                    Fault::None | Fault::HoldPosts => {}
                    Fault::Refuse => return,
                    Fault::BlackHole => {
                        // Stop passing anything; keep both sockets open until it ends.
                        let _ = fault.changed().await;
                        return;
                    }
                }
            }
            n = cr.read(&mut up), if client_open => match n {
                // The request is delivered; the server's answer is still awaited.
                Ok(0) | Err(_) if delivered_whole => client_open = false,
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if *fault.borrow() == Fault::HoldPosts && up[..n].starts_with(b"POST ") {
                        held.fetch_add(1, Ordering::SeqCst);
                        let released = fault.wait_for(|f| *f != Fault::HoldPosts).await.map(|f| *f);
                        held.fetch_sub(1, Ordering::SeqCst);
                        if !matches!(released, Ok(Fault::None)) {
                            return;
                        }
                        delivered_whole = true;
                    }
                    if sw.write_all(&up[..n]).await.is_err() { return }
                }
            },
            n = sr.read(&mut down) => match n {
                Ok(0) | Err(_) => return,
                Ok(n) => if cw.write_all(&down[..n]).await.is_err() && !delivered_whole { return },
            },
        }
    }
}
