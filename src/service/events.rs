//! The inbox's stream of resolutions (`GET /v1/events`): every answered, declined, cancelled
//! or expired decision, in the order of its resolution event's id, which a client passes back
//! as `Last-Event-ID` to resume where it left off.

use tokio::sync::watch;

use super::view::DecisionView;
use super::{Service, ServiceError};
use crate::domain::inbox::Inbox;
use crate::storage::Signal;
use crate::wake::Waiter;

/// How many resolutions one read of the store returns.
const BATCH: u32 = 100;

/// A reader of one inbox's resolutions after a given event id.
pub struct ResolutionFeed {
    svc: Service,
    inbox: Inbox,
    last_id: i64,
    waiter: Waiter,
    shutdown: watch::Receiver<bool>,
}

impl Service {
    /// Starts reading the inbox's resolutions whose event id is above `after` (0 for all).
    pub fn resolution_feed(&self, inbox: Inbox, after: i64) -> ResolutionFeed {
        ResolutionFeed {
            waiter: self.inner.inbox_waiters.subscribe(inbox.id),
            svc: self.clone(),
            inbox,
            last_id: after.max(0),
            shutdown: self.shutdown_signal(),
        }
    }

    /// Applies a signal from the database: wakes the event streams of the resolved
    /// decision's inbox (looked up only when some stream is open here), or all of them when
    /// signals may have been lost.
    pub(super) fn wake_event_streams(&self, signal: Signal) {
        if self.inner.inbox_waiters.is_empty() {
            return;
        }
        match signal {
            Signal::Reconnected => self.wake_all_event_streams(),
            Signal::Resolved(id) => {
                let svc = self.clone();
                tokio::spawn(async move {
                    match svc.store().decision(None, id).await {
                        Ok(Some(d)) => svc.inner.inbox_waiters.wake(d.inbox_id),
                        Ok(None) => {}
                        // Cannot tell whose it was: let every stream look.
                        Err(_) => svc.wake_all_event_streams(),
                    }
                });
            }
        }
    }

    /// Wakes every open event stream so each re-reads its inbox's resolutions.
    pub(super) fn wake_all_event_streams(&self) {
        self.inner.inbox_waiters.wake_all();
    }
}

impl ResolutionFeed {
    /// The next resolutions after the last one returned, oldest first, each with its event
    /// id; waits until there is at least one. `None` when the server shuts down.
    pub async fn next_batch(&mut self) -> Result<Option<Vec<(i64, DecisionView)>>, ServiceError> {
        loop {
            let woken = self.waiter.notify().notified();
            tokio::pin!(woken);
            // Registered before the read: a resolution committed after the read still wakes us.
            woken.as_mut().enable();
            if *self.shutdown.borrow_and_update() {
                return Ok(None);
            }
            let rows = self
                .svc
                .store()
                .resolutions_since(self.inbox.id, self.last_id, BATCH)
                .await?;
            if !rows.is_empty() {
                let mut batch = Vec::with_capacity(rows.len());
                for (event_id, decision_id) in rows {
                    if let Some(d) = self
                        .svc
                        .store()
                        .decision(Some(self.inbox.id), decision_id)
                        .await?
                    {
                        batch.push((event_id, self.svc.view(&d).await?));
                    }
                    self.last_id = event_id;
                }
                if !batch.is_empty() {
                    return Ok(Some(batch));
                }
                continue;
            }
            tokio::select! {
                _ = &mut woken => {}
                _ = self.shutdown.changed() => return Ok(None),
            }
        }
    }

    /// The id of the last resolution returned (or the starting point).
    pub fn last_id(&self) -> i64 {
        self.last_id
    }
}
