//! The waiter registry: parked awaits keyed by decision id, woken when that decision resolves
//! (locally, or on another replica through the store's signals).
//!
//! Uses `storage` (its signals) and nothing above it (docs/ARCHITECTURE.md, checked by
//! tests/layers.rs).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;
use uuid::Uuid;

use crate::storage::Signal;

/// Registry of parked awaits. One `Notify` per decision, shared by all its waiters and
/// dropped with the last of them, so a wake costs one map lookup and no database work.
#[derive(Default)]
pub struct Waiters {
    by_id: Mutex<HashMap<Uuid, Weak<Notify>>>,
}

/// A registration for one decision; keep it alive for as long as the await runs.
pub struct Waiter {
    id: Uuid,
    notify: Arc<Notify>,
    registry: Arc<Waiters>,
}

impl Waiters {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Registers interest in `id`. Call `Waiter::notify().notified()` and `enable()` it
    /// *before* reading the decision's state, so no wake between the read and the wait is lost.
    pub fn subscribe(self: &Arc<Self>, id: Uuid) -> Waiter {
        let mut map = self.by_id.lock().unwrap_or_else(|e| e.into_inner());
        let notify = match map.get(&id).and_then(Weak::upgrade) {
            Some(n) => n,
            None => {
                let n = Arc::new(Notify::new());
                map.insert(id, Arc::downgrade(&n));
                n
            }
        };
        Waiter {
            id,
            notify,
            registry: Arc::clone(self),
        }
    }

    /// Wakes every await parked on `id`.
    pub fn wake(&self, id: Uuid) {
        let notify = {
            let map = self.by_id.lock().unwrap_or_else(|e| e.into_inner());
            map.get(&id).and_then(Weak::upgrade)
        };
        if let Some(n) = notify {
            n.notify_waiters();
        }
    }

    /// Wakes every parked await so each re-reads its decision (after signals may have been lost).
    pub fn wake_all(&self) {
        let all: Vec<Arc<Notify>> = {
            let map = self.by_id.lock().unwrap_or_else(|e| e.into_inner());
            map.values().filter_map(Weak::upgrade).collect()
        };
        for n in all {
            n.notify_waiters();
        }
    }

    /// How many decisions have at least one parked await.
    pub fn len(&self) -> usize {
        self.by_id.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Applies a signal heard from another replica.
    pub fn on_signal(&self, signal: Signal) {
        match signal {
            Signal::Resolved(id) => self.wake(id),
            Signal::Reconnected => self.wake_all(),
        }
    }
}

impl Waiter {
    pub fn notify(&self) -> &Notify {
        &self.notify
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let mut map = self
            .registry
            .by_id
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // Our own Arc is still alive here: a count of 1 means we are the last waiter.
        if Arc::strong_count(&self.notify) == 1 {
            map.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn wake_reaches_a_waiter_enabled_before_it() {
        let waiters = Waiters::new();
        let id = Uuid::now_v7();
        let w = waiters.subscribe(id);
        let notified = w.notify().notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        waiters.wake(id);
        tokio::time::timeout(Duration::from_secs(1), notified)
            .await
            .expect("woken");
    }

    #[tokio::test]
    async fn waking_one_decision_leaves_others_parked() {
        let waiters = Waiters::new();
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        let wb = waiters.subscribe(b);
        let notified = wb.notify().notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        waiters.wake(a);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), notified)
                .await
                .is_err()
        );
    }

    #[test]
    fn the_last_waiter_to_leave_removes_the_entry() {
        let waiters = Waiters::new();
        let id = Uuid::now_v7();
        let w1 = waiters.subscribe(id);
        let w2 = waiters.subscribe(id);
        assert_eq!(waiters.len(), 1);
        drop(w1);
        assert_eq!(waiters.len(), 1);
        drop(w2);
        assert!(waiters.is_empty());
    }

    #[tokio::test]
    async fn wake_all_reaches_every_decision() {
        let waiters = Waiters::new();
        let ws: Vec<Waiter> = (0..3).map(|_| waiters.subscribe(Uuid::now_v7())).collect();
        let mut futs: Vec<_> = ws.iter().map(|w| Box::pin(w.notify().notified())).collect();
        for f in &mut futs {
            f.as_mut().enable();
        }
        waiters.on_signal(Signal::Reconnected);
        for f in futs {
            tokio::time::timeout(Duration::from_secs(1), f)
                .await
                .expect("woken");
        }
    }
}
