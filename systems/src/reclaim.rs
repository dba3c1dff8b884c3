//! Epoch reclaim: what the submitting thread (a batch at a time) and the completion thread (an
//! idle queue, or one nobody drained) do with retired epochs, and what happens to everything in
//! flight when the queue fails.

use core::sync::atomic::Ordering;

use aqueduct_components::semaphore_table::SemaphoreTable;
use aqueduct_components::submission::{DeviceWait, SignalOp};

use crate::strategy::CrossQueueStrategy;
use crate::sync::{HostParking, SemaphoreSync};
use crate::{EpochRows, QueueState};

/// Retired epochs the submitting thread lets accumulate before it drains them itself, holding
/// the queue lock it already has: one signal load per submission while a batch is in flight,
/// and one drain per batch.
pub const SUBMITTER_DRAIN_BATCH: u64 = 16;

/// What one drain did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainOutcome {
    pub epochs: u64,
    /// Semaphore values published (after coalescing).
    pub signals: u64,
    /// Semaphores failed (dependency failures carried through).
    pub failures: u64,
}

/// Folds consecutive signals of one semaphore into one store.
struct Coalescer<'a> {
    table: &'a SemaphoreTable,
    pending: Option<SignalOp>,
    outcome: DrainOutcome,
}

impl Coalescer<'_> {
    fn push(&mut self, signal: SignalOp) {
        match &mut self.pending {
            Some(pending) if pending.semaphore == signal.semaphore => pending.value = pending.value.max(signal.value),
            pending => {
                if let Some(previous) = pending.replace(signal) {
                    self.outcome.signals += u64::from(self.table.signal(previous.semaphore, previous.value));
                }
            }
        }
    }

    /// Raises each semaphore this epoch waited on from the device to the value it waited for:
    /// the wait passed, so the producer's epoch has run, but its queue may not have drained it
    /// yet. Done before this epoch's own signals, so a host that sees them sees their causes.
    fn catch_up(&mut self, waits: &[DeviceWait]) {
        for wait in waits {
            self.outcome.signals += u64::from(self.table.signal(wait.semaphore, wait.value));
        }
    }

    fn fail(&mut self, signal: SignalOp, failure: u32) {
        self.flush();
        self.outcome.failures += u64::from(self.table.fail(signal.semaphore, failure));
    }

    fn flush(&mut self) {
        if let Some(previous) = self.pending.take() {
            self.outcome.signals += u64::from(self.table.signal(previous.semaphore, previous.value));
        }
    }
}

/// The failure, if any, of a semaphore this epoch waited on from the device.
fn failed_dependency(table: &SemaphoreTable, waits: &[DeviceWait]) -> Option<u32> {
    waits.iter().find_map(|wait| table.failure(wait.semaphore))
}

/// Drains every epoch up to `retired`: signals (or, if a device-side dependency failed, fails)
/// their semaphores and frees their kernarg space. Wakes host waiters.
pub fn drain<S: CrossQueueStrategy>(queue: &mut QueueState, rows: &mut EpochRows, retired: u64) -> DrainOutcome {
    crate::stage_span!("epoch_reclaim");
    let first = queue.epochs.drained + 1;
    let last = retired.min(queue.epochs.submitted);
    if last < first {
        return DrainOutcome::default();
    }
    let mut kernarg_end = queue.kernargs.reclaimed;
    let submitted = queue.epochs.submitted;
    let mut coalescer = Coalescer { table: &queue.link.semaphores, pending: None, outcome: DrainOutcome::default() };
    for epoch in first..=last {
        let Ok((row, signals, waits, _)) = rows.get(queue.epochs.row(epoch)) else { continue };
        // A covered wait whose cover came through an earlier epoch's barriers (`via`) fails with
        // that epoch; epochs drain in order, so its outcome is settled by now.
        let failure = row
            .failure
            .or_else(|| failed_dependency(coalescer.table, &waits.0))
            .or_else(|| queue.frontier.via_failure(&waits.0));
        match failure {
            None => {
                coalescer.catch_up(&waits.0);
                signals.0.iter().for_each(|signal| coalescer.push(*signal));
            }
            Some(failure) => signals.0.iter().for_each(|signal| coalescer.fail(*signal, failure)),
        }
        S::release_waits(&queue.link, &waits.0);
        queue.frontier.settle(epoch, failure, submitted);
        kernarg_end = row.kernarg_end;
        coalescer.outcome.epochs += 1;
    }
    coalescer.flush();
    for epoch in first..=last {
        let Ok((_, mut signals, mut waits, _)) = rows.get_mut(queue.epochs.row(epoch)) else { continue };
        signals.0.clear();
        waits.0.clear();
    }
    let outcome = coalescer.outcome;
    queue.kernargs.reclaimed = kernarg_end;
    queue.epochs.drained = last;
    queue.endpoint.drained.store(last, Ordering::SeqCst);
    if outcome.signals + outcome.failures > 0 {
        queue.link.semaphores.notify();
    }
    outcome
}

/// The queue failed with `failure`: every epoch still in flight fails its semaphores and is
/// force-retired on the device so barriers on other queues that wait
/// for it pass (their epochs then fail through [`drain`]'s dependency check).
pub fn fail_in_flight<S: CrossQueueStrategy>(
    queue: &mut QueueState,
    rows: &mut EpochRows,
    failure: u32,
) -> DrainOutcome {
    crate::stage_span!("fail_in_flight");
    queue.failure = Some(failure);
    queue.endpoint.failure.store(failure + 1, Ordering::Release);
    // Force-retired is not run: the HSA queue may still execute these epochs' packets.
    if queue.epochs.submitted > queue.epochs.drained
        && let Ok((row, _, _, _)) = rows.get(queue.epochs.row(queue.epochs.drained + 1))
    {
        queue.unsettled_from = Some(queue.unsettled_from.map_or(row.row, |from| from.min(row.row)));
    }
    let mut outcome = DrainOutcome::default();
    for epoch in queue.epochs.drained + 1..=queue.epochs.submitted {
        let Ok((_, mut signals, mut waits, _)) = rows.get_mut(queue.epochs.row(epoch)) else { continue };
        for signal in signals.0.drain(..) {
            outcome.failures += u64::from(queue.link.semaphores.fail(signal.semaphore, failure));
        }
        S::release_waits(&queue.link, &waits.0);
        waits.0.clear();
        outcome.epochs += 1;
    }
    queue.frontier.clear_pending();
    S::force_retire(queue);
    queue.epochs.drained = queue.epochs.submitted;
    queue.kernargs.reclaimed = queue.kernargs.head;
    queue.endpoint.drained.store(queue.epochs.submitted, Ordering::SeqCst);
    queue.link.semaphores.notify();
    outcome
}

/// The submitting thread's reclaim: drains what the device retired when at least
/// [`SUBMITTER_DRAIN_BATCH`] epochs did, so a busy queue needs no completion-thread wake-up.
/// Reads nothing shared unless a whole batch is in flight.
#[inline]
pub fn drain_retired_batch<S: CrossQueueStrategy>(
    queue: &mut QueueState,
    rows: &mut EpochRows,
) -> Option<DrainOutcome> {
    let batch_end = queue.epochs.drained + SUBMITTER_DRAIN_BATCH;
    if queue.epochs.submitted < batch_end || !S::has_retired(&queue.endpoint, batch_end) {
        return None;
    }
    let retired = S::device_retired(&queue.endpoint);
    Some(drain::<S>(queue, rows, retired))
}
