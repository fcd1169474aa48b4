//! Long-poll: hold an await until its decision resolves, its time is up, or the wait ends.

use std::time::Duration;

use uuid::Uuid;

use super::{Service, ServiceError, now};
use crate::domain::inbox::Inbox;
use crate::domain::{Decision, Status};

impl Service {
    /// Returns the decision once it is not pending, or still pending after `timeout`
    /// (clamped to the server's maximum). Costs no database work while parked: it re-reads
    /// only when woken by a resolution (local or from another replica), at `expires_at` or
    /// at the end of the wait, and returns that last read.
    #[tracing::instrument(name = "await", skip_all, fields(inbox = %inbox.name, decision = %id))]
    pub async fn await_decision(
        &self,
        inbox: &Inbox,
        id: Uuid,
        timeout: Duration,
    ) -> Result<Decision, ServiceError> {
        let deadline = tokio::time::Instant::now() + timeout.min(self.settings().max_await);
        let waiter = self.waiters().subscribe(id);
        let _parked = self.metrics().await_parked();
        let mut shutdown = self.shutdown_signal();
        // Set when the wait is over (its deadline, or shutdown): the next read is returned
        // as it stands.
        let mut last_read = false;
        loop {
            let woken = waiter.notify().notified();
            tokio::pin!(woken);
            // Registered before the read: a resolution landing between the read and the
            // wait still wakes us.
            woken.as_mut().enable();
            // Scoped, so neither the read (boxed: a database query) nor the decision (dropped
            // at the block's end) takes room in the future while it waits: a hundred
            // thousand parked awaits take a few kilobytes each (docs/PERFORMANCE.md).
            let until_expiry = {
                let d = Box::pin(self.get_decision(inbox, id)).await?;
                if d.status != Status::Pending || last_read || *shutdown.borrow_and_update() {
                    return Ok(d);
                }
                // At expires_at the next read expires it.
                (d.expires_at - now()).try_into().unwrap_or(Duration::ZERO)
            };
            let expiry = tokio::time::Instant::now() + until_expiry;
            tokio::select! {
                _ = &mut woken => {}
                _ = tokio::time::sleep_until(expiry.min(deadline)) => last_read = deadline <= expiry,
                _ = shutdown.changed() => last_read = true,
            }
        }
    }
}
