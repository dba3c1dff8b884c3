//! AQL publication: barrier packets for the device waits, then the payload packet, bodies first,
//! then each header with one 32-bit release store in order, then one doorbell store.
//!
//! Every packet carries the barrier bit: a queue runs in order, so its epoch signal is a prefix
//! clock and a same-queue wait needs no packet. Only the last packet carries the epoch.

use core::sync::atomic::Ordering;

use aqueduct_abi::{BarrierAndPacket, FenceScope, PacketHeader, PacketType};
use aqueduct_components::capture::{CapturedWait, EpochCapture, TimedKind, TimedPacket, WaitTier};
use aqueduct_components::program::{Cursor, SegmentEnd};
use aqueduct_components::semaphore_table::FailureRecord;
use aqueduct_components::submission::{AdmissionPlan, Payload, StagedSubmission, SubmissionFault};
use aqueduct_hsa::ring::AqlRing;
use bevy_ecs::entity::Entity;

use crate::block_processor;
use crate::strategy::CrossQueueStrategy;
use crate::sync::SemaphoreSync;
use crate::{CaptureState, EpochRows, QueueState, SubmissionRowQuery};

const PAYLOAD_BARRIER_HEADER: PacketHeader =
    PacketHeader::new(PacketType::BarrierAnd, true, FenceScope::System, FenceScope::System);
const DISPATCH_HEADER: PacketHeader =
    PacketHeader::new(PacketType::KernelDispatch, true, FenceScope::System, FenceScope::System);

/// Publishes the admitted submission (without ringing the doorbell) and moves its signals into
/// its epoch row.
///
/// If something the earlier stages guaranteed no longer holds (a wait barrier could not be named,
/// a program segment cannot be written), the payload's reserved packets become barriers that
/// pass, so the queue never stalls on an empty slot, but the submission runs nothing: its epoch
/// is marked failed, its signals fail when it retires, and the fault is returned.
pub fn publish<S: CrossQueueStrategy>(
    queue: &mut QueueState,
    staged: &mut StagedSubmission,
    plan: &mut AdmissionPlan,
    rows: &mut EpochRows,
) -> Result<(), SubmissionFault> {
    crate::stage_span!("aql_publication");
    let completion = S::completion_signal(queue, plan.epoch);
    let ring = queue.ring;
    let timed = queue.capture.flags().times_packets();
    // Timed, the first wait barrier marks when the device began on the submission: the time
    // it then spends waiting is the submission's, and the summary's waits can measure it.
    let wait_timed = timed && plan.wait_fault.is_none() && plan.device_waits.iter().any(|wait| wait.barrier);
    let first_completion = if wait_timed { queue.capture.time_packet(TimedKind::Payload) } else { 0 };
    // SAFETY: admission reserved the wait barriers' packets first among this submission's.
    let wait_headers =
        unsafe { S::write_wait_barriers(&ring, plan.first_packet, &plan.device_waits, first_completion) };
    let id = plan.first_packet + wait_headers;
    let last = plan.first_packet + plan.packets - 1;
    let mut fault = plan.wait_fault;
    let payload = if fault.is_some() {
        None
    } else {
        // Under a capture that times packets, the payload completes on timing signals and the
        // trailing barrier at `last` carries the epoch (`CaptureState::payload_packets`). The
        // signals taken are noted in `queue.capture.timed`.
        let payload_completion =
            |queue: &mut QueueState, kind| if timed { queue.capture.time_packet(kind) } else { completion };
        if timed {
            let trailing = BarrierAndPacket { completion_signal: completion, ..Default::default() };
            // SAFETY: the last reserved packet, published after the payload's.
            unsafe { ring.write_body(last, &trailing) };
        }
        match staged.payload {
            Payload::Barrier => {
                let signal = payload_completion(queue, TimedKind::Payload);
                let packet = BarrierAndPacket { completion_signal: signal, ..Default::default() };
                // SAFETY: the payload's reserved packet.
                unsafe { ring.write_body(id, &packet) };
                Some((PAYLOAD_BARRIER_HEADER, 0))
            }
            Payload::Dispatch(template) => {
                let kind = TimedKind::Dispatch {
                    kernel_object: template.kernel_object,
                    grid: template.grid,
                    workgroup: template.workgroup,
                    command: None,
                };
                let signal = payload_completion(queue, kind);
                let packet = template.packet(plan.kernarg_address, signal);
                // SAFETY: the payload's reserved packet.
                unsafe { ring.write_body(id, &packet) };
                Some((DISPATCH_HEADER, template.dimensions))
            }
            Payload::Program => {
                let mut segment_id = id;
                let mut signal = completion;
                // Under dispatch timing, the block processor times each dispatch it writes.
                let mut capture = None;
                if timed {
                    // A barrier timed for the segment's begin, ahead of its packets.
                    let begin = queue.capture.time_packet(TimedKind::Payload);
                    let lead = BarrierAndPacket { completion_signal: begin, ..Default::default() };
                    // SAFETY: the first of the payload's reserved packets.
                    unsafe { ring.write_body(id, &lead) };
                    segment_id += 1;
                    // The segment's end: noted below, unless its last packet is a dispatch
                    // that the block processor timed on it.
                    signal = queue.capture.take_timing_signal().unwrap_or(0);
                    if queue.capture.flags().dispatch_timing {
                        capture = Some(&mut queue.capture);
                    }
                }
                // SAFETY: admission reserved the segment's packets from `segment_id` and its kernarg
                // bytes at `plan.kernarg_address`; the engine checked the binding table for this
                // program.
                let written = unsafe {
                    block_processor::write_segment(
                        &ring,
                        segment_id,
                        plan.kernarg_address,
                        signal,
                        &mut staged.program,
                        &plan.segment,
                        capture,
                    )
                };
                let capture = &mut queue.capture;
                if timed && signal != 0 && capture.timed.last().is_none_or(|packet| packet.signal != signal) {
                    capture.timed.push(TimedPacket { signal, kind: TimedKind::Payload });
                }
                fault = written.err();
                None
            }
        }
    };
    let failure = fault.map(|fault| {
        // The wait barriers stay: admission advanced the frontier and the producer records on
        // the promise that they run. Only the payload becomes barriers that pass.
        publish_headers::<S>(queue, staged, plan, wait_headers, id, None, false, false);
        // SAFETY: admission reserved `plan.packets` packets from `plan.first_packet`; the
        // payload's, from `id`, have no header published yet.
        unsafe { write_passing_barriers(&ring, id, last + 1 - id, completion) };
        staged.program.cursor = aqueduct_components::program::Cursor::Done;
        queue
            .link
            .semaphores
            .record_failure(FailureRecord { status: None, message: format!("submission fault: {fault}") })
    });
    if failure.is_some() {
        // The passing barriers carry the epoch; the payload's timing signals go back unused. A
        // timed wait barrier stays: it is published and will still complete on its signal.
        let kept = usize::from(wait_timed && first_completion != 0);
        let CaptureState { timed, timing_signals, .. } = &mut queue.capture;
        timing_signals.extend(timed.drain(kept..).map(|packet| packet.signal));
    } else {
        publish_headers::<S>(queue, staged, plan, wait_headers, id, payload, timed, true);
    }

    record_epoch::<S>(queue, staged, plan, rows, failure);
    fault.map_or(Ok(()), Err)
}

/// Makes host writes into host-visible device memory visible to the agent before a header that
/// may consume them: a store fence, then 1 to the HDP's `HDP_MEM_FLUSH_CNTL` and a read back (the
/// read completes the posted write), as IREE's driver and ROCr's runtime do. Only when a host
/// write came since the last flush: two loads otherwise.
fn publish_host_writes(host_writes: &aqueduct_components::host_writes::HostWrites) {
    use std::sync::atomic::{Ordering, fence};
    let written = host_writes.written.load(Ordering::Acquire);
    if host_writes.flushed.load(Ordering::Acquire) >= written {
        return;
    }
    fence(Ordering::SeqCst);
    let register = host_writes.flush_register as *mut u32;
    // SAFETY: the provider reported this register for the agent (`HSA_AMD_AGENT_INFO_HDP_FLUSH`);
    // it stays mapped while the device is open. Volatile: the write is the flush itself.
    unsafe {
        register.write_volatile(1);
        let _ = register.read_volatile();
    }
    host_writes.flushes.fetch_add(1, Ordering::Relaxed);
    host_writes.flushed.fetch_max(written, Ordering::Release);
}

/// Stores the header words in order: the wait barriers', then (with `with_payload`) the
/// payload's: `payload`'s one packet, or the program segment's (`None`). A `timed` payload sits
/// between its extra barriers (`CaptureState::payload_packets`): a program segment's lead barrier
/// first, and the trailing barrier carrying the epoch last. The processor may start on the first
/// while later ones are still stores away, which is fine: every body is written. The pass rings
/// the doorbell.
#[allow(clippy::too_many_arguments)]
fn publish_headers<S: CrossQueueStrategy>(
    queue: &QueueState,
    staged: &StagedSubmission,
    plan: &AdmissionPlan,
    wait_headers: u64,
    id: u64,
    payload: Option<(PacketHeader, u16)>,
    timed: bool,
    with_payload: bool,
) {
    if let Some(host_writes) = &queue.link.host_writes {
        publish_host_writes(host_writes);
    }
    let ring = queue.ring;
    let first = plan.first_packet;
    let (wait_header, wait_setup) = S::WAIT_HEADER;
    for offset in 0..wait_headers {
        // SAFETY: bodies of the reserved packets are written.
        unsafe { ring.publish(first + offset, wait_header, wait_setup) };
    }
    if !with_payload {
        return;
    }
    let mut id = id;
    if timed && payload.is_none() {
        // SAFETY: as above.
        unsafe { ring.publish(id, PAYLOAD_BARRIER_HEADER, 0) };
        id += 1;
    }
    match payload {
        // SAFETY: as above.
        Some((header, setup)) => unsafe { ring.publish(id, header, setup) },
        None => {
            for (offset, &word) in staged.program.headers.iter().enumerate() {
                if word != block_processor::HEADER_LEFT_TO_DEVICE {
                    // SAFETY: as above.
                    unsafe { ring.publish(id + offset as u64, PacketHeader(word as u16), (word >> 16) as u16) };
                }
            }
        }
    }
    if timed {
        // SAFETY: as above; the last reserved packet.
        unsafe { ring.publish(first + plan.packets - 1, PAYLOAD_BARRIER_HEADER, 0) };
    }
}

/// Fills `count` reserved packets from `first` with BARRIER_AND packets that have no
/// dependencies, the last carrying `completion`, and publishes them.
///
/// # Safety
/// The packets are reserved for the caller and none of their headers is published yet.
unsafe fn write_passing_barriers(ring: &AqlRing, first: u64, count: u64, completion: u64) {
    for id in first..first + count {
        let last = id + 1 == first + count;
        let packet = BarrierAndPacket { completion_signal: if last { completion } else { 0 }, ..Default::default() };
        // SAFETY: forwarded from the caller.
        unsafe { ring.write_body(id, &packet) };
    }
    for id in first..first + count {
        // SAFETY: every body above is written.
        unsafe { ring.publish(id, PAYLOAD_BARRIER_HEADER, 0) };
    }
}

/// Moves the published submission's signals into its epoch row, which records the row's sequence.
fn record_epoch<S: CrossQueueStrategy>(
    queue: &mut QueueState,
    staged: &mut StagedSubmission,
    plan: &AdmissionPlan,
    rows: &mut EpochRows,
    failure: Option<u32>,
) {
    let epoch = plan.epoch;
    // A program's earlier segments signal nothing: the execution's signals stay with it until
    // its final segment.
    let final_segment =
        staged.payload != Payload::Program || plan.segment.end == SegmentEnd::Return || failure.is_some();
    if staged.payload == Payload::Program && failure.is_none() {
        block_processor::advance(&mut staged.program, &plan.segment);
    }
    if let Ok((mut row, mut signals, mut waits, mut capture)) = rows.get_mut(queue.epochs.row(epoch)) {
        row.epoch = epoch;
        row.row = staged.row;
        row.kernarg_end = plan.kernarg_end;
        row.failure = failure;
        if queue.capture.flags().any() {
            capture_epoch(queue, staged, plan, &mut capture, final_segment);
        }
        if final_segment {
            // Swaps, not copies: the row's vectors were emptied at reclaim, so capacity
            // ping-pongs between the row and the staging area and nothing allocates.
            core::mem::swap(&mut signals.0, &mut staged.signals);
        }
        waits.0.clear();
        waits.0.extend_from_slice(&plan.device_waits);
    }
    queue.endpoint.submitted.store(epoch, Ordering::Release);
    S::wake_idle_completion(queue, epoch);
}

/// Copies what the profile records of the submission into its epoch row (only while a capture
/// is on). The waits' tiers are read back from the plan: a wait admission kept names its
/// producer (this queue, a barrier, or covered); one it dropped was satisfied, or, if the row
/// parked, became satisfied while it waited.
fn capture_epoch(
    queue: &mut QueueState,
    staged: &StagedSubmission,
    plan: &AdmissionPlan,
    capture: &mut EpochCapture,
    final_segment: bool,
) {
    capture.clear();
    capture.captured = true;
    capture.operation = staged.operation;
    capture.submit_entry_ns = staged.submit_entry_ns;
    capture.published_ns = 0;
    capture.packets = plan.packets as u32;
    capture.kernarg_bytes =
        if staged.payload == Payload::Program { plan.segment.kernarg_bytes } else { staged.kernarg_bytes() };
    for wait in &staged.waits {
        let kept = plan.device_waits.iter().find(|device| device.semaphore == wait.semaphore);
        let tier = match kept {
            Some(device) if device.producer.queue == queue.index => WaitTier::SameQueue,
            Some(device) if device.barrier => {
                WaitTier::DeviceBarrier { queue: device.producer.queue, epoch: device.producer.epoch }
            }
            Some(_) => WaitTier::Covered,
            None if staged.parked => WaitTier::Deferred,
            None => WaitTier::Satisfied,
        };
        capture.waits.push(CapturedWait { semaphore: wait.semaphore, value: wait.value, tier });
    }
    if final_segment {
        capture.signals.extend_from_slice(&staged.signals);
    }
    // A swap, not a copy: `clear` emptied the row's vector, which becomes the next
    // publication's, so once both have grown to a submission's timed packets nothing allocates.
    core::mem::swap(&mut capture.timed, &mut queue.capture.timed);
}

/// Publication for every row the pass admitted, then one doorbell store for all of them.
pub fn publish_admitted<S: CrossQueueStrategy>(
    queue: &mut QueueState,
    query: &mut SubmissionRowQuery,
    epoch_rows: &mut EpochRows,
) {
    let mut last_packet = None;
    for index in 0..queue.rows.pass.admitted.len() {
        let entity = queue.rows.pass.admitted[index];
        let Ok((mut staged, mut plan)) = query.get_mut(entity) else { continue };
        last_packet = Some(publish_row::<S>(queue, entity, &mut staged, &mut plan, epoch_rows));
    }
    if let Some(last) = last_packet {
        queue.ring.ring_doorbell(last);
    }
}

/// Publishes one admitted row (without ringing the doorbell), notes it in the pass, and returns
/// its last packet id. A row whose program continues stays at the front of the pending rows;
/// every other published row is cleared and recycled.
#[inline]
pub fn publish_row<S: CrossQueueStrategy>(
    queue: &mut QueueState,
    entity: Entity,
    staged: &mut StagedSubmission,
    plan: &mut AdmissionPlan,
    epoch_rows: &mut EpochRows,
) -> u64 {
    let published = publish::<S>(queue, staged, plan, epoch_rows);
    let rows = &mut queue.rows;
    rows.pass.packets += plan.packets;
    rows.pass.device_waits += plan.device_waits.iter().filter(|wait| wait.barrier).count() as u64;
    if let Err(fault) = published {
        rows.pass.fault.get_or_insert(fault);
    }
    let last_packet = plan.first_packet + plan.packets - 1;
    if staged.payload == Payload::Program && staged.program.cursor != Cursor::Done {
        return last_packet; // the execution's next segment runs in a later pass, from the same row
    }
    rows.pass.published += 1;
    staged.clear();
    if rows.pending.front() == Some(&entity) {
        rows.pending.pop_front();
    }
    rows.free.push(entity);
    last_packet
}
