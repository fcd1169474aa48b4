//! Long-poll: hold an await until its decision resolves, its time is up, or the wait ends.

use std::time::Duration;

use uuid::Uuid;

use super::{Service, ServiceError, now};
use crate::domain::inbox::Inbox;
use crate::domain::{Decision, Status};

impl Service {
    /// Returns the decision once it is not pending, or still pending after `timeout`
    /// (clamped to the server's maximum). Costs no database work while parked: it re-reads
    /// only when woken by a resolution (local or from another replica) or at `expires_at`.
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
        loop {
            let woken = waiter.notify().notified();
            tokio::pin!(woken);
            // Registered before the read: a resolution landing between the read and the
            // wait still wakes us.
            woken.as_mut().enable();
            let d = self.get_decision(inbox, id).await?;
            if d.status != Status::Pending || *shutdown.borrow_and_update() {
                return Ok(d);
            }
            let until_expiry = (d.expires_at - now()).try_into().unwrap_or(Duration::ZERO);
            tokio::select! {
                _ = &mut woken => {}
                // At expires_at the next read expires it.
                _ = tokio::time::sleep(until_expiry) => {}
                _ = tokio::time::sleep_until(deadline) => return Ok(d),
                _ = shutdown.changed() => return Ok(d),
            }
        }
    }
}
