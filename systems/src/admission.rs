//! Admission: decide whether the staged submission can go to the device now, and reserve what it
//! needs. Nothing changes unless the verdict is [`Verdict::Admitted`].
//!
//! Waits are resolved in tiers, cheapest first:
//! 1. the semaphore already holds the value → dropped;
//! 2. its producer is this queue → dropped (the queue runs in order);
//! 3. the producer's epoch already retired, or this queue's frontier covers it → dropped;
//! 4. the producer is another queue of the device → one device-side barrier per producer queue;
//! 5. no known producer (wait-before-signal, host-signalled) → [`Verdict::Defer`].

use core::sync::atomic::Ordering;

use aqueduct_components::directory::{CrossQueueWait, QueueEndpoint};
use aqueduct_components::program::SegmentEnd;
use aqueduct_components::queue_state::QueueRings;
use aqueduct_components::semaphore_table::{Producer, WaitSource};
use aqueduct_components::submission::{
    AdmissionPlan, DeviceWait, Payload, StagedSubmission, SubmissionFault, SubmissionRows, Verdict,
};

use crate::SubmissionRowQuery;

/// Dependency signals one BARRIER_AND packet can name.
pub const BARRIER_AND_DEPENDENCIES: usize = 5;

/// Resolves the staged waits into `plan.device_waits` without reserving anything.
pub fn resolve_waits(rings: &QueueRings, staged: &StagedSubmission, plan: &mut AdmissionPlan) -> Verdict {
    plan.device_waits.clear();
    let table = &rings.link.semaphores;
    for wait in &staged.waits {
        let producer = match table.wait_source(wait.semaphore, wait.value) {
            WaitSource::Satisfied => continue,
            WaitSource::Failed(failure) => return Verdict::DependencyFailed(failure),
            WaitSource::Unknown => return Verdict::Defer,
            WaitSource::Queued(producer) => producer,
        };
        let covered = if producer.queue == rings.index {
            true
        } else {
            let Some(endpoint) = rings.link.directory.get(producer.queue) else { return Verdict::Defer };
            // The producer's drained epoch, not its live epoch signal: the signal's cache line
            // is written by the packet processor on every retirement, the counter once per drain.
            let retired = endpoint.reclaimed.load(Ordering::Acquire) >= producer.epoch;
            // A failed producer queue force-retires its epochs only after failing their
            // semaphores, so re-reading the failure after seeing retirement cannot miss it.
            if retired && let Some(failure) = table.failure(wait.semaphore) {
                return Verdict::DependencyFailed(failure);
            }
            retired || rings.frontier[usize::from(producer.queue)] >= producer.epoch
        };
        add_wait(
            &mut plan.device_waits,
            DeviceWait { producer, semaphore: wait.semaphore, barrier: !covered, slot_named: false },
        );
    }
    Verdict::Admitted
}

/// Keeps one barrier per producer queue (its latest epoch); covered waits are kept for failure
/// propagation but emit nothing.
fn add_wait(waits: &mut Vec<DeviceWait>, wait: DeviceWait) {
    if wait.barrier
        && let Some(existing) =
            waits.iter_mut().find(|existing| existing.barrier && existing.producer.queue == wait.producer.queue)
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

/// AQL packets the device waits need under `strategy`.
pub fn barrier_packets(strategy: CrossQueueWait, waits: &[DeviceWait]) -> u64 {
    let barriers = waits.iter().filter(|wait| wait.barrier).count();
    match strategy {
        CrossQueueWait::BarrierValue => barriers as u64,
        CrossQueueWait::BarrierAnd => barriers.div_ceil(BARRIER_AND_DEPENDENCIES) as u64,
    }
}

/// The whole admission stage: checks, wait resolution, then the reservation.
pub fn admit(rings: &mut QueueRings, staged: &StagedSubmission, plan: &mut AdmissionPlan) {
    crate::stage_span!("admission");
    plan.clear();
    if let Some(failure) = rings.failure {
        plan.verdict = Verdict::QueueFailed(failure);
        return;
    }
    let verdict = resolve_waits(rings, staged, plan);
    if verdict != Verdict::Admitted {
        plan.verdict = verdict;
        return;
    }
    let barriers = barrier_packets(rings.strategy, &plan.device_waits);
    // The read index last seen first; the live one (a line the packet processor keeps writing)
    // only when that says the ring is too full for a single payload packet, or always for a
    // program, whose segment is sized to the room there is.
    let program = staged.payload == Payload::Program;
    let write_index = rings.ring.write_index_now();
    let mut aql_free = rings.ring.capacity() - write_index.wrapping_sub(rings.known_read_index);
    if program || aql_free < barriers + 1 {
        rings.known_read_index = rings.ring.read_index();
        aql_free = rings.ring.capacity() - write_index.wrapping_sub(rings.known_read_index);
    }
    let (packets, kernarg_bytes, kernarg_alignment) = if program {
        let room = aql_free.saturating_sub(barriers);
        let capacity = rings.ring.capacity().saturating_sub(barriers);
        let verdict = crate::replay::plan_segment(rings, &staged.program, room, capacity, &mut plan.segment);
        if verdict != Verdict::Admitted {
            plan.verdict = verdict;
            return;
        }
        (
            barriers + crate::replay::segment_packets(&plan.segment),
            plan.segment.kernarg_bytes,
            crate::replay::SEGMENT_KERNARG_ALIGNMENT,
        )
    } else {
        (barriers + 1, staged.kernarg_bytes(), u64::from(staged.kernarg_alignment))
    };
    if packets > rings.ring.capacity() || kernarg_bytes > rings.kernargs.capacity / 2 {
        plan.verdict = Verdict::TooLarge;
        return;
    }
    // Capacity first, all read-only.
    let epoch = rings.epochs.submitted + 1;
    let slot_free = match rings.strategy {
        CrossQueueWait::BarrierValue => true,
        CrossQueueWait::BarrierAnd => {
            rings.endpoint.slot_users[rings.endpoint.slot_index(epoch)].load(Ordering::SeqCst) == 0
        }
    };
    let kernarg_span = rings.kernargs.plan(kernarg_bytes, kernarg_alignment);
    let (Some((start, end)), true, true, true) =
        (kernarg_span, rings.epochs.has_room(), slot_free, aql_free >= packets)
    else {
        plan.verdict = Verdict::Backpressure;
        return;
    };
    // Reserve. This queue's World is the only producer on its ring, so the CAS cannot lose.
    let Some(first_packet) = rings.ring.try_reserve_known(packets, rings.known_read_index) else {
        plan.verdict = Verdict::Backpressure;
        return;
    };
    rings.kernargs.head = end;
    rings.epochs.submitted = epoch;
    if rings.strategy == CrossQueueWait::BarrierAnd {
        // The epoch's own signal goes to 1 before anyone can learn of the epoch (the producer
        // records below), so no consumer barrier sees the previous use's 0.
        // SAFETY: the endpoint's per-epoch signals live as long as the device. The check above
        // found no consumer barrier naming this slot, and its previous epoch was reclaimed, so
        // resetting it cannot release anyone early.
        unsafe { QueueEndpoint::signal_value(rings.endpoint.slot_signal(epoch)) }.store(1, Ordering::Release);
    }
    plan.packets = packets;
    plan.first_packet = first_packet;
    plan.kernarg_address = rings.kernargs.address(start);
    plan.staging_address = plan.kernarg_address + u64::from(staged.kernarg_size).next_multiple_of(16);
    plan.kernarg_end = end;
    plan.epoch = epoch;
    plan.verdict = Verdict::Admitted;
    if staged.payload != Payload::Program || plan.segment.end == SegmentEnd::Return {
        record_producers(rings, staged, epoch);
    }
}

/// Records this queue's epoch as the producer of each signal, so a later wait (on this queue in
/// the same pass, or on another queue) resolves to it. Written at admission, not publication:
/// the epoch is reserved and will retire (as passing barriers if publication faults, with its
/// signals failed), and a batch's later rows must see it before they are admitted.
fn record_producers(rings: &QueueRings, staged: &StagedSubmission, epoch: u64) {
    for signal in &staged.signals {
        rings.link.semaphores.record_queued_signal(
            signal.semaphore,
            signal.value,
            Producer { queue: rings.index, epoch },
        );
    }
}

/// Admission over the pending rows, in queue order: admits each until one cannot go (recorded
/// as the pass's stop), or until a program whose execution continues past this segment (the rows
/// behind it wait for the rest of it).
pub fn admit_pending(rings: &mut QueueRings, rows: &mut SubmissionRows, query: &mut SubmissionRowQuery) {
    rows.pass.clear();
    for &entity in &rows.pending {
        let Ok((staged, mut plan)) = query.get_mut(entity) else {
            rows.pass.stop = Some((entity, Verdict::Fault(SubmissionFault::MissingRow)));
            return;
        };
        admit(rings, &staged, &mut plan);
        if plan.verdict != Verdict::Admitted {
            rows.pass.stop = Some((entity, plan.verdict));
            return;
        }
        rows.pass.admitted.push(entity);
        if staged.payload == Payload::Program && plan.segment.end != SegmentEnd::Return {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use aqueduct_components::semaphore_table::Producer;

    use super::*;

    fn wait(queue: u16, epoch: u64, semaphore: u32) -> DeviceWait {
        DeviceWait { producer: Producer { queue, epoch }, semaphore, barrier: true, slot_named: false }
    }

    #[test]
    fn one_barrier_per_producer_queue_and_every_semaphore_kept() {
        let mut waits = Vec::new();
        for next in [wait(1, 5, 10), wait(1, 9, 11), wait(2, 3, 12), wait(1, 7, 13)] {
            add_wait(&mut waits, next);
        }
        let barriers: Vec<_> =
            waits.iter().filter(|wait| wait.barrier).map(|wait| (wait.producer.queue, wait.producer.epoch)).collect();
        assert_eq!(barriers, [(1, 9), (2, 3)], "the latest epoch of each producer queue");
        let mut semaphores: Vec<_> = waits.iter().map(|wait| wait.semaphore).collect();
        semaphores.sort();
        assert_eq!(semaphores, [10, 11, 12, 13], "covered waits stay for failure propagation");
        assert_eq!(barrier_packets(CrossQueueWait::BarrierValue, &waits), 2);
        assert_eq!(barrier_packets(CrossQueueWait::BarrierAnd, &waits), 1);
    }
}
