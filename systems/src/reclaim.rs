//! Epoch reclaim: what the submitting thread (a batch at a time) and the completion thread (an
//! idle queue, or one nobody drained) do with retired epochs, and what happens to everything in
//! flight when the queue fails.
//!
//! **Contract.** Every function here takes the queue's lock (a [`Reclaim`] view of the `QueueState`,
//! or of the queue World's resources during a batch run). `drain` raises or
//! fails the drained epochs' semaphores, gives their arena spans and kernarg bytes back and publishes
//! the drained epoch; at an epoch held on an undrained producer it stops before changing anything
//! for that epoch. It wakes parked host threads itself; the returned `DrainOutcome` says which other
//! queues to poke (`wake`) and whether the drain is held (`held_on`), which the engine acts on, after
//! letting the lock go where it can. `fail_in_flight` fails every in-flight epoch's semaphores first,
//! then force-retires the epochs on the device and frees the rings; the rows stay unsettled
//! (`QueueState::unsettled_from`) while the HSA queue may still run their packets.

use core::sync::atomic::Ordering;

use aqueduct_components::dependency::{DeviceWait, SignalOp};
use aqueduct_components::drain_order::{self, ProducerDrain};
use aqueduct_components::semaphore_table::{FailureRecord, SemaphoreTable};
use aqueduct_components::submission::SubmissionFault;

use crate::queue_state::DrainOutcome;
use crate::strategy::CrossQueueStrategy;
use crate::sync::{HostParking, SemaphoreSync};
use crate::{DeviceLink, DeviceTarget, QueueHandles};
use aqueduct_components::frontier::QueueFrontier;
use aqueduct_components::kernarg_ring::KernargRing;
use aqueduct_components::queue_state::EpochTable;

/// What reclaim reads and writes: the epoch table and the kernarg ring it frees, the frontier it
/// settles, the queue's failure and unsettled mark (written when the queue fails), and the device
/// target's binding tables. Borrowed from the `QueueState` ([`crate::QueueState::reclaim`]) or from
/// the queue World's resources (`reclaim_system`).
pub struct Reclaim<'a> {
    pub handles: &'a QueueHandles,
    pub epochs: &'a mut EpochTable,
    pub kernargs: &'a mut KernargRing,
    pub frontier: &'a mut QueueFrontier,
    pub failure: &'a mut Option<u32>,
    pub unsettled_from: &'a mut Option<u64>,
    pub device_target: &'a mut Option<DeviceTarget>,
}

impl crate::QueueState {
    /// Reclaim's view: what it reads and writes.
    #[inline(always)]
    pub fn reclaim(&mut self) -> Reclaim<'_> {
        Reclaim {
            handles: &self.handles,
            epochs: &mut self.epochs,
            kernargs: &mut self.kernargs,
            frontier: &mut self.frontier,
            failure: &mut self.failure,
            unsettled_from: &mut self.unsettled_from,
            device_target: &mut self.device_target,
        }
    }
}

impl Reclaim<'_> {
    /// A fresh view of the same parts, for an out-of-line call: passing this one by reference
    /// would keep it in memory, and every field access one load further, on the inlined paths too.
    #[inline(always)]
    fn reborrow(&mut self) -> Reclaim<'_> {
        Reclaim {
            handles: self.handles,
            epochs: self.epochs,
            kernargs: self.kernargs,
            frontier: self.frontier,
            failure: self.failure,
            unsettled_from: self.unsettled_from,
            device_target: self.device_target,
        }
    }
}

/// Retired epochs the submitting thread lets accumulate before it drains them itself, holding
/// the queue lock it already has: one signal load per submission while a batch is in flight,
/// and one drain per batch.
pub const SUBMITTER_DRAIN_BATCH: u64 = 16;

/// How a drain treats an epoch that waited from the device on another queue's epoch that the
/// other queue has not drained yet (its work ran, so the wait passed, but its signals are not
/// published).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrainOrder {
    /// Stop before it until the producer drains: a semaphore is then raised only by its
    /// producer's drain, every signal of a submission in one drain, and only after everything
    /// the submission waited on was published. So a host that sees one signal of a submission
    /// sees the others, and their causes (the stress found a timeline raised on another queue's
    /// behalf while the same submission's other semaphore still read 0).
    Causal,
    /// As [`Self::Causal`], but a hold registers nothing and pokes no one: it only names the
    /// producer queue (`DrainOutcome::held_on`). For a drainer that drains that queue itself
    /// next and then drains again, with [`Self::Causal`] if it cannot.
    CausalProbe,
    /// Drain it now, first raising the semaphores it waited on to the values it waited for (its
    /// producer's other signals follow when that queue drains). Only for a queue that is failing
    /// or going away, which must not wait on another queue's progress.
    CatchUp,
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
    /// yet ([`DrainOrder::CatchUp`]).
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

/// The first producer queue that epoch `epoch` of queue `me` waited on and that has not drained
/// the producing epoch, if any. With `register`, `me` is registered on it to be woken when it has
/// (`drain_order`).
///
/// A new registration also pokes the producer's completion thread: the producing epoch retired,
/// but that thread may sleep until a later epoch retires (a batch, or everything in flight), and
/// that epoch may wait on this queue's next submission, whose submitter may be waiting for this
/// drain to free ring space (two queues handing off through 16-packet rings deadlocked so).
fn undrained_producer(link: &DeviceLink, me: u16, epoch: u64, waits: &[DeviceWait], register: bool) -> Option<u16> {
    waits
        .iter()
        .map(|wait| wait.producer)
        .find(|producer| {
            if producer.queue == me {
                return producer.epoch >= epoch; // drained in order, before this one
            }
            // A queue leaves the directory never: one that is not there was never registered.
            let Some(endpoint) = link.directory.get(producer.queue) else { return false };
            if !register {
                return endpoint.drained.load(Ordering::SeqCst) < producer.epoch;
            }
            match drain_order::await_drain(&endpoint.drained, &endpoint.drain_waiters, me, producer.epoch) {
                ProducerDrain::Drained => false,
                ProducerDrain::Registered { newly } => {
                    if newly {
                        link.poke(endpoint.control_signal);
                    }
                    true
                }
            }
        })
        .map(|producer| producer.queue)
}

/// What the block processor reported in the status record at `address`, once the execution it
/// ran has retired: `None` when it ran to its return.
fn processor_fault(address: u64) -> Option<SubmissionFault> {
    // SAFETY: the record is the retired execution's, in host-visible memory the queue's device
    // target owns; its processor's last write was released before the done signal completed,
    // and the drain acquired the epoch's retirement since.
    let status = unsafe { (address as *const aqueduct_abi::device_program::ProcessorStatus).read_volatile() };
    (status.code != 0).then_some(SubmissionFault::DeviceProcessor {
        code: status.code,
        block: status.block,
        command: status.command,
        detail: status.detail,
    })
}

/// Drains every epoch up to `retired`, in order, one loop over the epoch table's range from the
/// last drained: signals (or, if a device-side dependency failed, fails) their semaphores and
/// frees their kernarg space. Under [`DrainOrder::Causal`] and [`DrainOrder::CausalProbe`] it
/// stops at the first epoch whose producers have not drained (`held_on`). Wakes host waiters.
pub fn drain<S: CrossQueueStrategy>(queue: &mut Reclaim<'_>, retired: u64, order: DrainOrder) -> DrainOutcome {
    crate::stage_span!("epoch_reclaim");
    let first = queue.epochs.drained + 1;
    let last = retired.min(queue.epochs.submitted);
    if last < first {
        return DrainOutcome::default();
    }
    let mut kernarg_end = queue.kernargs.reclaimed;
    let submitted = queue.epochs.submitted;
    let mut done = first - 1;
    let Reclaim { epochs, handles: QueueHandles { link, index, .. }, frontier, device_target, .. } = &mut *queue;
    let mut coalescer = Coalescer { table: &link.semaphores, pending: None, outcome: DrainOutcome::default() };
    for epoch in first..=last {
        let slot = epochs.slot(epoch);
        if epochs.device_status[slot] != 0 {
            let status = core::mem::take(&mut epochs.device_status[slot]);
            // Later epochs read this epoch's binding table or newer ones. An execution with an
            // empty table wrote no start: its slot holds an earlier epoch's, which is older still.
            if let Some(target) = device_target.as_mut() {
                target.binding_tables.release_before(target.binding_tables.start_of(epoch));
            }
            if let Some(fault) = processor_fault(status) {
                let message = format!("submission fault: {fault}");
                epochs.failure[slot] = Some(link.semaphores.record_failure(FailureRecord { status: None, message }));
            }
        }
        let waits = epochs.wait_arena.get(epochs.device_waits[slot]);
        let signals = epochs.signal_arena.get(epochs.signals[slot]);
        // A covered wait whose cover came through an earlier epoch's barriers (`via`) fails with
        // that epoch; epochs drain in order, so its outcome is settled by now.
        let known_failure = |table| {
            epochs.failure[slot].or_else(|| failed_dependency(table, waits)).or_else(|| frontier.via_failure(waits))
        };
        let mut failure = known_failure(coalescer.table);
        // An epoch that fails already need not wait: its producer may not even have run (a cover
        // lost with a destroyed queue). One that would succeed waits for its producers' drains,
        // then looks again: a producer's drain may have failed what it waited on.
        if failure.is_none() && order != DrainOrder::CatchUp && !waits.is_empty() {
            let register = order == DrainOrder::Causal;
            if let Some(producer) = undrained_producer(link, *index, epoch, waits, register) {
                coalescer.outcome.held_on = Some(producer);
                break;
            }
            failure = known_failure(coalescer.table);
        }
        match failure {
            None => {
                if order == DrainOrder::CatchUp {
                    coalescer.catch_up(waits);
                }
                signals.iter().for_each(|signal| coalescer.push(*signal));
            }
            Some(failure) => signals.iter().for_each(|signal| coalescer.fail(*signal, failure)),
        }
        S::release_waits(link, waits);
        frontier.settle(epoch, failure, submitted);
        kernarg_end = epochs.kernarg_end[slot];
        coalescer.outcome.epochs += 1;
        done = epoch;
    }
    coalescer.flush();
    let mut outcome = coalescer.outcome;
    if done < first {
        return outcome; // held at the first epoch: nothing changed
    }
    epochs.release_through(done);
    queue.kernargs.reclaimed = kernarg_end;
    queue.epochs.drained = done;
    let QueueHandles { endpoint, link, .. } = queue.handles;
    outcome.wake = drain_order::publish_drained(&endpoint.drained, &endpoint.drain_waiters, done);
    if outcome.signals + outcome.failures > 0 {
        link.semaphores.notify();
    }
    outcome
}

/// The queue failed with `failure`: every epoch still in flight fails its semaphores and is
/// force-retired on the device so barriers on other queues that wait
/// for it pass (their epochs then fail through [`drain`]'s dependency check).
pub fn fail_in_flight<S: CrossQueueStrategy>(queue: &mut Reclaim<'_>, failure: u32) -> DrainOutcome {
    crate::stage_span!("fail_in_flight");
    let QueueHandles { endpoint, link, .. } = queue.handles;
    *queue.failure = Some(failure);
    endpoint.failure.store(failure + 1, Ordering::Release);
    let (drained, submitted) = (queue.epochs.drained, queue.epochs.submitted);
    // Force-retired is not run: the HSA queue may still execute these epochs' packets.
    if submitted > drained {
        let row = queue.epochs.row[queue.epochs.slot(drained + 1)];
        *queue.unsettled_from = Some(queue.unsettled_from.map_or(row, |from| from.min(row)));
    }
    let mut outcome = DrainOutcome::default();
    for epoch in drained + 1..=submitted {
        let epochs = &*queue.epochs;
        let slot = epochs.slot(epoch);
        for signal in epochs.signal_arena.get(epochs.signals[slot]) {
            outcome.failures += u64::from(link.semaphores.fail(signal.semaphore, failure));
        }
        S::release_waits(link, epochs.wait_arena.get(epochs.device_waits[slot]));
        outcome.epochs += 1;
    }
    if submitted > drained {
        queue.epochs.release_through(submitted);
    }
    queue.frontier.clear_pending();
    S::force_retire(queue.handles, queue.epochs);
    queue.epochs.drained = submitted;
    queue.kernargs.release_all();
    if let Some(target) = queue.device_target.as_mut() {
        target.binding_tables.release_all();
    }
    outcome.wake = drain_order::publish_drained(&endpoint.drained, &endpoint.drain_waiters, submitted);
    link.semaphores.notify();
    outcome
}

/// The submitting thread's reclaim: drains what the device retired when at least
/// [`SUBMITTER_DRAIN_BATCH`] epochs did, so a busy queue needs no completion-thread wake-up.
/// Reads nothing shared unless a whole batch is in flight.
#[inline]
pub fn drain_retired_batch<S: CrossQueueStrategy>(queue: &mut Reclaim<'_>) -> Option<DrainOutcome> {
    let batch_end = queue.epochs.drained + SUBMITTER_DRAIN_BATCH;
    let endpoint = &queue.handles.endpoint;
    if queue.epochs.submitted < batch_end || !S::has_retired(endpoint, batch_end) {
        return None;
    }
    let retired = S::device_retired(endpoint);
    Some(drain::<S>(&mut queue.reborrow(), retired, DrainOrder::Causal))
}

/// The reclaim stage of a pass: [`drain_retired_batch`], returning what it drained (with the
/// drained epoch before it) for `QueueState::drain`, where the engine follows it up.
#[inline]
pub fn reclaim_retired_batch<S: CrossQueueStrategy>(queue: &mut Reclaim<'_>) -> Option<(u64, DrainOutcome)> {
    let drained_before = queue.epochs.drained;
    drain_retired_batch::<S>(queue).map(|outcome| (drained_before, outcome))
}
