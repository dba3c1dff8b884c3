//! AQL publication over the admitted range: every row's packet bodies first (the device-wait
//! barriers, then the payload), then every header in order, each one 32-bit release store, then
//! one doorbell store.
//!
//! Every packet carries the barrier bit: a queue runs in order, so its epoch signal is a prefix
//! clock and a same-queue wait needs no packet. Only the last packet carries the epoch.
//!
//! **Contract.** The caller holds the queue's lock, after admission and kernarg patching in the same
//! pass. Afterwards the published rows have left the pending table, their signals belong to their
//! epoch's row until it is drained, and the packets belong to the device (the packet processor frees
//! each slot when it fetches it). A failure (a program leg that cannot be written, or admission's
//! `wait_fault`) publishes the payload's reserved packets as barriers that pass, marks the epoch's
//! `failure` column so reclaim fails its signals, and reports the fault in the pass
//! (`rows.pass.fault`); the wait barriers are still published, so no reserved slot is left unwritten.

use core::ops::Range;
use core::sync::atomic::Ordering;

use aqueduct_abi::{BarrierAndPacket, FenceScope, PacketHeader, PacketType};
use aqueduct_components::capture::{CapturedWait, TimedKind, TimedPacket, WaitTier};
use aqueduct_components::program::{Cursor, LegEnd};
use aqueduct_components::semaphore_table::FailureRecord;
use aqueduct_components::submission::{Payload, SubmissionFault};
use aqueduct_hsa::ring::AqlRing;

use crate::block_processor;
use crate::strategy::CrossQueueStrategy;
use crate::sync::SemaphoreSync;
use crate::{CaptureState, DeviceLink, DeviceTarget, QueueHandles};
use aqueduct_components::queue_state::EpochTable;
use aqueduct_components::submission::SubmissionRows;

/// What publication reads and writes: the rows it publishes (and leaves), the epoch table's rows
/// it fills, the capture's timing signals, and the device target it writes executions for.
/// Borrowed from the `QueueState` ([`crate::QueueState::publication`]) or from the queue World's
/// resources (`publication_system`).
pub struct Publication<'a> {
    pub handles: &'a QueueHandles,
    pub rows: &'a mut SubmissionRows,
    pub epochs: &'a mut EpochTable,
    pub capture: &'a mut CaptureState,
    pub device_target: &'a Option<DeviceTarget>,
}

impl crate::QueueState {
    /// Publication's view: what it reads and writes.
    #[inline(always)]
    pub fn publication(&mut self) -> Publication<'_> {
        Publication {
            handles: &self.handles,
            rows: &mut self.rows,
            epochs: &mut self.epochs,
            capture: &mut self.capture,
            device_target: &self.device_target,
        }
    }
}

impl Publication<'_> {
    /// A fresh view of the same parts, for an out-of-line call: passing this one by reference
    /// would keep it in memory, and every field access one load further, on the inlined paths too.
    #[inline(always)]
    fn reborrow(&mut self) -> Publication<'_> {
        Publication {
            handles: self.handles,
            rows: self.rows,
            epochs: self.epochs,
            capture: self.capture,
            device_target: self.device_target,
        }
    }
}

const PAYLOAD_BARRIER_HEADER: PacketHeader =
    PacketHeader::new(PacketType::BarrierAnd, true, FenceScope::System, FenceScope::System);
const DISPATCH_HEADER: PacketHeader =
    PacketHeader::new(PacketType::KernelDispatch, true, FenceScope::System, FenceScope::System);

#[inline(always)]
fn publish_row<S: CrossQueueStrategy, const KIND: usize>(
    queue: &mut Publication<'_>,
    row: u64,
) -> Result<(), SubmissionFault> {
    let written = write_row::<S, KIND>(queue, row);
    announce_epochs::<S>(queue, row..row + 1);
    publish_host_writes(&queue.handles.link);
    publish_row_headers::<S, KIND>(queue, row);
    written
}

/// Publication's loops for one kind of payload, over a run of rows of that kind: the variant
/// is chosen once per run (by `Payload::kind`), not by a branch on each row; within the run the
/// other kinds' arms compile away. Bodies may be written in any order, since no header is stored
/// before every body is; headers go in queue order, run after run.
#[inline]
fn write_bodies<S: CrossQueueStrategy>(
    queue: &mut Publication<'_>,
    kind: usize,
    rows: Range<u64>,
) -> Result<(), SubmissionFault> {
    match kind {
        Payload::BARRIER => write_run_bodies::<S, { Payload::BARRIER }>(queue, rows),
        Payload::DISPATCH => write_run_bodies::<S, { Payload::DISPATCH }>(queue, rows),
        _ => write_run_bodies::<S, { Payload::EXECUTE }>(queue, rows),
    }
}

#[inline]
fn publish_run_headers<S: CrossQueueStrategy>(queue: &Publication<'_>, kind: usize, rows: Range<u64>) {
    match kind {
        Payload::BARRIER => rows.for_each(|row| publish_row_headers::<S, { Payload::BARRIER }>(queue, row)),
        Payload::DISPATCH => rows.for_each(|row| publish_row_headers::<S, { Payload::DISPATCH }>(queue, row)),
        _ => rows.for_each(|row| publish_row_headers::<S, { Payload::EXECUTE }>(queue, row)),
    }
}

/// Writes the bodies of a run of rows of kind `KIND`; returns the first fault.
#[inline]
fn write_run_bodies<S: CrossQueueStrategy, const KIND: usize>(
    queue: &mut Publication<'_>,
    rows: Range<u64>,
) -> Result<(), SubmissionFault> {
    let mut first_fault = Ok(());
    for row in rows {
        if let Err(fault) = write_row::<S, KIND>(queue, row) {
            first_fault = first_fault.and(Err(fault)); // keeps the first
        }
    }
    first_fault
}

/// The run of one payload kind that starts `rows` (not empty): its kind and its rows.
fn first_run(pending: &SubmissionRows, rows: Range<u64>) -> (usize, Range<u64>) {
    let kind = pending.payload_kind(rows.start);
    let end = (rows.start + 1..rows.end).find(|&row| pending.payload_kind(row) != kind).unwrap_or(rows.end);
    (kind, rows.start..end)
}

/// The run that starts `rows`: `known` (a run already found) when it starts there, so a range of
/// one kind (an immediate call's one row, most batches) is split once for both loops.
#[inline]
fn run_at(pending: &SubmissionRows, rows: Range<u64>, known: &(usize, Range<u64>)) -> (usize, Range<u64>) {
    if known.1.start == rows.start { known.clone() } else { first_run(pending, rows) }
}

/// Tells the queue's endpoint that the epochs of `rows` (their bodies written, their headers not
/// yet) are submitted, once for the range, and wakes an idle completion thread if the range's
/// first epoch is the first since it idled.
fn announce_epochs<S: CrossQueueStrategy>(queue: &Publication<'_>, rows: Range<u64>) {
    let epoch_of = |row| queue.rows.columns.reservation[queue.rows.slot(row)].epoch;
    queue.handles.endpoint.submitted.store(epoch_of(rows.end - 1), Ordering::Release);
    S::wake_idle_completion(queue.handles, queue.epochs, epoch_of(rows.start));
}

/// Makes the host's writes visible to the device (`publish_host_writes`), then stores the
/// headers of `rows`, whose bodies are all written, in order; `first` is the run they start with.
#[inline]
fn publish_headers<S: CrossQueueStrategy>(queue: &Publication<'_>, rows: Range<u64>, first: &(usize, Range<u64>)) {
    publish_host_writes(&queue.handles.link);
    let mut start = rows.start;
    while start < rows.end {
        let (kind, run) = run_at(queue.rows, start..rows.end, first);
        start = run.end;
        publish_run_headers::<S>(queue, kind, run);
    }
}

/// Writes admitted row `row`'s packet bodies (no header) and moves its signals into its epoch's
/// row.
///
/// If something the earlier stages guaranteed no longer holds (a wait barrier could not be named,
/// a program leg cannot be written), the payload's reserved packets become barriers that
/// pass, so the queue never stalls on an empty slot, but the submission runs nothing: its epoch
/// is marked failed, its signals fail when it retires, and the fault is returned.
#[inline(always)]
fn write_row<S: CrossQueueStrategy, const KIND: usize>(
    queue: &mut Publication<'_>,
    row: u64,
) -> Result<(), SubmissionFault> {
    crate::stage_span!("aql_publication");
    let slot = queue.rows.slot(row);
    let plan = queue.rows.columns.reservation[slot];
    let payload = queue.rows.columns.payload[slot];
    let completion = S::completion_signal(queue.handles, plan.epoch);
    let ring = queue.handles.ring;
    let timed = queue.capture.flags().times_packets();
    let device_waits = queue.epochs.device_waits[queue.epochs.slot(plan.epoch)];
    let waits = queue.epochs.wait_arena.get(device_waits);
    // Timed, the first wait barrier marks when the device began on the submission: the time
    // it then spends waiting is the submission's, and the summary's waits can measure it.
    let wait_timed = timed && plan.wait_fault.is_none() && waits.iter().any(|wait| wait.barrier);
    let first_completion = if wait_timed { queue.capture.time_packet(TimedKind::Payload) } else { 0 };
    let waits = queue.epochs.wait_arena.get(device_waits);
    // SAFETY: admission reserved the wait barriers' packets first among this submission's.
    let wait_headers = unsafe { S::write_wait_barriers(&ring, plan.first_packet, waits, first_completion) };
    let id = plan.first_packet + wait_headers;
    let last = plan.first_packet + plan.packets - 1;
    let mut fault = plan.wait_fault;
    if fault.is_none() {
        // Under a capture that times packets, the payload completes on timing signals and the
        // trailing barrier at `last` carries the epoch (`CaptureState::payload_packets`). The
        // signals taken are noted in `queue.capture.timed`.
        let payload_completion =
            |capture: &mut CaptureState, kind| if timed { capture.time_packet(kind) } else { completion };
        if timed {
            let trailing = BarrierAndPacket { completion_signal: completion, ..Default::default() };
            // SAFETY: the last reserved packet, published after the payload's.
            unsafe { ring.write_body(last, &trailing) };
        }
        // The run's kind, fixed for this loop: the arms of other kinds compile away.
        match (KIND, payload) {
            (Payload::BARRIER, _) => {
                let signal = payload_completion(queue.capture, TimedKind::Payload);
                let packet = BarrierAndPacket { completion_signal: signal, ..Default::default() };
                // SAFETY: the payload's reserved packet.
                unsafe { ring.write_body(id, &packet) };
            }
            (Payload::DISPATCH, Payload::Dispatch(template)) => {
                let kind = TimedKind::Dispatch {
                    kernel_object: template.kernel_object,
                    grid: template.grid,
                    workgroup: template.workgroup,
                    command: None,
                };
                let signal = payload_completion(queue.capture, kind);
                let packet = template.packet(plan.kernarg_address, signal);
                // SAFETY: the payload's reserved packet.
                unsafe { ring.write_body(id, &packet) };
            }
            (Payload::EXECUTE, _) => {
                fault = write_program_leg(&mut queue.reborrow(), slot, id, completion, timed).err()
            }
            _ => unreachable!("publication groups rows by their payload's kind"),
        }
    }
    let failure = fault.map(|fault| {
        // The wait barriers stay: admission advanced the frontier and the producer records on
        // the promise that they run. Only the payload becomes barriers that pass.
        // SAFETY: admission reserved `plan.packets` packets from `plan.first_packet`; the
        // payload's, from `id`, have no header published yet.
        unsafe { write_passing_barriers(&ring, id, last + 1 - id, completion) };
        queue.rows.columns.program[slot].cursor = aqueduct_components::program::Cursor::Done;
        queue
            .handles
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
    }

    record_epoch(queue, row, failure);
    fault.map_or(Ok(()), Err)
}

/// Writes a program row's planned leg from packet `id` (a timed leg between its lead
/// and trailing barriers).
fn write_program_leg(
    queue: &mut Publication<'_>,
    slot: usize,
    id: u64,
    completion: u64,
    timed: bool,
) -> Result<(), SubmissionFault> {
    let ring = queue.handles.ring;
    let kernarg_address = queue.rows.columns.reservation[slot].kernarg_address;
    let mut leg_id = id;
    let mut signal = completion;
    if timed {
        // A barrier timed for the leg's begin, ahead of its packets.
        let begin = queue.capture.time_packet(TimedKind::Payload);
        let lead = BarrierAndPacket { completion_signal: begin, ..Default::default() };
        // SAFETY: the first of the payload's reserved packets.
        unsafe { ring.write_body(id, &lead) };
        leg_id += 1;
        // The leg's end: noted below, unless its last packet is a dispatch that the block
        // processor timed on it.
        signal = queue.capture.take_timing_signal().unwrap_or(0);
    }
    if queue.rows.columns.program[slot].on_device {
        let epoch = queue.rows.columns.reservation[slot].epoch;
        let dispatch_timing = timed && queue.capture.flags().dispatch_timing;
        let Publication { rows, handles: QueueHandles { link, .. }, device_target, capture, .. } = queue;
        let target = device_target.as_ref().ok_or(SubmissionFault::NoDeviceProgram)?;
        // SAFETY: admission reserved the run's packets from `leg_id` and its kernarg bytes
        // at `kernarg_address`; the target lives as long as the queue; epochs reuse a slot only
        // after the one before retired.
        unsafe {
            block_processor::write_device_run(
                &ring,
                link.api,
                target,
                block_processor::DeviceRunPlacement { epoch, first_id: leg_id, kernarg_address, completion: signal },
                &mut rows.columns.program[slot],
                dispatch_timing.then_some(&mut *capture),
            )?
        };
        if timed && signal != 0 {
            capture.timed.push(TimedPacket { signal, kind: TimedKind::Payload });
        }
        return Ok(());
    }
    // Under dispatch timing, the block processor times each dispatch it writes.
    let dispatch_timing = timed && queue.capture.flags().dispatch_timing;
    let Publication { rows, capture, .. } = queue;
    let columns = &mut rows.columns;
    // SAFETY: admission reserved the leg's packets from `leg_id` and its kernarg bytes
    // at `kernarg_address`; the engine checked the binding table for this program.
    let written = unsafe {
        block_processor::write_leg(
            &ring,
            leg_id,
            kernarg_address,
            signal,
            &mut columns.program[slot],
            &columns.leg[slot],
            dispatch_timing.then_some(&mut *capture),
        )
    };
    if timed && signal != 0 && capture.timed.last().is_none_or(|packet| packet.signal != signal) {
        capture.timed.push(TimedPacket { signal, kind: TimedKind::Payload });
    }
    written
}

/// Makes host writes into host-visible device memory visible to the agent before a header that
/// may consume them: a store fence, then 1 to the HDP's `HDP_MEM_FLUSH_CNTL` and a read back (the
/// read completes the posted write), as IREE's driver and ROCr's runtime do. Only when a host
/// write came since the last flush: two loads otherwise.
#[inline]
fn publish_host_writes(link: &DeviceLink) {
    use std::sync::atomic::{Ordering, fence};
    let Some(host_writes) = &link.host_writes else { return };
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

/// Stores row `row`'s header words in order, from what [`write_row`] left in its columns: the
/// wait barriers', then the payload's (its one packet, a program leg's, or, when the epoch
/// failed at publication, the barriers that pass in its place). A timed payload sits between its
/// extra barriers (`CaptureState::payload_packets`): a program leg's lead barrier first, and
/// the trailing barrier carrying the epoch last. The processor may start on the first while later
/// ones are still stores away, which is fine: every body is written. The pass rings the doorbell.
#[inline(always)]
fn publish_row_headers<S: CrossQueueStrategy, const KIND: usize>(queue: &Publication<'_>, row: u64) {
    let ring = queue.handles.ring;
    let slot = queue.rows.slot(row);
    let plan = &queue.rows.columns.reservation[slot];
    let epoch_slot = queue.epochs.slot(plan.epoch);
    let wait_headers = plan.wait_packets;
    let first = plan.first_packet;
    let last = first + plan.packets - 1;
    let (wait_header, wait_setup) = S::WAIT_HEADER;
    for id in first..first + wait_headers {
        // SAFETY (every publish below): the bodies of the row's reserved packets are written.
        unsafe { ring.publish(id, wait_header, wait_setup) };
    }
    let mut id = first + wait_headers;
    if queue.epochs.failure[epoch_slot].is_some() {
        for id in id..=last {
            // SAFETY: as above (barriers that pass).
            unsafe { ring.publish(id, PAYLOAD_BARRIER_HEADER, 0) };
        }
        return;
    }
    let timed = queue.capture.flags().times_packets();
    match (KIND, queue.rows.columns.payload[slot]) {
        // SAFETY: as above.
        (Payload::BARRIER, _) => unsafe { ring.publish(id, PAYLOAD_BARRIER_HEADER, 0) },
        // SAFETY: as above.
        (Payload::DISPATCH, Payload::Dispatch(template)) => unsafe {
            ring.publish(id, DISPATCH_HEADER, template.dimensions)
        },
        (Payload::EXECUTE, _) => {
            if timed {
                // SAFETY: as above (the leg's lead barrier).
                unsafe { ring.publish(id, PAYLOAD_BARRIER_HEADER, 0) };
                id += 1;
            }
            for (offset, &word) in queue.rows.columns.program[slot].headers.iter().enumerate() {
                if word != block_processor::HEADER_LEFT_TO_DEVICE {
                    // SAFETY: as above.
                    unsafe { ring.publish(id + offset as u64, PacketHeader(word as u16), (word >> 16) as u16) };
                }
            }
        }
        _ => unreachable!("publication groups rows by their payload's kind"),
    }
    if timed {
        // SAFETY: as above; the last reserved packet.
        unsafe { ring.publish(last, PAYLOAD_BARRIER_HEADER, 0) };
    }
}

/// Fills the bodies of `count` reserved packets from `first` with BARRIER_AND packets that have
/// no dependencies, the last carrying `completion` ([`publish_row_headers`] publishes them).
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
}

/// Moves the published row's signals into its epoch's row, which records the row's sequence.
// Forced inline (about 20 instructions a row); its capture part stays out of line.
#[inline(always)]
fn record_epoch(queue: &mut Publication<'_>, row: u64, failure: Option<u32>) {
    let slot = queue.rows.slot(row);
    let plan = queue.rows.columns.reservation[slot];
    let program = queue.rows.columns.payload[slot].kind() == Payload::EXECUTE;
    let epoch = plan.epoch;
    // A program's earlier legs signal nothing: the execution's signals stay with it until
    // its final leg.
    let final_leg = !program || queue.rows.columns.leg[slot].end == LegEnd::Return || failure.is_some();
    if program && failure.is_none() {
        let columns = &mut queue.rows.columns;
        block_processor::advance(&mut columns.program[slot], &columns.leg[slot]);
    }
    let epochs = &mut queue.epochs;
    let epoch_slot = epochs.slot(epoch);
    epochs.row[epoch_slot] = row;
    epochs.kernarg_end[epoch_slot] = plan.kernarg_end;
    epochs.failure[epoch_slot] = failure;
    epochs.device_status[epoch_slot] = if program { queue.rows.columns.program[slot].device_status } else { 0 };
    let signals = if final_leg { queue.rows.row_signals(row) } else { &[] };
    epochs.signals[epoch_slot] = epochs.signal_arena.extend(signals);
    if queue.capture.flags().any() {
        capture_epoch(&mut queue.reborrow(), row, final_leg);
    }
}

/// Copies what the profile records of the submission into its epoch's row (only while a capture
/// is on). The waits' tiers are read back from the epoch's device waits: a wait admission kept
/// names its producer (this queue, a barrier, or covered); one it dropped was satisfied, or, if
/// the row parked, became satisfied while it waited.
#[cold]
#[inline(never)]
fn capture_epoch(queue: &mut Publication<'_>, row: u64, final_leg: bool) {
    let Publication { rows, epochs, capture: state, handles: QueueHandles { index, .. }, .. } = queue;
    let slot = rows.slot(row);
    let columns = &rows.columns;
    let plan = &columns.reservation[slot];
    let epoch_slot = epochs.slot(plan.epoch);
    let device_waits = epochs.wait_arena.get(epochs.device_waits[epoch_slot]);
    let capture = &mut epochs.capture[epoch_slot];
    capture.clear();
    capture.captured = true;
    capture.operation = columns.operation[slot];
    capture.submit_entry_ns = columns.entry_ns[slot];
    capture.published_ns = 0;
    capture.packets = plan.packets as u32;
    capture.kernarg_bytes = if columns.payload[slot] == Payload::Execute {
        columns.leg[slot].kernarg_bytes
    } else {
        columns.kernargs[slot].ring_bytes()
    };
    for wait in rows.waits.get(columns.waits[slot]) {
        let kept = device_waits.iter().find(|device| device.semaphore == wait.semaphore);
        let tier = match kept {
            Some(device) if device.producer.queue == *index => WaitTier::SameQueue,
            Some(device) if device.barrier => {
                WaitTier::DeviceBarrier { queue: device.producer.queue, epoch: device.producer.epoch }
            }
            Some(_) => WaitTier::Covered,
            None if columns.parked[slot] => WaitTier::Deferred,
            None => WaitTier::Satisfied,
        };
        capture.waits.push(CapturedWait { semaphore: wait.semaphore, value: wait.value, tier });
    }
    if final_leg {
        capture.signals.extend_from_slice(rows.signals.get(columns.signals[slot]));
    }
    // A swap, not a copy: `clear` emptied the row's vector, which becomes the next
    // publication's, so once both have grown to a submission's timed packets nothing allocates.
    core::mem::swap(&mut capture.timed, &mut state.timed);
}

/// Publication for the range of rows the pass admitted: every row's bodies (and its epoch's
/// columns), then one HDP flush if the host wrote device memory, then every header in order, then
/// one doorbell store. A row whose program continues stays at the front of the pending rows (it
/// is the range's last: admission stops after it); every other published row leaves them.
#[inline(always)]
pub fn publish_admitted<S: CrossQueueStrategy>(queue: &mut Publication<'_>) {
    let (from, mut end) = (queue.rows.pass.admitted_from, queue.rows.pass.admitted_end);
    if from == end {
        return;
    }
    // One row that is not a program (an immediate call's, the common case): its row functions
    // without the loops, the runs split by kind, or the kind matched twice.
    if end - from == 1 {
        let written = match queue.rows.payload_kind(from) {
            Payload::BARRIER => Some(publish_row::<S, { Payload::BARRIER }>(queue, from)),
            Payload::DISPATCH => Some(publish_row::<S, { Payload::DISPATCH }>(queue, from)),
            _ => None,
        };
        if let Some(written) = written {
            if let Err(fault) = written {
                queue.rows.pass.fault.get_or_insert(fault);
            }
            ring_published(queue, queue.rows.slot(from), 1);
            return;
        }
    }
    let first = first_run(queue.rows, from..end);
    let mut start = from;
    while start < end {
        let (kind, run) = run_at(queue.rows, start..end, &first);
        start = run.end;
        if let Err(fault) = write_bodies::<S>(queue, kind, run) {
            queue.rows.pass.fault.get_or_insert(fault);
        }
    }
    announce_epochs::<S>(queue, from..end);
    publish_headers::<S>(queue, from..end, &first);
    let rows = &queue.rows;
    let slot = rows.slot(end - 1);
    if rows.columns.payload[slot] == Payload::Execute && rows.columns.program[slot].cursor != Cursor::Done {
        end -= 1; // the execution's next leg runs in a later pass, from the same row
    }
    let rows_published = end - from;
    ring_published(queue, slot, rows_published);
}

/// After publication: the published rows (`count` of them, from the front) leave the pending
/// ones, and the doorbell rings for the packets up to the last of row slot `last_slot`'s.
#[inline(always)]
fn ring_published(queue: &mut Publication<'_>, last_slot: usize, count: u64) {
    let rows = &mut queue.rows;
    let plan = rows.columns.reservation[last_slot];
    (0..count).for_each(|_| rows.pop_front());
    queue.handles.ring.ring_doorbell(plan.first_packet + plan.packets - 1);
    queue.rows.release_spans();
}
