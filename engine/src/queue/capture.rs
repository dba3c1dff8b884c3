//! A queue's records in a profile capture: the hooks the pass driver calls under the queue lock,
//! stamping the submissions it stages ([`entry_stamp`], [`note_pass`]) and turning drained epochs
//! into records ([`harvest`]). Joining and leaving a capture is the capture observer's
//! (`capture_observer.rs`).
//!
//! Publication copies each captured submission's facts into its epoch row
//! (`aqueduct_components::capture::EpochCapture`); this file stamps the pass's publication time
//! and, when the epoch is drained, reads the device timestamps of its timed packets and hands
//! the records to the queue's buffer. All of it runs under the queue lock, where the stages
//! already are.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use aqueduct_components::capture::{EpochCapture, TimedKind, WaitTier};
use aqueduct_components::directory::QueueEndpoint;
use aqueduct_hsa::sys::hsa_signal_t;
use aqueduct_profile::{CommandRef, DeviceQueueEvent, DispatchEvent, QueueEvent, Record, Signal, Wait, WaitResolution};
use aqueduct_systems::QueueState;

use crate::device::DeviceShared;
use crate::profile::{ProfileModes, QueueCapture, host_now_ns};

/// The profile capture the queue is part of, if any: held in the state's capture part, opaque
/// to the stages.
#[inline]
pub(super) fn capture_of(state: &QueueState) -> Option<Arc<QueueCapture>> {
    state.capture.sink.clone().and_then(|sink| sink.downcast().ok())
}

/// Host clock for a submission's entry while the queue captures, else 0.
#[inline]
pub(super) fn entry_stamp(endpoint: &QueueEndpoint) -> u64 {
    if endpoint.capturing.load(Ordering::Relaxed) { host_now_ns() } else { 0 }
}

/// After a pass that published the epochs after `submitted_before`: stamps their
/// publication time and raises the occupancy marks.
pub(super) fn note_pass(capture: &QueueCapture, queue: &mut QueueState, submitted_before: u64) {
    let now = host_now_ns();
    for epoch in submitted_before + 1..=queue.epochs.submitted {
        let slot = queue.epochs.slot(epoch);
        queue.epochs.capture[slot].published_ns = now;
    }
    let ring = queue.handles.ring.write_index_now().wrapping_sub(queue.known_read_index);
    QueueCapture::raise(&capture.ring_high_water, ring);
    QueueCapture::raise(&capture.kernarg_high_water, queue.kernargs.head() - queue.kernargs.reclaimed);
    QueueCapture::raise(&capture.epochs_high_water, queue.epochs.submitted - queue.epochs.drained);
    capture.kernarg_bytes.store(queue.kernargs.head(), Ordering::Relaxed);
    #[cfg(feature = "tracy")]
    if let Some(tracy) = &capture.tracy {
        let parked = if queue.rows.parked { queue.rows.pending_len() } else { 0 };
        tracy.plot(
            queue.epochs.submitted - queue.epochs.drained,
            queue.kernargs.head() - queue.kernargs.reclaimed,
            parked,
        );
    }
}

/// Makes the records of the epochs after `drained_before`, up to the queue's drained epoch,
/// and gives their timing signals back. `device_ran`: the device completed them (not a
/// failed queue's force-retired epochs, whose timestamps were never written).
pub(super) fn harvest(
    device: &DeviceShared,
    agent: usize,
    capture: &QueueCapture,
    queue: &mut QueueState,
    drained_before: u64,
    device_ran: bool,
) {
    let seen = host_now_ns();
    for epoch in drained_before + 1..=queue.epochs.drained {
        let slot = queue.epochs.slot(epoch);
        let facts = &mut queue.epochs.capture[slot];
        if !facts.captured {
            continue;
        }
        if device_ran {
            queue.capture.untimed += resolve_device_slots(facts);
        }
        record_epoch(device, agent, capture, epoch, facts, Some(seen), device_ran);
        for timed in &facts.timed {
            // SAFETY: a timing signal this capture created; only the device and this thread use it.
            unsafe { (device.hsa.api().hsa_signal_store_relaxed)(hsa_signal_t { handle: timed.signal }, 1) };
            queue.capture.timing_signals.push(timed.signal);
        }
        facts.clear();
    }
    let untimed = std::mem::take(&mut queue.capture.untimed);
    if untimed > 0 {
        capture.untimed.fetch_add(untimed, Ordering::Relaxed);
    }
}

/// Hands the records of one epoch to the queue's buffer (`agent`: the queue's agent on
/// `device`).
pub(super) fn record_epoch(
    device: &DeviceShared,
    agent: usize,
    capture: &QueueCapture,
    epoch: u64,
    facts: &EpochCapture,
    completion_seen_ns: Option<u64>,
    device_ran: bool,
) {
    let queue = capture.queue;
    let modes = capture.modes;
    let agent = device.agents[agent].info.agent;
    let mut span: Option<(u64, u64)> = None;
    #[cfg(feature = "tracy")]
    let mut zones: Vec<(std::sync::Arc<str>, u64, u64)> = Vec::new();
    for timed in &facts.timed {
        if !device_ran {
            break;
        }
        if matches!(timed.kind, TimedKind::Unused | TimedKind::DeviceSlot { .. }) {
            continue; // no packet completed on it
        }
        let Ok((start, end)) = device.hsa.dispatch_time(agent, hsa_signal_t { handle: timed.signal }) else {
            continue;
        };
        let (begin_ns, end_ns) = (capture.clock.to_host_ns(start), capture.clock.to_host_ns(end));
        span = Some(span.map_or((begin_ns, end_ns), |(begin, end)| (begin.min(begin_ns), end.max(end_ns))));
        let TimedKind::Dispatch { kernel_object, grid, workgroup, command } = timed.kind else { continue };
        let dispatch_events = modes.contains(ProfileModes::DISPATCH_EVENTS);
        #[cfg(feature = "tracy")]
        let zoned = capture.tracy.is_some();
        #[cfg(not(feature = "tracy"))]
        let zoned = false;
        if !dispatch_events && !zoned {
            continue;
        }
        // A kernel object no registered executable names (none should) is named by address.
        let (symbol, executable) = device.executables.kernel(kernel_object).map_or_else(
            || (std::sync::Arc::from(format!("{kernel_object:#x}")), 0),
            |name| (name.symbol, name.executable),
        );
        #[cfg(feature = "tracy")]
        if zoned {
            zones.push((symbol.clone(), begin_ns, end_ns));
        }
        if dispatch_events {
            capture.push(Record::Dispatch(DispatchEvent {
                queue,
                epoch,
                kernel: symbol.to_string(),
                executable,
                grid,
                workgroup: workgroup.map(u32::from),
                command: command.map(|(command_buffer, command_index)| CommandRef { command_buffer, command_index }),
                begin_ns,
                end_ns,
            }));
        }
    }
    #[cfg(feature = "tracy")]
    if let (Some(tracy), Some((begin_ns, end_ns))) = (&capture.tracy, span) {
        use crate::profile::tracy::Zone;
        // A lone dispatch is the submission; several (a command buffer) nest inside it.
        let name = match zones.as_slice() {
            [(kernel, _, _)] => kernel,
            _ => facts.operation.name(),
        };
        let nested = if zones.len() > 1 {
            zones.iter().map(|(name, begin_ns, end_ns)| Zone { name, begin_ns: *begin_ns, end_ns: *end_ns }).collect()
        } else {
            Vec::new()
        };
        tracy.submission(Zone { name, begin_ns, end_ns }, nested);
    }
    if modes.contains(ProfileModes::DEVICE_QUEUE_EVENTS)
        && let Some((begin_ns, end_ns)) = span
    {
        capture.push(Record::DeviceQueueEvent(DeviceQueueEvent { queue, epoch, begin_ns, end_ns }));
    }
    if modes.contains(ProfileModes::QUEUE_EVENTS) {
        capture.push(Record::QueueEvent(QueueEvent {
            queue,
            operation: facts.operation,
            epoch,
            waits: facts
                .waits
                .iter()
                .map(|wait| Wait {
                    semaphore: u64::from(wait.semaphore),
                    value: wait.value,
                    resolution: resolution(wait.tier),
                })
                .collect(),
            signals: facts
                .signals
                .iter()
                .map(|signal| Signal { semaphore: u64::from(signal.semaphore), value: signal.value })
                .collect(),
            packets: facts.packets,
            kernarg_bytes: facts.kernarg_bytes,
            submit_entry_ns: facts.submit_entry_ns,
            published_ns: facts.published_ns,
            completion_seen_ns,
        }));
    }
}

fn resolution(tier: WaitTier) -> WaitResolution {
    match tier {
        WaitTier::Satisfied => WaitResolution::Satisfied,
        WaitTier::SameQueue => WaitResolution::SameQueue,
        WaitTier::Covered => WaitResolution::CoveredByFrontier,
        WaitTier::DeviceBarrier { queue, epoch } => {
            WaitResolution::DeviceBarrier { producer_queue: u32::from(queue), producer_epoch: epoch }
        }
        WaitTier::Deferred => WaitResolution::Deferred,
    }
}

/// Turns a device-processed execution's timing slots into the dispatches the block processor
/// timed with them (what it logged: a packet index of the device program, whose record names
/// the kernel, grid, workgroup and recording command), and the slots it never used into
/// `Unused`; returns the dispatches it had no signal left for. Called once the epoch retired.
fn resolve_device_slots(facts: &mut EpochCapture) -> u64 {
    use aqueduct_abi::device_program::{DevicePacket, DeviceProgramHeader, TimingTable};
    let mut untimed = 0;
    let mut tables = Vec::new();
    for timed in &mut facts.timed {
        let TimedKind::DeviceSlot { table, index, program, program_id } = timed.kind else { continue };
        // SAFETY: the table is in the execution's kernarg span, which stays allocated until its
        // epoch is reclaimed, after this harvest; the processor's writes were released before
        // the execution's done signal completed, which the retirement acquired. The device
        // program lives until the execution settles, which is later still.
        let (head, header) = unsafe {
            ((table as *const TimingTable).read_unaligned(), (program as *const DeviceProgramHeader).read_unaligned())
        };
        if !tables.contains(&table) {
            tables.push(table);
            untimed += u64::from(head.untimed);
        }
        if index >= head.used.min(head.capacity) {
            timed.kind = TimedKind::Unused;
            continue;
        }
        // SAFETY: as above; `index` is below the table's capacity.
        let packet_index = unsafe {
            ((table + 16 + 8 * u64::from(head.capacity) + 4 * u64::from(index)) as *const u32).read_unaligned()
        };
        if packet_index >= header.packet_count {
            timed.kind = TimedKind::Unused;
            continue;
        }
        // SAFETY: as above; the index is one of the program's packets.
        let packet = unsafe {
            ((program + u64::from(header.packets_offset) + 128 * u64::from(packet_index)) as *const DevicePacket)
                .read_unaligned()
        };
        let body: aqueduct_abi::KernelDispatchPacket = bytemuck::cast(packet.body);
        timed.kind = TimedKind::Dispatch {
            kernel_object: body.kernel_object,
            grid: [body.grid_size_x, body.grid_size_y, body.grid_size_z],
            workgroup: [body.workgroup_size_x, body.workgroup_size_y, body.workgroup_size_z],
            command: Some((program_id, packet.command)),
        };
    }
    untimed
}
