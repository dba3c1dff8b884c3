//! The pass driver's drain: epochs the device retired have their semaphores signalled, their
//! ring space reclaimed and their records made (`aqueduct_systems::reclaim` does the work).
//! Three callers: a submitter whose pass found no room, the completion thread
//! ([`CompletionWorker`](super::completion::CompletionWorker)), and another queue's completion
//! thread helping a drain held on this queue. Each holds the queue lock; the wake-ups a drain
//! owes go out through [`PassDriver::after_drain`], which takes no queue lock.

use aqueduct_systems::QueueState;
use aqueduct_systems::queue_state::DrainOutcome;
use aqueduct_systems::reclaim::DrainOrder;
use aqueduct_systems::settle;
use std::sync::atomic::Ordering;

use super::capture;
use super::pass_driver::PassDriver;

impl PassDriver {
    /// Drains epochs the device retired, in `order`; returns what the drain did.
    pub(crate) fn drain_retired(&self, state: &mut QueueState, order: DrainOrder) -> DrainOutcome {
        let outcome = self.drain_unannounced(state, order);
        self.after_drain(outcome);
        outcome
    }

    /// [`Self::drain_retired`] without [`Self::after_drain`]: the caller sends the wake-ups.
    pub(super) fn drain_unannounced(&self, state: &mut QueueState, order: DrainOrder) -> DrainOutcome {
        #[cfg(feature = "tracy")]
        let _span = tracing::trace_span!("completion_drain", queue = self.index).entered();
        let queue = &mut *state;
        let retired = (self.stages.device_retired)(&queue.handles.endpoint);
        let drained_before = queue.epochs.drained;
        if retired <= drained_before {
            return DrainOutcome::default();
        }
        let outcome = (self.stages.drain)(queue, retired, order);
        if let Some(capture) = capture::capture_of(queue) {
            capture::harvest(&self.device, self.agent, &capture, queue, drained_before, true);
        }
        settle::publish_settled(queue);
        outcome
    }

    /// Drains what retired for a queue whose drain is held on this one
    /// ([`crate::profile::DeviceQueue::drain_for_waiter`]): `None` if the queue lock is taken
    /// (this never waits for it) or the queue is going away. The caller sends the wake-ups.
    pub(super) fn drain_for_waiter(&self) -> Option<DrainOutcome> {
        if self.endpoint.shutdown.load(Ordering::Acquire) {
            return None;
        }
        let mut state = self.try_lock()?;
        Some(self.drain_unannounced(&mut state, DrainOrder::Causal))
    }

    /// What follows a drain: parked work elsewhere may wait on the semaphores it signalled, and
    /// other queues' drains may be held on the epochs it drained.
    pub(crate) fn after_drain(&self, outcome: DrainOutcome) {
        if outcome.signals + outcome.failures > 0 {
            self.device.wake_deferred(None);
        }
        self.device.wake_queues(outcome.wake);
    }
}
