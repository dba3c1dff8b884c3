//! The queue's destruction, by the pass driver: after the last handle drops (once its work has
//! drained or failed), at a cancel, or at the engine's drop. Whoever destroys the queue first
//! sets the endpoint's `shutdown` flag; only that caller tears it down. A teardown destroys the
//! HSA queue before anything else, so no packet touches memory afterwards, then fails what was
//! left in flight and frees the kernarg ring and the queue's World entity. Every method here
//! takes the queue lock itself, and its caller holds none, except [`PassDriver::idle`], whose
//! caller holds it.

use std::sync::atomic::Ordering;

use aqueduct_systems::QueueState;
use aqueduct_systems::reclaim::DrainOrder;

use super::pass_driver::PassDriver;

impl PassDriver {
    /// Fails the pending and parked work with a sticky `queue N was cancelled`, and marks the
    /// queue cancelled: its destruction fails what is on the device rather than waiting.
    pub(super) fn cancel_pending(&self) {
        {
            let mut state = self.lock();
            let failure = self.queue_failure(&mut state, None, format!("queue {} was cancelled", self.index));
            self.fail_pending(&mut state, failure);
        }
        self.endpoint.cancelled.store(true, Ordering::Release);
    }

    /// The last user handle dropped. The queue is destroyed once its work has drained or failed:
    /// now, if it already has (or it was cancelled); otherwise by its completion thread, which
    /// keeps draining, when it has ([`Self::orphan_settled`]).
    pub(super) fn last_handle_dropped(&self) {
        // The replay drops its queue at the same place in the stream.
        let queue = self.replay_id();
        if let Some(replay) = self.device.replay_capture().filter(|_| queue != 0) {
            replay.push(aqueduct_profile::replay::ReplayRecord::QueueDropped { queue });
        }
        if self.endpoint.cancelled.load(Ordering::Acquire) || self.orphan_settled() {
            self.destroy();
        } else {
            // The completion thread looks at the handle count on each wake-up.
            self.device.poke(self.endpoint.control_signal);
        }
    }

    /// Whether a queue without handles has nothing left to do: it drains what retired, then
    /// checks that nothing is pending, parked or in flight. No handle is left, so nothing new
    /// can be enqueued after a `true`.
    pub(super) fn orphan_settled(&self) -> bool {
        let mut state = self.lock();
        self.drain_retired(&mut state, DrainOrder::CatchUp);
        let idle = self.idle(&state);
        drop(state);
        self.device.release_settled();
        idle
    }

    /// A queue without handles, at the engine's drop: waits until its completion thread has
    /// torn it down or `deadline` passes, then cancels what is left (see `Engine`'s drop).
    pub(super) fn finish_orphaned(&self, deadline: std::time::Instant) {
        let gone = || {
            let thread = self.completion_thread();
            thread.as_ref().is_none_or(|thread| thread.is_finished())
        };
        if self.endpoint.handles.load(Ordering::Acquire) != 0 {
            return;
        }
        while !gone() {
            if std::time::Instant::now() >= deadline {
                tracing::warn!(
                    queue = self.index,
                    "the engine was dropped before the queue's work finished: cancelled"
                );
                self.cancel_pending();
                self.destroy();
                return;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// The completion thread's join handle (in the device's table, by queue index).
    fn completion_thread(&self) -> std::sync::MutexGuard<'_, Option<std::thread::JoinHandle<()>>> {
        self.device.queues.completion_thread(self.index)
    }

    /// Nothing pending, parked or in flight (the caller holds the queue lock).
    pub(super) fn idle(&self, state: &QueueState) -> bool {
        let rows = &state.rows;
        let (submitted, drained) = self.epochs();
        rows.is_empty() && !rows.parked && submitted == drained
    }

    /// Destroys the queue from any thread but its completion thread: stops that thread, then
    /// tears the queue down, unless the completion thread already is (then this waits for it).
    fn destroy(&self) {
        let first = !self.endpoint.shutdown.swap(true, Ordering::AcqRel);
        self.device.poke(self.endpoint.control_signal);
        if let Some(thread) = self.completion_thread().take() {
            let _ = thread.join();
        }
        if first {
            self.tear_down();
        }
    }

    /// The completion thread of a queue without handles found it settled: it tears the queue
    /// down itself and then ends (its join handle is left to the queue's drop). Returns whether
    /// it did; a concurrent [`Self::destroy`] that came first does it instead.
    pub(super) fn tear_down_orphan(&self) -> bool {
        if self.endpoint.shutdown.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.tear_down();
        true
    }

    /// Destroys the HSA queue, fails what was left in flight, then frees the kernarg ring and
    /// the device-World entity. The completion thread is stopped, or is the caller.
    fn tear_down(&self) {
        // Destroy the HSA queue first: afterwards no packet touches memory, so the work still in
        // flight can be failed and its rows settled.
        // SAFETY: the completion thread is stopped or is this thread, and no Queue handle is left
        // to submit.
        if let Err(error) = unsafe { self.device.hsa.queue_destroy(self.hsa_queue) } {
            tracing::warn!(%error, "hsa_queue_destroy failed");
        }
        let device_target = self.lock().device_target.take();
        if let Some(target) = &device_target {
            self.stop_device_target(target);
        }
        {
            let mut state = self.lock();
            self.abandon(&mut state);
        }
        if let Some(target) = device_target {
            self.free_device_target(target);
        }
        // Its host calls' *ready* timeline failed with the rows: the host-call thread ends.
        self.services.stop_host_calls();
        // SAFETY: the queue is destroyed, so nothing reads the kernarg ring any more.
        let _ = unsafe { self.device.hsa.free(self.kernarg_memory as *mut u8) };
        self.device.world().despawn(self.entity);
        self.device.release_settled();
    }
}
