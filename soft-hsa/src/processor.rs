//! The packet processor: one thread per soft queue, behaving like a GPU command processor.
//!
//! It consumes packets from `read_dispatch_id` up to the last doorbell value and stops at an
//! INVALID header. It copies each packet out, marks the slot INVALID and advances the read index
//! (the slot is free once fetched, as on hardware), then honours the barrier bit, executes kernel
//! dispatches and barrier packets, writes profiling timestamps and decrements the completion
//! signal with release ordering. On an error it reports through the queue callback and
//! processes nothing more, as a faulted hardware queue would.
//!
//! **Contract.** It runs on the queue's own thread and holds no runtime-wide lock across a
//! packet's execution: its kernel comes from the thread's `KernelLease`, and memory checks take the
//! allocation map's read shard per lookup. It takes the queue's `faults` and `memory_fault` mutexes
//! and the runtime's `event_handlers` one at a time. Once a packet is fetched its ring slot is the
//! producer's again. A failure records the detail and raises the queue error (or the memory-fault
//! event) once; the packets after it are never processed, and their completion signals never
//! change.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aqueduct_abi::packet::amd_format;
use aqueduct_abi::{
    AmdQueue, AqlPacket, KernelDispatchPacket, PacketHeader, PacketType, SignalCondition, WorkgroupContext,
};
use rayon::prelude::*;

use super::config::{ExecutionMode, KernelExecution};
use super::executable::{HostBinding, HostBuildState, KernelLease, LoadedKernel, steady_counter};
use super::queue::{DOORBELL_NEVER_RUNG, Fault, SoftQueue};
use super::runtime::Runtime;
use super::signals::{self, SignalSlot};
use super::workgroups::{PacketResult, check_access, check_beyond_allocations, for_each_workgroup};
use aqueduct_hsa::sys::{hsa_status_t, status};

/// Longest run of barrier-free dispatches that relaxed or concurrent mode overlaps (concurrent
/// mode also stops at the agent's compute units).
const MAX_GROUP: usize = 64;

/// Starts `queue`'s processor thread and hands it to the queue, which stops and joins it in
/// `shut_down`.
pub(crate) fn start(queue: &Arc<SoftQueue>, runtime: Arc<Runtime>) -> Result<(), hsa_status_t> {
    let worker = queue.clone();
    let handle = std::thread::Builder::new()
        .name(format!("soft-cp-{}", queue.id()))
        .spawn(move || run(&worker, &runtime))
        .map_err(|_| status::ERROR_OUT_OF_RESOURCES)?;
    queue.attach_processor(handle);
    Ok(())
}

fn run(queue: &SoftQueue, runtime: &Runtime) {
    queue.doorbell_signal.register(None);
    // Orders the registration before the first doorbell read: otherwise a doorbell rung while
    // this thread starts can be missed both ways (the read sees the old doorbell, the ringer sees
    // no waiter) and wait out a park timeout (found by loom-models/tests/soft_signals.rs).
    super::waiters::registered();
    let mask = u64::from(queue.size - 1);
    // SAFETY: the queue struct outlives this thread (`shut_down` joins it before drop).
    let read_index = unsafe { AmdQueue::read_dispatch_id_atomic(queue.amd_ptr()) };
    let mut read = read_index.load(Ordering::Acquire);
    let mut rung_until = 0u64;
    let mut backoff = Backoff::default();
    let mut group: Vec<(u64, AqlPacket)> = Vec::with_capacity(MAX_GROUP);
    // Each dispatch of a concurrent group occupies at least one compute unit.
    let group_limit = (runtime.compute_units(queue.agent_index) as usize).clamp(1, MAX_GROUP);
    while !queue.stop.load(Ordering::Acquire) {
        let faulted = queue.faulted.load(Ordering::Acquire);
        let doorbell = queue.doorbell_value();
        if doorbell != DOORBELL_NEVER_RUNG {
            rung_until = rung_until.max(doorbell.saturating_add(1));
        }
        if faulted || read >= rung_until || header_at(queue, read & mask).packet_type() == Some(PacketType::Invalid) {
            backoff.idle();
            continue;
        }
        backoff.reset();
        collect_group(queue, read, rung_until, mask, group_limit, &mut group);
        // Like a hardware CP, release the slots once the packets are fetched (copied out), so a
        // completed packet's slot is always already free when its signal changes.
        for (id, _) in &group {
            header_word(queue, id & mask).store(u32::from(PacketHeader::INVALID.0), Ordering::Release);
        }
        read += group.len() as u64;
        read_index.store(read, Ordering::Release);
        if let Err((_, status, detail)) = execute_group(queue, runtime, &group) {
            let memory_fault = queue.memory_fault.lock().unwrap_or_else(|poison| poison.into_inner()).take();
            match memory_fault {
                Some((address, reason)) => {
                    let agent = runtime.handle(super::runtime::Tag::Agent, queue.agent_index as u64);
                    let handlers = runtime.event_handlers.lock().unwrap_or_else(|poison| poison.into_inner()).clone();
                    queue.raise_memory_fault(&handlers, agent, address, reason, detail);
                }
                None => queue.raise_error(status, detail),
            }
        }
    }
    // Before the thread ends: a registration left behind kept this thread's handle in the
    // doorbell slot's waiters for good, one more at every reuse of the slot (48 bytes a queue,
    // and every later ring of that doorbell unparked the dead threads).
    queue.doorbell_signal.unregister();
}

fn header_word(queue: &SoftQueue, slot: u64) -> &AtomicU32 {
    // SAFETY: `slot` is masked into the ring; each slot starts 64-byte aligned, so its first 4
    // bytes are a valid AtomicU32 for the ring's lifetime (the ring outlives this thread).
    unsafe { AtomicU32::from_ptr(queue.ring_base().add(slot as usize * 64).cast()) }
}

fn header_at(queue: &SoftQueue, slot: u64) -> PacketHeader {
    PacketHeader(header_word(queue, slot).load(Ordering::Acquire) as u16)
}

fn read_packet(queue: &SoftQueue, slot: u64) -> AqlPacket {
    // SAFETY: the header was observed with acquire, so the producer's body writes are visible;
    // the slot is inside the ring and the producer does not touch it until the read index passes.
    unsafe { queue.ring_base().add(slot as usize * 64).cast::<AqlPacket>().read_volatile() }
}

/// Takes the next packet, and in relaxed or concurrent mode the barrier-free dispatches right
/// behind it that were published (an INVALID header ends the group: a slot reserved but not yet
/// published is never read), up to `limit`.
fn collect_group(
    queue: &SoftQueue,
    read: u64,
    rung_until: u64,
    mask: u64,
    limit: usize,
    group: &mut Vec<(u64, AqlPacket)>,
) {
    group.clear();
    let first = read_packet(queue, read & mask);
    let overlap = matches!(queue.mode(), ExecutionMode::Relaxed | ExecutionMode::Concurrent)
        && first.header().packet_type() == Some(PacketType::KernelDispatch);
    group.push((read, first));
    if !overlap {
        return;
    }
    let mut id = read + 1;
    while id < rung_until && group.len() < limit {
        let header = header_at(queue, id & mask);
        if header.packet_type() != Some(PacketType::KernelDispatch) || header.barrier() {
            break;
        }
        group.push((id, read_packet(queue, id & mask)));
        id += 1;
    }
}

/// Runs a group. In concurrent mode its members run at the same time on the worker pool, each
/// retiring when it finishes; in relaxed mode they run and retire in reverse order. Both are
/// orders the AQL model allows for packets without the barrier bit. The first failure by
/// position is the group's.
fn execute_group(
    queue: &SoftQueue,
    runtime: &Runtime,
    group: &[(u64, AqlPacket)],
) -> Result<(), (usize, hsa_status_t, String)> {
    if group.len() == 1 {
        let (id, packet) = &group[0];
        return execute_and_complete(queue, runtime, *id, packet).map_err(|(status, detail)| (0, status, detail));
    }
    if queue.mode() == ExecutionMode::Concurrent {
        let failures: Vec<_> = group
            .par_iter()
            .enumerate()
            .filter_map(|(position, (id, packet))| {
                abandon_if_stopped(queue, *id)
                    .and_then(|()| execute_and_complete(queue, runtime, *id, packet))
                    .err()
                    .map(|(status, detail)| (position, status, detail))
            })
            .collect();
        return failures.into_iter().min_by_key(|(position, ..)| *position).map_or(Ok(()), Err);
    }
    for (position, (id, packet)) in group.iter().enumerate().rev() {
        abandon_if_stopped(queue, *id).map_err(|(status, detail)| (position, status, detail))?;
        execute_and_complete(queue, runtime, *id, packet).map_err(|(status, detail)| (position, status, detail))?;
    }
    Ok(())
}

fn execute_and_complete(queue: &SoftQueue, runtime: &Runtime, id: u64, packet: &AqlPacket) -> PacketResult {
    let completion = match packet.completion_signal() {
        0 => None,
        handle => Some(signals::slot(handle).ok_or_else(|| {
            (status::ERROR_INVALID_SIGNAL, format!("packet {id}: completion signal {handle:#x} is not a live signal"))
        })?),
    };
    let start = super::clock::device_ticks();
    apply_fault(queue, id)?;
    execute(queue, runtime, id, packet)?;
    if let Some(signal) = completion {
        if queue.profiling_enabled() {
            signal.write_timestamps(start, super::clock::device_ticks());
        }
        signal.update(|value| {
            value.fetch_sub(1, Ordering::AcqRel);
        });
    }
    Ok(())
}

fn apply_fault(queue: &SoftQueue, id: u64) -> PacketResult {
    if !queue.has_faults.load(Ordering::Acquire) {
        return Ok(());
    }
    let fault = queue.faults.lock().unwrap_or_else(|poison| poison.into_inner()).remove(&id);
    match fault {
        None => Ok(()),
        Some(Fault::KernelFault { status }) => Err((status, format!("injected kernel fault at packet {id}"))),
        Some(Fault::MemoryFault { address }) => {
            *queue.memory_fault.lock().unwrap_or_else(|poison| poison.into_inner()) =
                Some((address, aqueduct_hsa::sys::amd_event::FAULT_PAGE_NOT_PRESENT));
            Err((status::ERROR_MEMORY_FAULT, format!("injected memory fault at {address:#x}, packet {id}")))
        }
        Some(Fault::Stall) => {
            let releases = queue.stall_releases.load(Ordering::Acquire);
            while queue.stall_releases.load(Ordering::Acquire) == releases && !queue.stop.load(Ordering::Acquire) {
                std::thread::park_timeout(Duration::from_millis(1));
            }
            abandon_if_stopped(queue, id)
        }
        Some(Fault::Slow(duration)) => {
            let until = Instant::now() + duration;
            while Instant::now() < until && !queue.stop.load(Ordering::Acquire) {
                std::thread::park_timeout((until - Instant::now()).min(Duration::from_millis(1)));
            }
            abandon_if_stopped(queue, id)
        }
    }
}

/// A packet interrupted by queue destruction never completes, as on a torn-down hardware queue.
fn abandon_if_stopped(queue: &SoftQueue, id: u64) -> PacketResult {
    if queue.stop.load(Ordering::Acquire) {
        return Err((status::ERROR_INVALID_QUEUE, format!("packet {id} abandoned: queue destroyed")));
    }
    Ok(())
}

fn execute(queue: &SoftQueue, runtime: &Runtime, id: u64, packet: &AqlPacket) -> PacketResult {
    let header = packet.header();
    if !header.is_well_formed() {
        return Err((status::ERROR_INVALID_PACKET_FORMAT, format!("packet {id}: malformed header {:#06x}", header.0)));
    }
    match header.packet_type() {
        Some(PacketType::KernelDispatch) => dispatch(queue, runtime, id, packet.as_dispatch()),
        Some(PacketType::BarrierAnd) => {
            let dependencies = live_dependencies(id, &packet.as_barrier_and().dep_signal)?;
            wait_dependencies(queue, runtime, &dependencies, |values| values.iter().all(|value| *value == 0))
        }
        Some(PacketType::BarrierOr) => {
            let dependencies = live_dependencies(id, &packet.as_barrier_or().dep_signal)?;
            if dependencies.is_empty() {
                return Ok(());
            }
            wait_dependencies(queue, runtime, &dependencies, |values| values.contains(&0))
        }
        Some(PacketType::VendorSpecific) => barrier_value(queue, runtime, id, packet),
        Some(PacketType::AgentDispatch) => Err((
            status::ERROR_INVALID_PACKET_FORMAT,
            format!("packet {id}: agent dispatch packets are not accepted by a GPU agent's queue"),
        )),
        Some(PacketType::Invalid) | None => Err((
            status::ERROR_INVALID_PACKET_FORMAT,
            format!("packet {id}: unknown packet type {}", header.packet_type_bits()),
        )),
    }
}

/// The command processor reads the kernarg segment: it must be memory the queue's agent may
/// access (ROCr maps pool memory for the agents `hsa_amd_agents_allow_access` names, and system
/// pools for no GPU before that). Otherwise the packet raises a GPU memory fault. Returns the
/// segment's host address (a locked range's agent address translated; an empty segment's own).
fn check_kernargs(
    queue: &SoftQueue,
    runtime: &Runtime,
    id: u64,
    packet: &KernelDispatchPacket,
    kernel: &LoadedKernel,
) -> Result<u64, (hsa_status_t, String)> {
    let length = u64::from(kernel.metadata.kernarg_segment_size);
    if length == 0 {
        return Ok(packet.kernarg_address);
    }
    check_access(queue, runtime, packet.kernarg_address, length).map_err(|fault| {
        (status::ERROR_MEMORY_FAULT, format!("packet {id}: kernarg segment of `{}`: {fault}", kernel.symbol))
    })
}

fn live_dependencies(id: u64, handles: &[u64; 5]) -> Result<Vec<&'static SignalSlot>, (hsa_status_t, String)> {
    handles
        .iter()
        .filter(|handle| **handle != 0)
        .map(|handle| {
            signals::slot(*handle).ok_or_else(|| {
                (
                    status::ERROR_INVALID_SIGNAL,
                    format!("packet {id}: dependency signal {handle:#x} is not a live signal"),
                )
            })
        })
        .collect()
}

fn wait_dependencies(
    queue: &SoftQueue,
    runtime: &Runtime,
    slots: &[&SignalSlot],
    done: impl Fn(&[i64]) -> bool,
) -> PacketResult {
    let mut values: Vec<i64> = slots.iter().map(|slot| slot.value().load(Ordering::Acquire)).collect();
    let stopped = || queue.stop.load(Ordering::Acquire);
    loop {
        if done(&values) {
            return Ok(());
        }
        let changed = signals::wait_until(
            slots,
            None,
            |index, value| {
                values[index] = value;
                done(&values)
            },
            Some(Instant::now() + Duration::from_millis(50)),
            runtime.config.processor_spin,
            &stopped,
        );
        if changed.is_some() {
            return Ok(());
        }
        if stopped() {
            // Abandoned by queue destruction: leave the packet incomplete, like a torn-down CP.
            return Err((status::ERROR_INVALID_QUEUE, "queue destroyed while a barrier was waiting".into()));
        }
    }
}

fn barrier_value(queue: &SoftQueue, runtime: &Runtime, id: u64, packet: &AqlPacket) -> PacketResult {
    let barrier = packet.as_barrier_value();
    if barrier.header.amd_format != amd_format::BARRIER_VALUE {
        return Err((
            status::ERROR_INVALID_PACKET_FORMAT,
            format!(
                "packet {id}: AMD vendor packet format {} is not supported by the soft runtime",
                barrier.header.amd_format
            ),
        ));
    }
    let condition = SignalCondition::from_bits(barrier.cond).ok_or_else(|| {
        (status::ERROR_INVALID_PACKET_FORMAT, format!("packet {id}: BARRIER_VALUE condition {}", barrier.cond))
    })?;
    let signal = signals::slot(barrier.signal).ok_or_else(|| {
        (status::ERROR_INVALID_SIGNAL, format!("packet {id}: BARRIER_VALUE signal {:#x} is not live", barrier.signal))
    })?;
    let (mask, value) = (barrier.mask, barrier.value);
    wait_dependencies(queue, runtime, &[signal], |values| condition.holds(values[0] & mask, value))
}

/// The checks the command processor makes before it launches a dispatch, in the order ROCr's
/// queue-error handler reports them, each with the status ROCr gives its error bit
/// (`AqlQueue::DynamicScratchHandler` in `amd_aql_queue.cpp`; docs/rocr-facts.md, section 16):
/// dimensions (bit 2: INCOMPATIBLE_ARGUMENTS), group memory (bit 4: INVALID_ALLOCATION), the code
/// (bit 8, null or not a kernel: INVALID_CODE_OBJECT), then the workgroup against the agent's
/// maximum (bit 64: INVALID_ARGUMENT).
fn check_dispatch(id: u64, packet: &KernelDispatchPacket) -> PacketResult {
    // The whole setup word: its bits past the two of the dimensions are reserved, and the CP
    // reports a setup of 4 as invalid dimensions.
    let dimensions = packet.setup;
    if !(1..=3).contains(&dimensions) {
        return Err((
            status::ERROR_INCOMPATIBLE_ARGUMENTS,
            format!("packet {id}: dispatch setup says {dimensions} dimensions (1 to 3)"),
        ));
    }
    // The grid in all against the agent's `HSA_AGENT_INFO_GRID_MAX_SIZE` (0xFFFFFFFF work-items
    // in every published rocminfo dump, `entry.rs`; each dimension is a u32 field, so within
    // `GRID_MAX_DIM` already), with the CP's dimension error: a larger grid would otherwise run
    // for hours or, its workgroup count overflowing, not at all.
    let items = packet.grid().iter().map(|&size| u128::from(size)).product::<u128>();
    if items > u128::from(GRID_MAX_SIZE) {
        return Err((
            status::ERROR_INCOMPATIBLE_ARGUMENTS,
            format!("packet {id}: a grid of {items} work-items {:?}, past the agent's {GRID_MAX_SIZE}", packet.grid()),
        ));
    }
    if u64::from(packet.group_segment_size) > super::memory::GROUP_BYTES {
        return Err((
            status::ERROR_INVALID_ALLOCATION,
            format!(
                "packet {id}: group segment of {} bytes, past the agent's {} bytes of group memory",
                packet.group_segment_size,
                super::memory::GROUP_BYTES
            ),
        ));
    }
    if packet.kernel_object == 0 {
        return Err((status::ERROR_INVALID_CODE_OBJECT, format!("packet {id}: kernel object is null")));
    }
    let workgroup = packet.workgroup();
    let items: u32 = workgroup.iter().map(|&size| u32::from(size)).product();
    if workgroup.iter().any(|&size| u32::from(size) > WORKGROUP_MAX_DIM) || items > WORKGROUP_MAX_SIZE {
        return Err((
            status::ERROR_INVALID_ARGUMENT,
            format!(
                "packet {id}: workgroup {workgroup:?} is past the agent's maximum ({WORKGROUP_MAX_DIM} per dimension, {WORKGROUP_MAX_SIZE} in all)"
            ),
        ));
    }
    Ok(())
}

/// The resources a dispatch of `kernel` asks for, against the agent's, before anything is
/// allocated or run, whichever way the kernel runs:
/// - the LDS, the packet's group segment or the descriptor's fixed size, whichever is larger
///   (the interpreter allocates that), within the agent's group memory, with the status of the
///   packet's own check (`check_dispatch`: ROCr's INVALID_ALLOCATION);
/// - a wave's scratch, the private segment per work-item (the packet's or the descriptor's)
///   times the wave's lanes, within what one wave can address ([`max_wave_scratch_bytes`]).
///   More is ROCr's OUT_OF_RESOURCES, its answer when it cannot give a dispatch scratch for even
///   one wave (`AqlQueue::DynamicQueueEventsHandler`; docs/rocr-facts.md, section 16).
///
/// The agent's ISA is looked up only for a dispatch that asks for scratch, which few do.
fn check_resources(
    id: u64,
    packet: &KernelDispatchPacket,
    kernel: &LoadedKernel,
    runtime: &Runtime,
    agent_index: usize,
) -> PacketResult {
    let descriptor = kernel.descriptor();
    let (group_fixed, private_fixed) = (descriptor.group_segment_fixed_size, descriptor.private_segment_fixed_size);
    let group = packet.group_segment_size.max(group_fixed);
    if u64::from(group) > super::memory::GROUP_BYTES {
        return Err((
            status::ERROR_INVALID_ALLOCATION,
            format!(
                "packet {id}: kernel `{}`: {group} bytes of group segment (packet {}, descriptor {group_fixed}), \
                 past the agent's {} bytes of group memory",
                kernel.symbol,
                packet.group_segment_size,
                super::memory::GROUP_BYTES
            ),
        ));
    }
    let private = packet.private_segment_size.max(private_fixed);
    if private == 0 {
        return Ok(());
    }
    let lanes: u64 = if descriptor.is_wave32() { 32 } else { 64 };
    let isa_name = runtime.gpu(agent_index).map_or("", |agent| agent.isa_name.as_str());
    let limit = max_wave_scratch_bytes(isa_name);
    if u64::from(private) * lanes > limit {
        return Err((
            status::ERROR_OUT_OF_RESOURCES,
            format!(
                "packet {id}: kernel `{}`: {private} bytes of private segment per work-item (packet {}, descriptor \
                 {private_fixed}); a wave of {lanes} lanes on {isa_name} has at most {limit} bytes of scratch, {} per work-item",
                kernel.symbol,
                packet.private_segment_size,
                limit / lanes
            ),
        ));
    }
    Ok(())
}

/// The most scratch one wave can have on an agent of `isa_name`, in bytes:
/// `COMPUTE_TMPRING_SIZE.WAVESIZE`, a count of granules, 13 bits of 1 KiB before gfx11, 15 bits
/// of 256 bytes on gfx11, 18 bits of 256 bytes on gfx12 (LLVM's
/// `GCNSubtarget::getMaxWaveScratchSize`, which refuses to compile a kernel whose stack needs
/// more). Past it a wave's scratch cannot be addressed.
fn max_wave_scratch_bytes(isa_name: &str) -> u64 {
    if isa_name.contains("gfx12") {
        256 * ((1 << 18) - 1)
    } else if isa_name.contains("gfx11") {
        256 * ((1 << 15) - 1)
    } else {
        1024 * ((1 << 13) - 1)
    }
}

/// The agent's workgroup limits (`HSA_AGENT_INFO_WORKGROUP_MAX_DIM`, `_MAX_SIZE`, as `entry.rs`
/// reports them and every rocminfo dump of a GCN/RDNA agent shows).
pub(crate) const WORKGROUP_MAX_DIM: u32 = 1024;
pub(crate) const WORKGROUP_MAX_SIZE: u32 = 1024;
/// The agent's grid limit in work-items (`HSA_AGENT_INFO_GRID_MAX_SIZE`, as `entry.rs` reports it).
pub(crate) const GRID_MAX_SIZE: u32 = u32::MAX;

/// Launches a kernel dispatch packet: the CP's checks in ROCr's order, then its kernel through
/// its host build or its machine code (`isa_exec`). An `Err` leaves nothing run (a check failed)
/// or the workgroups run so far (the kernel failed), and a memory fault recorded on the queue
/// for delivery where one caused it (`check_access`).
fn dispatch(queue: &SoftQueue, runtime: &Runtime, id: u64, packet: &KernelDispatchPacket) -> PacketResult {
    check_dispatch(id, packet)?;
    let workgroup = packet.workgroup();
    let empty = packet.grid().contains(&0);
    if !empty && workgroup.contains(&0) {
        return Err((status::ERROR_INVALID_PACKET_FORMAT, format!("packet {id}: zero workgroup size {workgroup:?}")));
    }
    let kernel = lease_kernel(queue, runtime, id, packet)?;
    check_resources(id, packet, &kernel, runtime, queue.agent_index)?;
    // Whether or not kernels run (retire-only mode), the kernargs must be readable by the agent.
    let kernarg_host = check_kernargs(queue, runtime, id, packet, &kernel)?;
    if empty || queue.mode() == ExecutionMode::RetireOnly {
        return Ok(());
    }
    let Some(host) = host_binding(runtime, id, &kernel)? else {
        return super::isa_exec::dispatch(queue, runtime, id, packet, &kernel);
    };
    check_host_arguments(queue, runtime, id, packet, &kernel, host, kernarg_host)?;
    run_host_build(queue, runtime, id, packet, &kernel, host)
}

/// The packet's kernel, lent from the thread's cache (`Executables::lease`; it goes back when the
/// lease drops), if its kernel object names a kernel loaded for the queue's agent: otherwise
/// INVALID_CODE_OBJECT (bit 8) or INVALID_CODE_SYMBOL.
fn lease_kernel(
    queue: &SoftQueue,
    runtime: &Runtime,
    id: u64,
    packet: &KernelDispatchPacket,
) -> Result<KernelLease, (hsa_status_t, String)> {
    // Bit 8 covers a code address that names no kernel as well as a null one.
    let kernel = runtime.executables.lease(packet.kernel_object).ok_or_else(|| {
        (
            status::ERROR_INVALID_CODE_OBJECT,
            format!("packet {id}: kernel object {:#x} is not a loaded kernel", packet.kernel_object),
        )
    })?;
    if kernel.agent_index != queue.agent_index {
        return Err((
            status::ERROR_INVALID_CODE_SYMBOL,
            format!(
                "packet {id}: kernel `{}` was loaded for agent {} but dispatched on agent {}",
                kernel.symbol, kernel.agent_index, queue.agent_index
            ),
        ));
    }
    Ok(kernel)
}

/// How `kernel` runs under `SoftConfig::kernel_execution`: `Ok(None)` from its machine code,
/// `Ok(Some)` through its host build, `Err` (INVALID_CODE_SYMBOL) where it needs a host build it
/// has none of or cannot use. Reads only.
fn host_binding<'k>(
    runtime: &Runtime,
    id: u64,
    kernel: &'k LoadedKernel,
) -> Result<Option<&'k HostBinding>, (hsa_status_t, String)> {
    match (runtime.config.kernel_execution, &kernel.host) {
        (KernelExecution::Isa | KernelExecution::Native, _)
        | (KernelExecution::Auto, HostBuildState::Missing | HostBuildState::Mismatch(_)) => Ok(None),
        (_, HostBuildState::Ready(host)) => Ok(Some(host)),
        (_, HostBuildState::Missing) => Err((
            status::ERROR_INVALID_CODE_SYMBOL,
            format!(
                "packet {id}: kernel `{}` of {} has no CPU implementation (host build) registered with the soft runtime",
                kernel.symbol, kernel.code_object
            ),
        )),
        (_, HostBuildState::Mismatch(reason)) => Err((
            status::ERROR_INVALID_CODE_SYMBOL,
            format!(
                "packet {id}: kernel `{}` of {} cannot run on the soft runtime: {reason}",
                kernel.symbol, kernel.code_object
            ),
        )),
    }
}

/// The kernarg segment and pointer arguments a host build will dereference, checked before it
/// runs: null ones first (MEMORY_APERTURE_VIOLATION), then any a host cannot reach
/// (INVALID_CODE_SYMBOL) or outside the agent's memory (MEMORY_FAULT, the fault recorded on the
/// queue for delivery). Runs nothing.
///
/// A host build storing through a bad pointer would take the process down (SIGSEGV or SIGBUS in
/// this thread), where a GPU reports a fault: so what the metadata names is checked first. Only
/// each pointer's first byte is checked: the extent a kernel reaches is its own, as on a GPU.
fn check_host_arguments(
    queue: &SoftQueue,
    runtime: &Runtime,
    id: u64,
    packet: &KernelDispatchPacket,
    kernel: &LoadedKernel,
    host: &HostBinding,
    kernarg_host: u64,
) -> PacketResult {
    let kernarg_address = packet.kernarg_address as usize;
    if kernarg_address == 0 && host.reads_kernargs {
        return Err((
            status::ERROR_MEMORY_APERTURE_VIOLATION,
            format!(
                "packet {id}: kernel `{}` of {} takes arguments but kernarg_address is null",
                kernel.symbol, kernel.code_object
            ),
        ));
    }
    // Host code dereferences the addresses it is given, and a locked range's agent addresses are
    // reserved space on the host: only machine code reaches memory through them.
    let unreachable_from_host = |what: &str| {
        (
            status::ERROR_INVALID_CODE_SYMBOL,
            format!(
                "packet {id}: kernel `{}` of {} cannot run as a host build: its {what} is a locked range's \
                 agent address, which host code cannot reach (run it from its machine code)",
                kernel.symbol, kernel.code_object
            ),
        )
    };
    if kernarg_host != packet.kernarg_address {
        return Err(unreachable_from_host("kernarg segment"));
    }
    // SAFETY: the producer guarantees the kernarg segment holds the kernel's declared arguments,
    // and the metadata places each 8-byte pointer argument inside it.
    let pointer_at =
        |offset: usize| unsafe { (kernarg_address as *const u8).add(offset).cast::<u64>().read_unaligned() };
    for (offset, name) in &host.required_pointers {
        if pointer_at(*offset) == 0 {
            return Err((
                status::ERROR_MEMORY_APERTURE_VIOLATION,
                format!(
                    "packet {id}: kernel `{}` of {}: pointer argument {name} is null",
                    kernel.symbol, kernel.code_object
                ),
            ));
        }
    }
    // Then the rest, after every null one has been reported as such. One outside every
    // allocation the agent may reach is a memory fault, recorded and delivered as the
    // interpreter's are (HSA_AMD_GPU_MEMORY_FAULT_EVENT, as ROCr).
    for (offset, name) in &host.required_pointers {
        let pointer = pointer_at(*offset);
        // The allocations first, as nearly every pointer is in one: no queue lock on that path.
        let landing = match runtime.allocations.translate(queue.agent_index, pointer, 1) {
            Ok(host) => Ok(host),
            Err(_) => check_beyond_allocations(queue, runtime, pointer, 1),
        };
        match landing {
            Ok(host) if host == pointer => {}
            Ok(_) => return Err(unreachable_from_host(&format!("pointer argument {name} ({pointer:#x})"))),
            Err(text) => {
                return Err((
                    status::ERROR_MEMORY_FAULT,
                    format!(
                        "packet {id}: kernel `{}` of {}: pointer argument {name}: {text}",
                        kernel.symbol, kernel.code_object
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Runs every workgroup of the packet through `host`'s function, its arguments checked
/// (`check_host_arguments`). A workgroup that traps fails the packet with EXCEPTION and the
/// first message; the workgroups already run keep their writes, as a GPU's do.
fn run_host_build(
    queue: &SoftQueue,
    runtime: &Runtime,
    id: u64,
    packet: &KernelDispatchPacket,
    kernel: &LoadedKernel,
    host: &HostBinding,
) -> PacketResult {
    let (grid, workgroup) = (packet.grid(), packet.workgroup());
    let kernarg_address = packet.kernarg_address as usize;
    let function = host.function;
    let implicit_args = host.implicit_offset.map_or(0, |offset| kernarg_address + offset);
    let group_bytes = packet.group_segment_size as usize;
    // Carried as an integer so the closure is Send + Sync; rebuilt into a pointer per workgroup.
    let packet_address = packet as *const KernelDispatchPacket as usize;
    // A host build that failed a workgroup (`WorkgroupContext::trapped`), and what it said.
    let panicked = std::sync::Mutex::new(None::<String>);
    for_each_workgroup(queue, runtime, packet, |memory, workgroup_id| {
        memory.clear();
        memory.resize(group_bytes, 0);
        let context = WorkgroupContext {
            packet: packet_address as *const KernelDispatchPacket,
            kernarg: kernarg_address as *const u8,
            implicit_args: implicit_args as *const u8,
            group_memory: memory.as_mut_ptr(),
            group_memory_len: group_bytes as u64,
            steady_counter,
            workgroup_id,
            grid_size: grid,
            workgroup_size: workgroup,
            trapped: core::cell::Cell::new(0),
            ring_doorbell: signals::ring_doorbell,
        };
        // SAFETY: the dispatch packet's producer guarantees, as it must for a GPU, that the
        // kernarg segment is valid for this kernel and that the pointers it holds are valid for
        // the accesses the kernel makes (null ones were refused: `check_host_arguments`); the
        // packet copy outlives this call and group memory is ours, sized as the packet requests.
        unsafe { function(&context) };
        if context.trapped.get() != 0 {
            // The message travels by thread-local, which a host build linked into another copy
            // of the abi crate (a program using the drop-in) does not share.
            let message = aqueduct_abi::take_host_panic()
                .unwrap_or_else(|| "the host build failed the workgroup (its panic message went to stderr)".into());
            panicked.lock().unwrap_or_else(|poison| poison.into_inner()).get_or_insert(message);
        }
        // A host build is never saved: its helpers claim on.
        true
    });
    // A GPU kernel that traps fails its queue with an exception; so does a host build's panic.
    match panicked.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        None => Ok(()),
        Some(message) => Err((
            status::ERROR_EXCEPTION,
            format!("packet {id}: kernel `{}` of {}: {message}", kernel.symbol, kernel.code_object),
        )),
    }
}

/// Idle policy: spin briefly after activity, then yield, then park with a growing timeout. A
/// doorbell rung through the HSA API unparks at once; a direct doorbell store is seen within the
/// current park interval (at most 1 ms after long idleness).
#[derive(Default)]
struct Backoff {
    idle_since: Option<Instant>,
}

impl Backoff {
    fn reset(&mut self) {
        self.idle_since = None;
    }

    fn idle(&mut self) {
        let since = *self.idle_since.get_or_insert_with(Instant::now);
        let idle = since.elapsed();
        if idle < Duration::from_micros(20) {
            for _ in 0..32 {
                std::hint::spin_loop();
            }
        } else if idle < Duration::from_micros(200) {
            std::thread::yield_now();
        } else {
            let park = (idle / 8).clamp(Duration::from_micros(50), Duration::from_millis(1));
            std::thread::park_timeout(park);
        }
    }
}
