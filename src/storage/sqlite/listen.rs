//! Signals from other processes: none. A SQLite database is used by one process, whose own
//! resolutions wake its waiters directly, so there is nothing to listen for.

use tokio::task::JoinHandle;

use crate::storage::SignalSink;

pub(super) fn listen(_sink: SignalSink) -> Option<JoinHandle<()>> {
    None
}
