//! The thread that a store's batching tasks (its creates.rs and resolves.rs, PostgreSQL's
//! key_lookups.rs and decision_reads.rs) run on: a runtime of their own, so a group's or a
//! batch's answer from the database is taken up as soon as it arrives, not after the requests'
//! own work queued on the main runtime; under load that wait was longer than the database's.
//! On SQLite it also lets the writer's next group start while the requests of the last one
//! are still being answered.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::runtime::{Builder, Runtime};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::storage::StoreError;

/// The tasks gathered before the thread starts.
pub(super) struct BatchingThread {
    name: &'static str,
    runtime: Runtime,
    tasks: Vec<JoinHandle<()>>,
}

impl BatchingThread {
    /// A thread to be named `name`.
    pub(super) fn new(name: &'static str) -> Result<Self, StoreError> {
        let runtime = Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::Other(format!("no runtime for the batching tasks: {e}")))?;
        Ok(BatchingThread {
            name,
            runtime,
            tasks: Vec::new(),
        })
    }

    /// Adds a task; it runs once `start` is called, until it returns.
    pub(super) fn spawn(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        self.tasks.push(self.runtime.spawn(task));
    }

    /// Adds `readers` tasks that take turns at one queue: each takes what waits there (up to
    /// `max_batch`) and hands it to `read`, which answers every item and gives the batch back
    /// for the next one, so that while one batch is at the database the next gathers. Returns
    /// the queue; the tasks end when it is dropped.
    pub(super) fn spawn_batch_readers<T, F, Fut>(
        &mut self,
        readers: usize,
        max_batch: usize,
        read: F,
    ) -> mpsc::UnboundedSender<T>
    where
        T: Send + 'static,
        F: Fn(Vec<T>) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Vec<T>> + Send,
    {
        let (queue, arrivals) = mpsc::unbounded_channel::<T>();
        let arrivals = Arc::new(tokio::sync::Mutex::new(arrivals));
        for _ in 0..readers {
            let (read, arrivals) = (read.clone(), Arc::clone(&arrivals));
            self.spawn(async move {
                let mut batch = Vec::with_capacity(max_batch);
                loop {
                    {
                        let mut arrivals = arrivals.lock().await;
                        if arrivals.recv_many(&mut batch, max_batch).await == 0 {
                            return;
                        }
                    }
                    batch = read(batch).await;
                    batch.clear();
                }
            });
        }
        queue
    }

    /// Runs the tasks on a thread of their own, which ends when the last one returns (when
    /// the store, and so their queues, are dropped).
    pub(super) fn start(self) -> Result<(), StoreError> {
        let BatchingThread {
            name,
            runtime,
            tasks,
        } = self;
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                runtime.block_on(async move {
                    for task in tasks {
                        let _ = task.await;
                    }
                })
            })
            .map(drop)
            .map_err(|e| StoreError::Other(format!("no thread for the batching tasks: {e}")))
    }
}

/// How many requests of one kind (creates, resolutions, key lookups) are in flight, so that
/// one alone can skip the queue and run at once on its caller's runtime.
#[derive(Default)]
pub(super) struct InFlight(AtomicUsize);

/// A request counted in flight until dropped, however it ended.
pub(super) struct Counted<'a>(&'a AtomicUsize);

impl InFlight {
    /// Counts a request in; `true` when no other was in flight.
    pub(super) fn enter(&self) -> (bool, Counted<'_>) {
        let alone = self.0.fetch_add(1, Ordering::AcqRel) == 0;
        (alone, Counted(&self.0))
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
