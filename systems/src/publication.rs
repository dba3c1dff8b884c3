//! AQL publication: barrier packets for the device waits, then the payload packet, bodies first,
//! then each header with one 32-bit release store in order, then one doorbell store.
//!
//! Every packet carries the barrier bit: a queue runs in order, so its epoch signal is a prefix
//! clock and a same-queue wait needs no packet. Only the last packet carries the epoch.

use core::sync::atomic::Ordering;

use aqueduct_abi::{
    BarrierAndPacket, BarrierValuePacket, FenceScope, PacketHeader, PacketType, SignalCondition, VendorPacketHeader,
    packet::amd_format,
};
use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE, QueueEndpoint};
use aqueduct_components::program::SegmentEnd;
use aqueduct_components::queue_state::QueueRings;
use aqueduct_components::semaphore_table::{FailureRecord, Producer};
use aqueduct_components::submission::{AdmissionPlan, Payload, StagedSubmission, SubmissionFault};
use aqueduct_hsa::ring::AqlRing;

use crate::EpochRows;
use crate::admission::BARRIER_AND_DEPENDENCIES;
use crate::replay;

const WAIT_HEADER: PacketHeader = PacketHeader::new(PacketType::BarrierAnd, true, FenceScope::System, FenceScope::None);
const VALUE_HEADER: PacketHeader =
    PacketHeader::new(PacketType::VendorSpecific, true, FenceScope::System, FenceScope::None);
const PAYLOAD_BARRIER_HEADER: PacketHeader =
    PacketHeader::new(PacketType::BarrierAnd, true, FenceScope::System, FenceScope::System);
const DISPATCH_HEADER: PacketHeader =
    PacketHeader::new(PacketType::KernelDispatch, true, FenceScope::System, FenceScope::System);

/// Publishes the admitted submission and moves its signals and retained resources into its
/// epoch row.
///
/// If something the earlier stages guaranteed no longer holds (a producer queue is missing, a
/// program segment cannot be written), the reserved packets become barriers that pass, so the
/// queue never stalls on an empty slot, but the submission runs nothing: its epoch is marked
/// failed, its signals fail when it retires, and the fault is returned.
pub fn publish(
    rings: &mut QueueRings,
    staged: &mut StagedSubmission,
    plan: &mut AdmissionPlan,
    rows: &mut EpochRows,
) -> Result<(), SubmissionFault> {
    crate::stage_span!("aql_publication");
    let epoch = plan.epoch;
    let completion = match rings.strategy {
        CrossQueueWait::BarrierValue => rings.epoch_signal,
        CrossQueueWait::BarrierAnd => {
            let signal = rings.endpoint.slot_signal(epoch);
            // SAFETY: the endpoint's per-epoch signals live as long as the device. Admission
            // checked no consumer barrier still names this slot, and its previous epoch was
            // reclaimed, so resetting it cannot release anyone early.
            unsafe { QueueEndpoint::signal_value(signal) }.store(1, Ordering::Release);
            signal
        }
    };
    let mut id = plan.first_packet;
    let ring = rings.ring;
    let mut wait_headers = 0u64;
    let mut fault = None;
    match rings.strategy {
        CrossQueueWait::BarrierValue => {
            for wait in plan.device_waits.iter().filter(|wait| wait.barrier) {
                // Admission deferred waits on unregistered queues, so the lookup succeeds.
                let Some(producer) = rings.link.directory.get(wait.producer.queue) else {
                    fault = Some(SubmissionFault::UnknownProducerQueue { queue: wait.producer.queue });
                    break;
                };
                // Retired epochs = EPOCH_BASE - value ≥ epoch  ⇔  value < EPOCH_BASE - epoch + 1.
                let packet = BarrierValuePacket {
                    header: VendorPacketHeader {
                        header: VALUE_HEADER,
                        amd_format: amd_format::BARRIER_VALUE,
                        reserved: 0,
                    },
                    signal: producer.epoch_signal,
                    value: EPOCH_BASE - wait.producer.epoch as i64 + 1,
                    mask: -1,
                    cond: SignalCondition::Lt as u32,
                    ..Default::default()
                };
                // SAFETY: `id` is one of the packets admission reserved for this submission.
                unsafe { ring.write_body(id, &packet) };
                id += 1;
                wait_headers += 1;
            }
        }
        CrossQueueWait::BarrierAnd => {
            let mut packet = BarrierAndPacket::default();
            let mut filled = 0;
            for wait in plan.device_waits.iter_mut().filter(|wait| wait.barrier) {
                match name_epoch_slot(rings, wait.producer) {
                    Ok(Some(signal)) => {
                        wait.slot_named = true;
                        packet.dep_signal[filled] = signal;
                    }
                    Ok(None) => {}
                    Err(error) => {
                        fault = Some(error);
                        break;
                    }
                }
                filled += 1;
                if filled == BARRIER_AND_DEPENDENCIES {
                    // SAFETY: reserved packet, as above.
                    unsafe { ring.write_body(id, &packet) };
                    (id, wait_headers, filled, packet) = (id + 1, wait_headers + 1, 0, BarrierAndPacket::default());
                }
            }
            if filled > 0 {
                // SAFETY: reserved packet, as above.
                unsafe { ring.write_body(id, &packet) };
                id += 1;
                wait_headers += 1;
            }
        }
    }
    let payload = match staged.payload {
        _ if fault.is_some() => None,
        Payload::Barrier => {
            let packet = BarrierAndPacket { completion_signal: completion, ..Default::default() };
            // SAFETY: the last reserved packet.
            unsafe { ring.write_body(id, &packet) };
            Some((PAYLOAD_BARRIER_HEADER, 0))
        }
        Payload::Dispatch(template) => {
            let packet = template.packet(plan.kernarg_address, completion);
            // SAFETY: the last reserved packet.
            unsafe { ring.write_body(id, &packet) };
            Some((DISPATCH_HEADER, template.dimensions))
        }
        Payload::Program => {
            // SAFETY: admission reserved the segment's packets from `id` and its kernarg bytes at
            // `plan.kernarg_address`; the engine checked the binding table for this program.
            let written = unsafe {
                replay::write_segment(&ring, id, plan.kernarg_address, completion, &mut staged.program, &plan.segment)
            };
            fault = written.err();
            None
        }
    };
    let failure = fault.map(|fault| {
        // SAFETY: admission reserved `plan.packets` packets from `plan.first_packet`; none of
        // their headers is published yet.
        unsafe { write_passing_barriers(&ring, plan.first_packet, plan.packets, completion) };
        staged.program.cursor = aqueduct_components::program::Cursor::Done;
        rings
            .link
            .semaphores
            .record_failure(FailureRecord { status: None, message: format!("submission fault: {fault}") })
    });
    if failure.is_some() {
        ring.ring_doorbell(plan.first_packet + plan.packets - 1);
    } else {
        publish_headers(rings, staged, plan, wait_headers, id, payload);
    }

    record_epoch(rings, staged, plan, rows, failure);
    fault.map_or(Ok(()), Err)
}

/// Stores the header words in order, then rings the doorbell once. The processor may start on
/// the first while later ones are still stores away, which is fine: every body is written.
fn publish_headers(
    rings: &QueueRings,
    staged: &StagedSubmission,
    plan: &AdmissionPlan,
    wait_headers: u64,
    id: u64,
    payload: Option<(PacketHeader, u16)>,
) {
    let ring = rings.ring;
    let first = plan.first_packet;
    // A vendor packet's AMD format byte shares the header word, in the `setup` half.
    let (wait_header, wait_setup) = match rings.strategy {
        CrossQueueWait::BarrierValue => (VALUE_HEADER, u16::from(amd_format::BARRIER_VALUE)),
        CrossQueueWait::BarrierAnd => (WAIT_HEADER, 0),
    };
    for offset in 0..wait_headers {
        // SAFETY: bodies of the reserved packets are written.
        unsafe { ring.publish(first + offset, wait_header, wait_setup) };
    }
    let last = match payload {
        Some((header, setup)) => {
            // SAFETY: as above.
            unsafe { ring.publish(id, header, setup) };
            id
        }
        None => {
            let headers = &staged.program.headers;
            for (offset, &word) in headers.iter().enumerate() {
                if word != replay::HEADER_LEFT_TO_DEVICE {
                    // SAFETY: as above.
                    unsafe { ring.publish(id + offset as u64, PacketHeader(word as u16), (word >> 16) as u16) };
                }
            }
            id + headers.len() as u64 - 1
        }
    };
    ring.ring_doorbell(last);
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

/// Moves the published submission's signals and retained resources into its epoch row, and
/// advances the frontier and the producer records.
fn record_epoch(
    rings: &mut QueueRings,
    staged: &mut StagedSubmission,
    plan: &AdmissionPlan,
    rows: &mut EpochRows,
    failure: Option<u32>,
) {
    let epoch = plan.epoch;
    // A failed epoch waited on nothing, so it covers nothing for later submissions. Otherwise its
    // barriers' producers are reached once it retires, and so is everything their records list:
    // device barriers plus the barrier bit on every packet make "queue X reached epoch e"
    // transitive (X reaches e only after the barriers of its epochs up to e passed). The records'
    // entries stay conditional on this epoch until it is reclaimed (`QueueFrontier` says why).
    if failure.is_none() {
        let barriers = plan.device_waits.iter().filter(|wait| wait.barrier).map(|wait| wait.producer);
        rings.frontier.published_epoch(rings.index, epoch, barriers, &plan.frontier);
    }
    // A program's earlier segments signal nothing and keep nothing: the execution's signals and
    // retained resources stay with it until its final segment.
    let final_segment =
        staged.payload != Payload::Program || plan.segment.end == SegmentEnd::Return || failure.is_some();
    if staged.payload == Payload::Program && failure.is_none() {
        replay::advance(&mut staged.program, &plan.segment);
    }
    if final_segment {
        for signal in &staged.signals {
            rings.link.semaphores.record_queued_signal_with_frontier(
                signal.semaphore,
                signal.value,
                Producer { queue: rings.index, epoch },
                rings.frontier.published(),
            );
        }
    }
    if let Ok((mut row, mut signals, mut retained, mut waits)) = rows.get_mut(rings.epochs.row(epoch)) {
        row.epoch = epoch;
        row.kernarg_end = plan.kernarg_end;
        row.failure = failure;
        if final_segment {
            // Swaps, not copies: the row's vectors were emptied at reclaim, so capacity
            // ping-pongs between the row and the staging area and nothing allocates.
            core::mem::swap(&mut signals.0, &mut staged.signals);
            core::mem::swap(&mut retained.0, &mut staged.retained);
        }
        waits.0.clear();
        waits.0.extend_from_slice(&plan.device_waits);
    }
    rings.endpoint.submitted.store(epoch, Ordering::Release);
}

/// BarrierAnd: claims a use of the producer's per-epoch signal, or `None` when that epoch was
/// already reclaimed (its slot may be reused, and the wait is satisfied anyway).
fn name_epoch_slot(rings: &QueueRings, producer: Producer) -> Result<Option<u64>, SubmissionFault> {
    let endpoint = rings
        .link
        .directory
        .get(producer.queue)
        .ok_or(SubmissionFault::UnknownProducerQueue { queue: producer.queue })?;
    let users = &endpoint.slot_users[endpoint.slot_index(producer.epoch)];
    users.fetch_add(1, Ordering::SeqCst);
    // Paired with the producer's SeqCst check of `slot_users` before reuse: either it sees our
    // claim and waits, or we see the reclaim and name nothing.
    if endpoint.reclaimed.load(Ordering::SeqCst) >= producer.epoch {
        users.fetch_sub(1, Ordering::SeqCst);
        return Ok(None);
    }
    Ok(Some(endpoint.slot_signal(producer.epoch)))
}
