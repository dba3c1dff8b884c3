//! Failure, the pass driver's part: a queue's sticky error, and failing rows and
//! in-flight epochs so every waiter hears of it.

use std::sync::atomic::Ordering;

use aqueduct_components::semaphore_table::FailureRecord;
use aqueduct_systems::reclaim::DrainOrder;
use aqueduct_systems::settle;
use aqueduct_systems::sync::{HostParking, SemaphoreSync};

use super::capture::{self, capture_of};
use super::pass_driver::PassDriver;
use crate::error::EngineError;
use aqueduct_systems::QueueState;

impl PassDriver {
    pub(super) fn record_failure(&self, error: &EngineError) -> u32 {
        self.device.semaphores.record_failure(FailureRecord { status: None, message: error.to_string() })
    }

    /// A pending row that will never run: its signal semaphores fail with `failure`, and the row
    /// is released. Parked work on other queues may wait on those semaphores, so it is woken now
    /// (otherwise each hop of a chain of parked queues waits out a completion thread's 100 ms
    /// sleep).
    pub(super) fn fail_row(&self, state: &mut QueueState, row: u64, failure: u32) {
        let table = &self.device.semaphores;
        for signal in state.rows.row_signals(row) {
            table.fail(signal.semaphore, failure);
        }
        self.release_row(state, row);
        table.notify();
        self.device.wake_deferred(Some(self.index));
    }

    /// The queue's sticky error, recorded once.
    pub(super) fn queue_failure(&self, state: &mut QueueState, status: Option<u32>, message: String) -> u32 {
        if let Some(failure) = state.failure {
            return failure;
        }
        self.device.semaphores.record_failure(FailureRecord { status, message })
    }

    /// The provider reported a queue error: drain what retired cleanly, then fail the rest.
    pub(crate) fn fail_queue(&self, state: &mut QueueState) {
        if state.failure.is_some() {
            return;
        }
        // Failing: this queue must not wait for another's drain.
        self.drain_retired(state, DrainOrder::CatchUp);
        let status = self.error_sink.status.load(Ordering::Acquire);
        let described = self.error_sink.description.lock().unwrap_or_else(|poison| poison.into_inner()).clone();
        // The soft runtime, embedded or as the drop-in, says why; ROCr's callback has the status only.
        let detail = aqueduct_soft_hsa::SoftControls::of(&self.device.hsa)
            .and_then(|controls| controls.queue_error_detail(self.hsa_queue).ok().flatten());
        let detail = match (described, detail) {
            (Some(described), Some(detail)) => Some(format!("{described}: {detail}")),
            (described, detail) => described.or(detail),
        };
        let message = format!(
            "queue {} error {status:#x} ({}){}",
            self.index,
            self.device.hsa.status_string(status),
            detail.map(|detail| format!(": {detail}")).unwrap_or_default()
        );
        let failure = self.queue_failure(state, Some(status), message);
        self.fail_everything(state, failure);
    }

    /// Fails every in-flight and pending submission with `failure` and makes it sticky.
    pub(crate) fn fail_everything(&self, state: &mut QueueState, failure: u32) {
        let held_on_this = {
            let capture = capture_of(state);
            let queue = &mut *state;
            let drained_before = queue.epochs.drained;
            let outcome = (self.stages.fail_in_flight)(queue, failure);
            if let Some(capture) = capture {
                // Force-retired, not run: their timing signals were never written.
                capture::harvest(&self.device, self.agent, &capture, queue, drained_before, false);
            }
            outcome.wake
        };
        self.fail_pending(state, failure);
        self.device.wake_queues(held_on_this);
    }

    /// Fails every pending and parked submission (none of which reached the device) with
    /// `failure`, and makes it the queue's sticky error: later submissions fail with it too.
    pub(super) fn fail_pending(&self, state: &mut QueueState, failure: u32) {
        let queue = &mut *state;
        queue.failure = Some(failure);
        queue.handles.endpoint.failure.store(failure + 1, Ordering::Release);
        let rows = &mut queue.rows;
        while !rows.is_empty() {
            for signal in rows.row_signals(rows.front) {
                self.device.semaphores.fail(signal.semaphore, failure);
            }
            rows.pop_front();
        }
        rows.release_spans();
        settle::publish_settled(state);
        state.rows.parked = false;
        self.device.parked_queues.unpark(self.index);
        self.device.semaphores.notify();
        self.device.wake_deferred(None);
    }

    /// Shutdown after the HSA queue is destroyed: drain what retired, fail the rest. No packet
    /// runs any more, so every row settles, those a failure had kept unsettled included.
    pub(crate) fn abandon(&self, state: &mut QueueState) {
        // Going away: this queue must not wait for another's drain.
        self.drain_retired(state, DrainOrder::CatchUp);
        if state.epochs.submitted > state.epochs.drained || !state.rows.is_empty() {
            // The queue's sticky error if it has one (a cancellation's; a queue error's already
            // failed everything).
            let message = format!("queue {} was destroyed with work in flight", self.index);
            let failure = self.queue_failure(state, None, message);
            self.fail_everything(state, failure);
        }
        state.unsettled_from = None;
        settle::publish_settled(state);
    }
}
