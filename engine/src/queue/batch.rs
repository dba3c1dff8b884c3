//! Batched submission: operations enqueued as submission rows while the batch holds the queue,
//! then one run of the stages' schedule admits, patches and publishes them all, with one doorbell
//! store. This is how a frame's work should go: the per-operation cost is the stages over dense
//! rows, not a lock, a pass and a doorbell each.

use std::sync::MutexGuard;
use std::sync::atomic::Ordering;

use aqueduct_components::submission::RowWriter;

use super::operations::Submitter;
use super::pass_driver::PassDriver;
use super::{Queue, thread_token};
use crate::error::{EngineError, EngineResult};
use crate::semaphore::SemaphorePoint;
use aqueduct_components::directory::SubmissionCounters;
use aqueduct_systems::QueueState;

/// Operations enqueued on one queue, published together by [`Batch::flush`] (and when the batch
/// ends). Each call validates its input as the queue's own call does and returns the same typed
/// errors; a refused call enqueues nothing. Waits and signals work as on the queue; a wait on a
/// semaphore that an earlier operation of the batch signals is resolved by queue order.
///
/// The batch holds the queue while it lives: other threads' submissions to this queue wait for
/// it, and calling the queue's own operations from the thread that holds the batch returns
/// [`EngineError::InvalidArgument`] instead of waiting for itself.
pub struct Batch<'q> {
    queue: &'q PassDriver,
    state: MutexGuard<'q, QueueState>,
}

impl Queue {
    /// Runs `build` with a [`Batch`] on this queue, then publishes what it enqueued. Operations
    /// enqueued before an error `build` returns are still published; the error is returned.
    ///
    /// ```no_run
    /// # fn frame(queue: &aqueduct_engine::Queue, kernel: &aqueduct_engine::Kernel, data: &aqueduct_engine::Buffer) -> aqueduct_engine::EngineResult<()> {
    /// use aqueduct_engine::Dispatch;
    /// let bindings = [data.whole()];
    /// queue.batch(|batch| {
    ///     for step in 0..64u32 {
    ///         batch.dispatch(kernel, &Dispatch::grid([1024, 1, 1]).bindings(&bindings).constants(&[step])).submit()?;
    ///     }
    ///     Ok(())
    /// })
    /// # }
    /// ```
    // Never inlined, as `submit`: `scripts/stage-instructions.sh` counts a batch from this frame.
    #[inline(never)]
    pub fn batch<R>(&self, build: impl FnOnce(&mut Batch<'_>) -> EngineResult<R>) -> EngineResult<R> {
        let mut batch = self.begin_batch()?;
        let built = build(&mut batch);
        let flushed = batch.flush();
        drop(batch);
        let value = built?;
        flushed.map(|()| value)
    }

    /// Starts a [`Batch`] on this queue; enqueue operations on it, then [`Batch::flush`]. Dropping
    /// the batch flushes what is left, ignoring errors.
    pub fn begin_batch(&self) -> EngineResult<Batch<'_>> {
        let queue = &*self.driver;
        let token = thread_token();
        if queue.endpoint.batch_owner.load(Ordering::Relaxed) == token {
            return Err(EngineError::InvalidArgument {
                what: "queue",
                reason: "this thread already holds a batch on the queue".into(),
            });
        }
        let state = queue.lock();
        queue.endpoint.batch_owner.store(token, Ordering::Relaxed);
        Ok(Batch { queue, state })
    }
}

impl Batch<'_> {
    /// Publishes everything enqueued so far: one pass of the stages' schedule and one doorbell
    /// (more passes only when the ring runs out of room or a program spans legs). Rows whose
    /// waits cannot be resolved on the device yet park in order, as a queue's submissions do.
    /// Returns the first failure; a row that failed had its signals failed.
    pub fn flush(&mut self) -> EngineResult<()> {
        self.queue.flush(&mut self.state)
    }

    /// Operations enqueued and not yet published.
    pub fn enqueued(&self) -> usize {
        self.state.rows.pending_len() as usize
    }

    /// The old name of [`Batch::enqueued`].
    #[deprecated(note = "a row is enqueued; stage names only the pipeline's four steps: use enqueued")]
    pub fn staged(&self) -> usize {
        self.enqueued()
    }
}

impl Submitter for Batch<'_> {
    fn driver(&self) -> &PassDriver {
        self.queue
    }

    fn submit(
        &mut self,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        fill: impl FnOnce(&mut RowWriter),
    ) -> EngineResult<()> {
        self.queue.enqueue(&mut self.state, waits, signals, true, fill)?;
        SubmissionCounters::add(&self.queue.endpoint.counters.submissions, 1);
        Ok(())
    }

    fn with_state<R>(&mut self, f: impl FnOnce(&PassDriver, &mut QueueState) -> R) -> R {
        f(self.queue, &mut self.state)
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        // What is still enqueued was promised to its semaphores' waiters: publish it.
        let _ = self.queue.flush(&mut self.state);
        self.queue.endpoint.batch_owner.store(0, Ordering::Relaxed);
    }
}
