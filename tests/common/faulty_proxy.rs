//! A TCP proxy in front of a database that can, on command, refuse connections (and cut the
//! open ones), black-hole them (keep them open, pass nothing: a database that hangs), or pass
//! traffic again. The faults a network or a stuck server produce, made on demand.

use std::net::SocketAddr;

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
}

pub struct FaultyProxy {
    pub addr: SocketAddr,
    fault: watch::Sender<Fault>,
}

impl FaultyProxy {
    /// A proxy on 127.0.0.1:0 to `upstream`.
    pub async fn start(upstream: SocketAddr) -> FaultyProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (fault, watching) = watch::channel(Fault::None);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let watching = watching.clone();
                tokio::spawn(relay(client, upstream, watching));
            }
        });
        FaultyProxy { addr, fault }
    }

    pub fn set(&self, fault: Fault) {
        self.fault.send_replace(fault);
    }
}

async fn relay(mut client: TcpStream, upstream: SocketAddr, mut fault: watch::Receiver<Fault>) {
    let now = *fault.borrow_and_update();
    match now {
        Fault::Refuse => return,
        // Held open, unanswered, until the fault changes; then cut, as a reset would.
        Fault::BlackHole => {
            let _ = fault.changed().await;
            return;
        }
        Fault::None => {}
    }
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (mut cr, mut cw) = client.split();
    let (mut sr, mut sw) = server.split();
    let mut up = [0u8; 16 * 1024];
    let mut down = [0u8; 16 * 1024];
    loop {
        tokio::select! {
            changed = fault.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = *fault.borrow_and_update();
                match now {
                    Fault::None => {}
                    Fault::Refuse => return,
                    Fault::BlackHole => {
                        // Stop passing anything; keep both sockets open until it ends.
                        let _ = fault.changed().await;
                        return;
                    }
                }
            }
            n = cr.read(&mut up) => match n {
                Ok(0) | Err(_) => return,
                Ok(n) => if sw.write_all(&up[..n]).await.is_err() { return },
            },
            n = sr.read(&mut down) => match n {
                Ok(0) | Err(_) => return,
                Ok(n) => if cw.write_all(&down[..n]).await.is_err() { return },
            },
        }
    }
}
