//! Retention: resolved decisions older than `SAYSO_RETENTION_DAYS` are deleted with their
//! audit trails, in small batches with pauses between them, so requests never wait behind it.
//! Every replica runs it; each batch is one short statement, safe to share.

use std::time::Duration;

use super::{Service, now};

/// Decisions deleted per statement.
const BATCH: u32 = 200;
/// The pause between two full batches: the writer is free for requests in between.
const PAUSE: Duration = Duration::from_millis(100);
/// How often to look when the last round found less than a batch.
const EVERY: Duration = Duration::from_secs(60);

pub(super) async fn prune(svc: Service, keep: time::Duration) {
    let mut wait = Duration::ZERO;
    loop {
        tokio::time::sleep(wait).await;
        wait = match svc
            .store()
            .delete_resolved_before(now() - keep, BATCH)
            .await
        {
            Ok(n) if n == u64::from(BATCH) => PAUSE,
            Ok(n) => {
                if n > 0 {
                    tracing::info!(deleted = n, "retention: old resolved decisions deleted");
                }
                EVERY
            }
            Err(e) => {
                tracing::warn!(error = %e, "retention: deleting old decisions failed; retrying");
                EVERY
            }
        };
    }
}
