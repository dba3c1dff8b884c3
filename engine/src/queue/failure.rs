//! Failure: the provider's queue-error callback, a queue's sticky error, and failing rows and
//! in-flight epochs so every waiter hears of it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use aqueduct_components::semaphore_table::FailureRecord;
use aqueduct_hsa::HsaApi;
use aqueduct_hsa::sys::{hsa_queue_t, hsa_signal_t, hsa_status_t};
use aqueduct_systems::reclaim::DrainOrder;
use aqueduct_systems::sync::{HostParking, SemaphoreSync};

use super::capture::{self, capture_of};
use super::pass_driver::PassDriver;
use crate::error::EngineError;
use aqueduct_systems::QueueState;

/// Where the provider's queue-error callback and the memory-fault handler report. Kept alive
/// until the HSA queue is destroyed, because the callback holds a raw pointer to it.
pub(crate) struct ErrorSink {
    pub status: AtomicU32,
    pub control: u64,
    pub api: &'static HsaApi,
    /// What the provider said beyond the status (a memory fault's address), if anything.
    pub description: std::sync::Mutex<Option<String>>,
}

/// The provider's asynchronous queue-error callback.
pub(crate) unsafe extern "C" fn queue_error_callback(
    status: hsa_status_t,
    _queue: *mut hsa_queue_t,
    data: *mut core::ffi::c_void,
) {
    // SAFETY: `data` is the ErrorSink registered with this queue, alive until hsa_queue_destroy
    // returns, and the provider calls back only before that.
    let sink = unsafe { &*data.cast::<ErrorSink>() };
    sink.fail(status, None);
}

impl ErrorSink {
    /// Records the queue's first error and wakes its completion thread.
    pub(crate) fn fail(&self, code: hsa_status_t, description: Option<String>) {
        if self.status.compare_exchange(0, code.max(1), Ordering::AcqRel, Ordering::Acquire).is_ok() {
            *self.description.lock().unwrap_or_else(|poison| poison.into_inner()) = description;
            // SAFETY: the control signal lives as long as the device.
            unsafe { (self.api.hsa_signal_add_scacq_screl)(hsa_signal_t { handle: self.control }, 1) };
        }
    }
}

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
                capture::harvest(self, &capture, queue, drained_before, false);
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
        self.publish_settled(state);
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
        self.publish_settled(state);
    }
}

pub(super) fn unknown_failure() -> Arc<FailureRecord> {
    Arc::new(FailureRecord { status: None, message: "unknown failure".into() })
}
