//! Deferral: rows whose waits cannot be resolved on the device yet (or that wait for room)
//! park behind the queue lock, in order, and the completion thread readmits them when semaphores
//! move.

use std::sync::atomic::Ordering;

use aqueduct_systems::sync::SemaphoreSync;

use super::pass_driver::PassDriver;
use super::pass_driver::PassMode;
use aqueduct_components::directory::SubmissionCounters;
use aqueduct_systems::QueueState;

impl PassDriver {
    /// Marks the pending rows parked, counting those not parked before.
    pub(super) fn park(&self, state: &mut QueueState) {
        let rows = &mut state.rows;
        let mut newly = 0;
        // Rows park in order, so the ones not yet parked are at the back: walk back to the first
        // parked one rather than over the whole list each time another row queues behind.
        for row in rows.pending().rev() {
            let slot = rows.slot(row);
            if rows.columns.parked[slot] {
                break;
            }
            // Its signals are promises already: a host or queue signal must not go below them
            // while it waits (admission records them as queued signals only once admitted).
            for signal in rows.row_signals(row) {
                self.device.semaphores.record_parked_signal(signal.semaphore, signal.value);
            }
            rows.columns.parked[slot] = true;
            newly += 1;
        }
        rows.parked = true;
        self.device.parked_queues.park(self.index);
        // The completion thread retries parked work when semaphores move; poke it in case the
        // wait is already resolvable by the time it looks.
        self.device.poke(self.endpoint.control_signal);
        SubmissionCounters::add(&self.endpoint.counters.deferred, newly);
        let parked = rows.pending_len();
        if parked > self.endpoint.counters.parked_high_water.load(Ordering::Relaxed) {
            self.endpoint.counters.parked_high_water.store(parked, Ordering::Relaxed);
        }
    }

    /// Tries to admit parked rows in order; stops at the first that still cannot go.
    pub(crate) fn readmit(&self, state: &mut QueueState) {
        // Failures here already failed the rows' semaphores, which is how their waiters hear.
        let _ = self.run_pending(state, PassMode::Readmit);
    }
}
