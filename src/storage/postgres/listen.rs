//! Hears the resolutions of other replicas: `LISTEN sayso_resolved`, for as long as the
//! process runs, reconnecting with backoff when the connection is lost.

use std::time::Duration;

use sqlx::postgres::{PgListener, PgPool};
use uuid::Uuid;

use crate::storage::{Signal, SignalSink};

/// The channel resolutions are announced on (see the `pg_notify` calls); the payload is the
/// decision's id.
pub(super) const CHANNEL: &str = "sayso_resolved";

const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Delivers signals to `sink` until the pool is closed (the store shut down).
pub(super) async fn run(pool: PgPool, sink: SignalSink) {
    let mut backoff = FIRST_BACKOFF;
    // Whether signals may have been lost since `listen` was called: also before the first
    // subscription, since waiters may already be parked (a server starting under traffic)
    // and a resolution announced before the LISTEN took effect never reaches them.
    let mut missed = true;
    loop {
        if pool.is_closed() {
            return;
        }
        match subscribe(&pool).await {
            Ok(mut listener) => {
                if missed {
                    sink(Signal::Reconnected);
                }
                backoff = FIRST_BACKOFF;
                let error = receive(&mut listener, &sink).await;
                if pool.is_closed() {
                    return;
                }
                tracing::warn!(error = %error, "lost the PostgreSQL listener; reconnecting");
            }
            Err(error) => {
                tracing::warn!(error = %error, "cannot LISTEN on PostgreSQL; retrying");
            }
        }
        missed = true;
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

async fn subscribe(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

/// Forwards notifications until the listener fails for good; returns why.
async fn receive(listener: &mut PgListener, sink: &SignalSink) -> sqlx::Error {
    loop {
        match listener.try_recv().await {
            Ok(Some(notification)) => {
                // Anything else on the channel is not ours to act on.
                if let Ok(id) = Uuid::parse_str(notification.payload()) {
                    sink(Signal::Resolved(id));
                }
            }
            // The connection dropped and was re-established: notifications in between are lost.
            Ok(None) => sink(Signal::Reconnected),
            Err(error) => return error,
        }
    }
}
