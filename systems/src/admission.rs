//! Admission: decide whether the enqueued submission can go to the device now, and reserve what it
//! needs. Nothing changes unless the verdict is [`Verdict::Admitted`].
//!
//! Waits are resolved in tiers, cheapest first:
//! 1. the semaphore already holds the value → dropped;
//! 2. its producer is this queue → dropped (the queue runs in order);
//! 3. the producer's epoch already retired, or this queue's frontier covers it (directly or
//!    through what earlier barriers' producers had reached) → dropped;
//! 4. the producer is another queue of the device → one device-side barrier per producer queue,
//!    unless another barrier of the same submission has a producer whose record shows it already
//!    followed this one → dropped;
//! 5. no known producer (wait-before-signal, host-signalled) → [`Verdict::Defer`].
//!
//! Every dropped wait on another queue stays in the plan as a covered wait, so its semaphore's
//! failure still fails the submission at reclaim.
//!
//! **Contract.** The caller holds the queue's lock (`&mut QueueState`: the submitting thread, a
//! batch's flush, or the completion thread readmitting parked rows). Admission reads the semaphore
//! table and other queues' endpoints without a lock and writes only this queue's state, plus what the
//! cross-queue protocol owns: the producer records of the semaphores an admitted row signals, and
//! under BarrierAnd this epoch's per-epoch signal and the `slot_users` count of each producer slot a
//! barrier names. After `admit_pending` the admitted rows own their reserved AQL slots (committed
//! with one write-index store), kernarg span and epoch; publication must write every one of those
//! packets. A row that is not admitted leaves nothing behind: its resolved waits are truncated from
//! the epoch wait arena, nothing is reserved, and the pass records `(row, verdict)` as its stop for
//! the engine's driver to park, drain or fail. A barrier whose producer cannot be named is not a
//! refusal: the row keeps its reservation with `Reservation::wait_fault`, and publication writes its
//! payload as barriers that pass.

use core::sync::atomic::Ordering;

use aqueduct_components::dependency::DeviceWait;
use aqueduct_components::dependency::Producer;
use aqueduct_components::frontier::{Cover, Frontier};
use aqueduct_components::program::LegEnd;
use aqueduct_components::semaphore_table::WaitSource;
use aqueduct_components::submission::{Arena, Payload, Reservation, Span, Verdict};

use crate::CaptureState;
use crate::strategy::CrossQueueStrategy;
use crate::sync::SemaphoreSync;
use crate::{DeviceTarget, QueueHandles};
use aqueduct_components::frontier::QueueFrontier;
use aqueduct_components::kernarg_ring::KernargRing;
use aqueduct_components::queue_state::EpochTable;
use aqueduct_components::submission::SubmissionRows;

/// What admission reads and writes: the pending rows, the read index it last loaded, the kernarg
/// ring and epoch table it reserves from, the frontier it extends, the device target's binding
/// tables (an execution's), and, read-only, the capture's packet counts and the queue's failure.
/// Borrowed from the `QueueState` ([`crate::QueueState::admission`]) or from the queue World's
/// resources (`admission_system`).
pub struct Admission<'a> {
    pub handles: &'a QueueHandles,
    pub known_read_index: &'a mut u64,
    pub rows: &'a mut SubmissionRows,
    pub kernargs: &'a mut KernargRing,
    pub epochs: &'a mut EpochTable,
    pub frontier: &'a mut QueueFrontier,
    pub capture: &'a CaptureState,
    pub failure: Option<u32>,
    pub device_target: &'a mut Option<DeviceTarget>,
}

impl crate::QueueState {
    /// Admission's view: what it reads and writes.
    #[inline(always)]
    pub fn admission(&mut self) -> Admission<'_> {
        Admission {
            handles: &self.handles,
            known_read_index: &mut self.known_read_index,
            rows: &mut self.rows,
            kernargs: &mut self.kernargs,
            epochs: &mut self.epochs,
            frontier: &mut self.frontier,
            capture: &self.capture,
            failure: self.failure,
            device_target: &mut self.device_target,
        }
    }
}

/// Resolves the waits in `waits` (a span of the row arena) into device waits appended to the
/// epoch table's wait arena from `start` (its end when called), and what their producers had
/// reached into `reached`, without reserving anything. The caller truncates the arena back to
/// `start` unless the row is admitted.
#[inline(always)]
pub fn resolve_waits<S: CrossQueueStrategy>(queue: &mut Admission<'_>, waits: Span, reached: &mut Frontier) -> Verdict {
    let Admission { epochs, rows, frontier, handles: QueueHandles { link, index, .. }, .. } = queue;
    let index = *index;
    let device_waits = &mut epochs.wait_arena;
    let start = device_waits.end();
    *reached = Frontier::EMPTY;
    let table = &link.semaphores;
    for wait in rows.waits.get(waits) {
        let producer = match table.wait_source(wait.semaphore, wait.value) {
            WaitSource::Satisfied => continue,
            WaitSource::Failed(failure) => return Verdict::DependencyFailed(failure),
            WaitSource::Unknown => return Verdict::Defer,
            WaitSource::Queued(producer) => producer,
        };
        let (covered, via, signal) = if producer.queue == index {
            (true, 0, 0)
        } else {
            let Some(endpoint) = link.directory.get(producer.queue) else { return Verdict::Defer };
            // The producer's drained epoch, not its live epoch signal: the signal's cache line
            // is written by the packet processor on every retirement, the counter once per drain.
            let retired = endpoint.drained.load(Ordering::Acquire) >= producer.epoch;
            // A failed producer queue force-retires its epochs only after failing their
            // semaphores, so re-reading the failure after seeing retirement cannot miss it.
            if retired && let Some(failure) = table.failure(wait.semaphore) {
                return Verdict::DependencyFailed(failure);
            }
            match frontier.cover(producer) {
                _ if retired => (true, 0, 0),
                Cover::Known => (true, 0, 0),
                Cover::Pending { via } => (true, via, 0),
                Cover::No => {
                    // What the producer's queue had reached before it, read with the record so
                    // it belongs to this producer (a replaced record gives nothing: no elision).
                    if let Some(producer_reached) = table.queued_frontier(wait.semaphore, producer) {
                        frontier.collect(index, &producer_reached, reached);
                    }
                    (false, 0, S::resolved_wait_signal(endpoint))
                }
            }
        };
        let wait = DeviceWait {
            producer,
            semaphore: wait.semaphore,
            value: wait.value,
            barrier: !covered,
            via,
            signal,
            slot_named: false,
        };
        add_wait(device_waits, start, wait);
    }
    // A barrier's producer that another barrier's producer already followed needs no packet: the
    // later barrier passes only after it. A producer's record never lists its own queue, and
    // "followed" runs in publication order, so two barriers never drop each other.
    if !reached.is_empty() {
        for wait in device_waits.tail_mut(start).iter_mut().filter(|wait| wait.barrier) {
            wait.barrier = !reached.covers(wait.producer);
        }
    }
    Verdict::Admitted
}

/// Keeps one barrier per producer queue (its latest epoch) among the waits appended from
/// `start`; covered waits are kept for failure propagation but emit nothing.
// Forced inline, as `record_producers` is: out of line, the two cost the immediate edge about 75
// instructions a submission (the wait passed through memory, the calls, the lost context).
#[inline(always)]
fn add_wait(waits: &mut Arena<DeviceWait>, start: u64, wait: DeviceWait) {
    if wait.barrier
        && let Some(existing) = waits
            .tail_mut(start)
            .iter_mut()
            .find(|existing| existing.barrier && existing.producer.queue == wait.producer.queue)
    {
        // The barrier on the later epoch covers the earlier one, but the earlier wait's
        // semaphore still decides whether this submission fails, so it stays as a covered wait.
        let covered =
            if wait.producer.epoch > existing.producer.epoch { core::mem::replace(existing, wait) } else { wait };
        waits.push(DeviceWait { barrier: false, ..covered });
        return;
    }
    waits.push(wait);
}

/// AQL packets the device waits need under strategy `S`.
pub fn barrier_packets<S: CrossQueueStrategy>(waits: &[DeviceWait]) -> u64 {
    S::barrier_packets(waits.iter().filter(|wait| wait.barrier).count() as u64)
}

/// Admits row `row` with AQL packets from `next_packet`, which it advances past them; the
/// caller commits the range's packets with one write-index update.
#[inline(always)]
fn admit_row<S: CrossQueueStrategy>(queue: &mut Admission<'_>, row: u64, next_packet: &mut u64) -> Verdict {
    if let Some(failure) = queue.failure {
        return Verdict::QueueFailed(failure);
    }
    let slot = queue.rows.slot(row);
    let mut reached = Frontier::EMPTY;
    let waits_start = queue.epochs.wait_arena.end();
    let verdict = resolve_waits::<S>(queue, queue.rows.columns.waits[slot], &mut reached);
    if verdict != Verdict::Admitted {
        queue.epochs.wait_arena.truncate(waits_start);
        return verdict;
    }
    let verdict = reserve_resolved::<S>(queue, row, waits_start, &reached, next_packet);
    if verdict != Verdict::Admitted {
        queue.epochs.wait_arena.truncate(waits_start);
    }
    verdict
}

/// The reservation for row `row`, whose waits resolved into the epoch wait arena from
/// `waits_start`; its packets start at `next_packet`.
#[inline(always)]
fn reserve_resolved<S: CrossQueueStrategy>(
    queue: &mut Admission<'_>,
    row: u64,
    waits_start: u64,
    reached: &Frontier,
    next_packet: &mut u64,
) -> Verdict {
    let slot = queue.rows.slot(row);
    let barriers = queue.epochs.wait_arena.tail(waits_start).iter().filter(|wait| wait.barrier).count() as u64;
    let wait_packets = S::barrier_packets(barriers);
    // The read index last seen first; the live one (a line the packet processor keeps writing)
    // only when that says the ring is too full for a single payload packet, or always for a
    // program, whose leg is sized to the room there is.
    // The kind only: the payload itself (a dispatch's template) is not copied out of its column.
    let kind = queue.rows.columns.payload[slot].kind();
    let program = kind == Payload::EXECUTE;
    let write_index = *next_packet;
    let mut aql_free = queue.handles.ring.capacity() - write_index.wrapping_sub(*queue.known_read_index);
    if program || aql_free < wait_packets + queue.capture.payload_packets(1, false) {
        *queue.known_read_index = queue.handles.ring.read_index();
        aql_free = queue.handles.ring.capacity() - write_index.wrapping_sub(*queue.known_read_index);
    }
    let kernargs = queue.rows.columns.kernargs[slot];
    let (packets, kernarg_bytes, kernarg_alignment) = if program {
        // A timed leg's two extra packets (see `CaptureState::payload_packets`) come off the room.
        let extra = queue.capture.payload_packets(0, true);
        let room = aql_free.saturating_sub(wait_packets + extra);
        let capacity = queue.handles.ring.capacity().saturating_sub(wait_packets + extra);
        let drained_all = queue.epochs.submitted == queue.epochs.drained;
        let columns = &mut queue.rows.columns;
        let leg = &mut columns.leg[slot];
        let timing_slots =
            if queue.capture.flags().dispatch_timing { crate::block_processor::DEVICE_TIMING_SLOTS } else { 0 };
        let verdict = crate::block_processor::plan_leg(
            queue.kernargs,
            queue.device_target.as_ref().map(|target| &target.binding_tables),
            drained_all,
            &columns.program[slot],
            crate::block_processor::PacketRoom { now: room, at_best: capacity },
            timing_slots,
            leg,
        );
        if verdict != Verdict::Admitted {
            return verdict;
        }
        (
            wait_packets + queue.capture.payload_packets(crate::block_processor::leg_packets(leg), true),
            leg.kernarg_bytes,
            crate::block_processor::SEGMENT_KERNARG_ALIGNMENT,
        )
    } else {
        (wait_packets + queue.capture.payload_packets(1, false), kernargs.ring_bytes(), u64::from(kernargs.alignment))
    };
    if packets > queue.handles.ring.capacity() || kernarg_bytes > queue.kernargs.capacity / 2 {
        return Verdict::TooLarge;
    }
    // Capacity first, all read-only.
    let epoch = queue.epochs.submitted + 1;
    let slot_free = S::epoch_state_free(&queue.handles.endpoint, epoch);
    let kernarg_span = queue.kernargs.plan(kernarg_bytes, kernarg_alignment);
    let (Some(span), true, true, true) = (kernarg_span, queue.epochs.has_room(), slot_free, aql_free >= packets) else {
        return Verdict::Backpressure;
    };
    // Reserve: the packets from the range's cursor (checked against the room above); the range
    // commits them with one write-index update.
    let first_packet = *next_packet;
    *next_packet += packets;
    queue.rows.pass.packets += packets;
    queue.rows.pass.device_waits += barriers;
    queue.kernargs.reserve(span);
    queue.epochs.submitted = epoch;
    // Before the producer records below: no one can learn of the epoch before its state is armed.
    let Admission { handles: QueueHandles { endpoint, link, .. }, epochs, .. } = &mut *queue;
    let wait_fault = S::reserve_epoch(endpoint, link, epoch, epochs.wait_arena.tail_mut(waits_start)).err();
    let epoch_slot = epochs.slot(epoch);
    epochs.device_waits[epoch_slot] = epochs.wait_arena.span_from(waits_start);
    if program
        && let Some(plan) = queue.rows.columns.leg[slot].binding_table
        && let Some(target) = queue.device_target.as_mut()
    {
        // `plan` was made for this run above, with nothing reserved since.
        let run = &mut queue.rows.columns.program[slot];
        run.binding_table = target.binding_tables.commit(plan, &run.bindings, epoch);
    }
    queue.rows.columns.reservation[slot] = Reservation {
        packets,
        wait_packets,
        first_packet,
        // A barrier has no kernarg segment.
        kernarg_address: if kind == Payload::BARRIER { 0 } else { span.address },
        kernarg_end: span.end,
        epoch,
        wait_fault,
    };
    // Publication always writes these barriers (a payload fault replaces only the payload), so
    // their producers are reached once this epoch retires, and so is everything their records
    // list: device barriers plus the barrier bit on every packet make "queue X reached epoch e"
    // transitive. The records' entries stay conditional on this epoch until it is drained
    // (`QueueFrontier` says why); the producer records below carry only unconditional ones.
    let Admission { epochs, frontier, handles: QueueHandles { index, .. }, .. } = &mut *queue;
    let producers = epochs.wait_arena.tail(waits_start).iter().filter(|wait| wait.barrier).map(|wait| wait.producer);
    frontier.admitted_epoch(*index, epoch, producers, reached);
    if !program || queue.rows.columns.leg[slot].end == LegEnd::Return {
        record_producers(queue, row, epoch);
    }
    Verdict::Admitted
}

/// Records this queue's epoch as the producer of each of row `row`'s signals, with what the
/// queue is known to have reached, so a later wait (on this queue in the same pass, or on another
/// queue) resolves to it. Written at admission, not publication: the epoch is reserved and will
/// retire (its payload as passing barriers if publication faults, with its signals failed), and
/// a batch's later rows must see it before they are admitted.
#[inline(always)]
fn record_producers(queue: &Admission<'_>, row: u64, epoch: u64) {
    let reached = queue.frontier.published();
    for signal in queue.rows.row_signals(row) {
        queue.handles.link.semaphores.record_queued_signal_with_frontier(
            signal.semaphore,
            signal.value,
            Producer { queue: queue.handles.index, epoch },
            reached,
        );
    }
}

/// Admission over the pending rows, in queue order, one loop over the range from the front:
/// admits each until one cannot go (recorded as the pass's stop), or until a program whose
/// execution continues past this leg (the rows behind it wait for the rest of it).
///
/// The range's AQL packets are reserved together: each row takes its packets from a cursor, and
/// one write-index update commits them all after the loop.
#[inline(always)]
pub fn admit_pending<S: CrossQueueStrategy>(queue: &mut Admission<'_>) {
    crate::stage_span!("admission");
    queue.rows.pass.begin(queue.rows.front);
    let start = queue.handles.ring.write_index_now();
    let mut next_packet = start;
    for row in queue.rows.pending() {
        let verdict = admit_row::<S>(queue, row, &mut next_packet);
        if verdict != Verdict::Admitted {
            queue.rows.pass.stop = Some((row, verdict));
            break;
        }
        let rows = &mut queue.rows;
        let slot = rows.slot(row);
        rows.pass.admitted_end = row + 1;
        rows.pass.patches += u64::from(!rows.columns.kernargs[slot].is_empty());
        if rows.columns.payload[slot].kind() == Payload::EXECUTE && rows.columns.leg[slot].end != LegEnd::Return {
            break;
        }
    }
    queue.handles.ring.commit_reserved(start, next_packet);
}

#[cfg(test)]
mod tests {
    use aqueduct_components::dependency::Producer;

    use super::*;
    use crate::strategy::{BarrierAnd, BarrierValue};

    fn wait(queue: u16, epoch: u64, semaphore: u32) -> DeviceWait {
        DeviceWait {
            producer: Producer { queue, epoch },
            semaphore,
            value: 1,
            barrier: true,
            via: 0,
            signal: 0,
            slot_named: false,
        }
    }

    #[test]
    fn one_barrier_per_producer_queue_and_every_semaphore_kept() {
        let mut arena = Arena::with_capacity(4);
        // An earlier row's wait in the arena is not this row's: it must not absorb a barrier.
        arena.push(wait(1, 20, 9));
        let start = arena.end();
        for next in [wait(1, 5, 10), wait(1, 9, 11), wait(2, 3, 12), wait(1, 7, 13)] {
            add_wait(&mut arena, start, next);
        }
        let waits = arena.tail_mut(start).to_vec();
        let barriers: Vec<_> =
            waits.iter().filter(|wait| wait.barrier).map(|wait| (wait.producer.queue, wait.producer.epoch)).collect();
        assert_eq!(barriers, [(1, 9), (2, 3)], "the latest epoch of each producer queue");
        let mut semaphores: Vec<_> = waits.iter().map(|wait| wait.semaphore).collect();
        semaphores.sort();
        assert_eq!(semaphores, [10, 11, 12, 13], "covered waits stay for failure propagation");
        assert_eq!(barrier_packets::<BarrierValue>(&waits), 2);
        assert_eq!(barrier_packets::<BarrierAnd>(&waits), 1);
    }
}
