//! Epoch reclaim: what the completion thread does with retired epochs, and with everything in
//! flight when the queue fails.

use core::sync::atomic::Ordering;

use aqueduct_components::directory::CrossQueueWait;
use aqueduct_components::semaphore_table::SemaphoreTable;
use aqueduct_components::submission::{DeviceWait, SignalOp};

use crate::sync::{HostParking, SemaphoreSync, signal_value};
use crate::{DeviceLink, EpochRows, QueueRings};

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

/// Gives back the producers' per-epoch signals this epoch's barriers named (BarrierAnd).
fn release_slots(link: &DeviceLink, strategy: CrossQueueWait, waits: &[DeviceWait]) {
    if strategy != CrossQueueWait::BarrierAnd {
        return;
    }
    for wait in waits.iter().filter(|wait| wait.slot_named) {
        if let Some(endpoint) = link.directory.get(wait.producer.queue) {
            endpoint.slot_users[endpoint.slot_index(wait.producer.epoch)].fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Drains every epoch up to `retired`: signals (or, if a device-side dependency failed, fails)
/// their semaphores and frees their kernarg space. Wakes host waiters.
pub fn drain(rings: &mut QueueRings, rows: &mut EpochRows, retired: u64) -> DrainOutcome {
    crate::stage_span!("epoch_reclaim");
    let first = rings.epochs.reclaimed + 1;
    let last = retired.min(rings.epochs.submitted);
    if last < first {
        return DrainOutcome::default();
    }
    let mut kernarg_end = rings.kernargs.reclaimed;
    let submitted = rings.epochs.submitted;
    let mut coalescer = Coalescer { table: &rings.link.semaphores, pending: None, outcome: DrainOutcome::default() };
    for epoch in first..=last {
        let Ok((row, signals, waits)) = rows.get(rings.epochs.row(epoch)) else { continue };
        // A covered wait whose cover came through an earlier epoch's barriers (`via`) fails with
        // that epoch; epochs drain in order, so its outcome is settled by now.
        let failure = row
            .failure
            .or_else(|| failed_dependency(coalescer.table, &waits.0))
            .or_else(|| rings.frontier.via_failure(&waits.0));
        match failure {
            None => signals.0.iter().for_each(|signal| coalescer.push(*signal)),
            Some(failure) => signals.0.iter().for_each(|signal| coalescer.fail(*signal, failure)),
        }
        release_slots(&rings.link, rings.strategy, &waits.0);
        rings.frontier.settle(epoch, failure, submitted);
        kernarg_end = row.kernarg_end;
        coalescer.outcome.epochs += 1;
    }
    coalescer.flush();
    for epoch in first..=last {
        let Ok((_, mut signals, mut waits)) = rows.get_mut(rings.epochs.row(epoch)) else { continue };
        signals.0.clear();
        waits.0.clear();
    }
    let outcome = coalescer.outcome;
    rings.kernargs.reclaimed = kernarg_end;
    rings.epochs.reclaimed = last;
    rings.endpoint.reclaimed.store(last, Ordering::SeqCst);
    if outcome.signals + outcome.failures > 0 {
        rings.link.semaphores.notify();
    }
    outcome
}

/// The queue failed with `failure`: every epoch still in flight fails its semaphores and is
/// force-retired on the device so barriers on other queues that wait
/// for it pass (their epochs then fail through [`drain`]'s dependency check).
pub fn fail_in_flight(rings: &mut QueueRings, rows: &mut EpochRows, failure: u32) -> DrainOutcome {
    crate::stage_span!("fail_in_flight");
    rings.failure = Some(failure);
    rings.endpoint.failure.store(failure + 1, Ordering::Release);
    let mut outcome = DrainOutcome::default();
    for epoch in rings.epochs.reclaimed + 1..=rings.epochs.submitted {
        let Ok((_, mut signals, mut waits)) = rows.get_mut(rings.epochs.row(epoch)) else { continue };
        for signal in signals.0.drain(..) {
            outcome.failures += u64::from(rings.link.semaphores.fail(signal.semaphore, failure));
        }
        release_slots(&rings.link, rings.strategy, &waits.0);
        waits.0.clear();
        outcome.epochs += 1;
    }
    rings.frontier.clear_pending();
    force_retire(rings);
    rings.epochs.reclaimed = rings.epochs.submitted;
    rings.kernargs.reclaimed = rings.kernargs.head;
    rings.endpoint.reclaimed.store(rings.epochs.submitted, Ordering::SeqCst);
    rings.link.semaphores.notify();
    outcome
}

/// Makes the device-side epoch state say every submitted epoch retired. Called only after the
/// queue's semaphores were failed (release ordering publishes that first).
fn force_retire(rings: &QueueRings) {
    let submitted = rings.epochs.submitted;
    match rings.strategy {
        CrossQueueWait::BarrierValue => {
            let target = aqueduct_components::directory::EPOCH_BASE - submitted as i64;
            // SAFETY: the epoch signal lives as long as the device.
            let current = unsafe { signal_value(rings.epoch_signal) }.load(Ordering::Acquire);
            if current > target {
                store_signal(rings, rings.epoch_signal, target);
            }
        }
        CrossQueueWait::BarrierAnd => {
            for epoch in rings.epochs.reclaimed + 1..=submitted {
                store_signal(rings, rings.endpoint.slot_signal(epoch), 0);
            }
        }
    }
}

/// Stores through the provider, so packet processors blocked on the signal wake at once.
fn store_signal(rings: &QueueRings, signal: u64, value: i64) {
    // SAFETY: the signal is live (device lifetime); the store has no other precondition.
    unsafe { (rings.link.api.hsa_signal_store_screlease)(aqueduct_hsa::sys::hsa_signal_t { handle: signal }, value) };
}
