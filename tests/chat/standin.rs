//! What the chats' stand-ins share (Slack's Web API, Telegram's Bot API; Matrix runs a real
//! Synapse): a server on loopback, the state its handlers record and the test reads, and the
//! wait for what the test expects the stand-in to have seen.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;

/// A loopback port of the stand-in's own, bound before the stand-in that names it is made.
pub struct Loopback {
    listener: TcpListener,
    pub addr: SocketAddr,
}

pub async fn loopback() -> Loopback {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    Loopback { listener, addr }
}

impl Loopback {
    /// Serves `app` here for the rest of the test.
    pub fn serve(self, app: Router) {
        tokio::spawn(async move { axum::serve(self.listener, app).await.unwrap() });
    }
}

/// A stand-in's state, shared by its handlers and the test.
pub struct Shared<T>(Arc<Mutex<T>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> Shared<T> {
    pub fn new(state: T) -> Shared<T> {
        Shared(Arc::new(Mutex::new(state)))
    }

    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap()
    }
}

/// Waits (at most 20 s) until `check` finds what it looks for; else panics naming `what` and
/// what the stand-in saw instead (`seen`).
pub async fn wait_for<T>(
    what: &str,
    mut check: impl FnMut() -> Option<T>,
    seen: impl Fn() -> String,
) -> T {
    for _ in 0..400 {
        if let Some(found) = check() {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the stand-in never saw {what}; it saw: {}", seen());
}
