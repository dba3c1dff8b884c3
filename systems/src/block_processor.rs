//! The command-buffer block processor: the leg admission reserves for, and the processor
//! that publication runs to write the leg's packets and kernargs into the reserved space.
//! (Named for what it does: "replay" is the replay capture's word, `aqueduct_engine::replay`.)
//!
//! Every command's packet count is exact in the ABI's cost model, so the reserved slots are all
//! written and the last one is known in advance: it carries the completion signal, the barrier
//! bit and a system-scope release, and no trailing no-op packet is needed. The first packet of a
//! leg carries the barrier bit and a system-scope acquire (queue order, host-written
//! kernargs and rodata); the packets in between carry exactly the flags recording folded in.
//!
//! **Contract.** Both halves run inside the stages, under the queue's lock: `plan_leg` at
//! admission changes nothing unless the leg is admitted; `write_leg` at publication writes
//! only the packets and kernarg bytes admission reserved, and reports a program it cannot write as a
//! `SubmissionFault` (publication then writes passing barriers in their place).

use aqueduct_abi::block_program::{
    Block, BlockProgram, Command, CommandFlags, DecodedCommand, DispatchCommand, KERNARG_BLOCK_BYTES, KernargStrategy,
    NO_IMPLICIT_ARGS, TerminatorKind,
};
use aqueduct_abi::device_program::{PROCESSOR_ARGS_BYTES, ProcessorArgs, ProcessorStatus, TimingTable};
use aqueduct_abi::{BarrierAndPacket, FenceScope, ImplicitKernargs, KernelDispatchPacket, PacketType};
use aqueduct_builtins::{Builtin, DispatchPlan, PatchIndirectArgs};
use aqueduct_components::capture::TimedKind;
use aqueduct_components::program::{
    BlockStep, Cursor, LegEnd, LegPlan, ProgramImage, ProgramImageRef, ProgramRun, SlotPatch, StepKind,
};
use aqueduct_components::submission::{SubmissionFault, Verdict};
use aqueduct_hsa::ring::AqlRing;

use crate::binding_tables::BindingTables;
use crate::queue_state::CaptureState;
use aqueduct_components::kernarg_ring::KernargRing;

/// A header word the host does not publish: an indirect dispatch's header is stored by the
/// patch kernel that runs just before it, once the grid is in place.
pub const HEADER_LEFT_TO_DEVICE: u32 = u32::MAX;

/// Kernarg alignment of a leg: every command's kernargs start on a 64-byte line.
pub const SEGMENT_KERNARG_ALIGNMENT: u64 = KERNARG_BLOCK_BYTES;

/// AQL slots for a leg: free now, and free at best (the ring's capacity less what the
/// leg's row needs besides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketRoom {
    pub now: u64,
    pub at_best: u64,
}

/// Plans the next leg of `run` into `leg`, in `room`. Reads only; nothing is reserved.
/// `device_timing_slots`: the timing table an execution processed on the device carries (0
/// without dispatch timing).
pub fn plan_leg(
    kernargs: &KernargRing,
    binding_tables: Option<&BindingTables>,
    drained_all: bool,
    run: &ProgramRun,
    room: PacketRoom,
    device_timing_slots: u64,
    leg: &mut LegPlan,
) -> Verdict {
    leg.clear();
    let Some(image) = run.image.as_ref().map(ProgramImageRef::get) else {
        return Verdict::Fault(SubmissionFault::NoProgramImage);
    };
    if run.on_device {
        return plan_device_run(kernargs, binding_tables, run, room, device_timing_slots, leg);
    }
    let PacketRoom { now: room, at_best: capacity } = room;
    let mut cursor = match run.cursor {
        Cursor::Block(ordinal) => ordinal,
        Cursor::PendingBranch(ordinal) => {
            // The branch reads memory the queue's earlier work may write: only once it drained.
            if !drained_all {
                return Verdict::Backpressure;
            }
            match evaluate_branch(image, ordinal, &run.bindings) {
                Some(next) => next,
                None => return Verdict::Fault(SubmissionFault::UnreadableBranch { block: ordinal }),
            }
        }
        Cursor::Done => return Verdict::Fault(SubmissionFault::ProgramFinished),
    };
    let kernarg_limit = kernargs.capacity / 2;
    let mut blocks_run = run.blocks_run;
    loop {
        let Some((facts, _, _)) = image.blocks.get(cursor) else {
            return Verdict::Fault(SubmissionFault::MissingBlock { block: cursor });
        };
        let header = &facts.header;
        let packets = leg.packets + u64::from(header.max_packet_count);
        let kernarg_bytes = leg.kernarg_bytes + u64::from(header.max_kernarg_bytes);
        let fits = packets <= room
            && kernarg_bytes <= kernarg_limit
            && kernargs.plan(kernarg_bytes, SEGMENT_KERNARG_ALIGNMENT).is_some();
        if !fits {
            if !leg.blocks.is_empty() {
                leg.end = LegEnd::Continue(cursor);
                return Verdict::Admitted;
            }
            let never =
                u64::from(header.max_packet_count) > capacity || u64::from(header.max_kernarg_bytes) > kernarg_limit;
            return if never { Verdict::TooLarge } else { Verdict::Backpressure };
        }
        if blocks_run >= run.block_limit {
            return Verdict::BlockLimit;
        }
        blocks_run += 1;
        leg.blocks.push(cursor);
        leg.packets = packets;
        leg.kernarg_bytes = kernarg_bytes;
        match header.terminator_kind() {
            Some(TerminatorKind::Return) | None => {
                leg.end = LegEnd::Return;
                return Verdict::Admitted;
            }
            Some(TerminatorKind::CondBranch) => {
                leg.end = LegEnd::Branch(cursor);
                return Verdict::Admitted;
            }
            Some(TerminatorKind::Branch) => {
                let target = image.view().and_then(|view| branch_target(&view, cursor));
                let Some(target) = target else {
                    return Verdict::Fault(SubmissionFault::UnreadableBranch { block: cursor });
                };
                cursor = target;
            }
            Some(TerminatorKind::Fallthrough) => cursor += 1,
        }
    }
}

/// Packets an execution processed on the device takes on its queue: the block processor's
/// dispatch, and the barrier that waits for the execution's done signal and carries the epoch.
pub const DEVICE_RUN_PACKETS: u64 = 2;

/// Dispatches of one device-processed execution that a profile capture's dispatch timing can
/// time (the rest are counted untimed): the size of its timing table.
pub const DEVICE_TIMING_SLOTS: u64 = 256;

/// The kernarg bytes of the block processor's dispatch: its arguments, then a timing table of
/// `timing_slots` entries (0 without dispatch timing). The binding table is in the target's
/// binding-table ring.
pub fn device_run_kernarg_bytes(timing_slots: u64) -> u64 {
    let table = if timing_slots == 0 { 0 } else { TimingTable::bytes(timing_slots) };
    (u64::from(PROCESSOR_ARGS_BYTES) + table).next_multiple_of(KERNARG_BLOCK_BYTES)
}

/// The whole execution as one leg: the processor's packets and kernargs on this queue, and
/// its binding table in the target's ring (reused when the newest one holds the same bindings).
fn plan_device_run(
    kernargs: &KernargRing,
    binding_tables: Option<&BindingTables>,
    run: &ProgramRun,
    room: PacketRoom,
    timing_slots: u64,
    leg: &mut LegPlan,
) -> Verdict {
    let PacketRoom { now: room, at_best: capacity } = room;
    let Some(tables) = binding_tables else {
        return Verdict::Fault(SubmissionFault::NoDeviceProgram);
    };
    let bytes = device_run_kernarg_bytes(timing_slots);
    let kernarg_limit = kernargs.capacity / 2;
    let table_bytes = 8 * run.bindings.len() as u64;
    // An empty table takes no room: the processor's table pointer stays null.
    let table = if run.bindings.is_empty() { None } else { tables.plan(&run.bindings) };
    if DEVICE_RUN_PACKETS > room
        || bytes > kernarg_limit
        || table_bytes > tables.largest_bytes()
        || (table.is_none() && !run.bindings.is_empty())
        || kernargs.plan(bytes, SEGMENT_KERNARG_ALIGNMENT).is_none()
    {
        let never = DEVICE_RUN_PACKETS > capacity || bytes > kernarg_limit || table_bytes > tables.largest_bytes();
        return if never { Verdict::TooLarge } else { Verdict::Backpressure };
    }
    leg.binding_table = table;
    leg.packets = DEVICE_RUN_PACKETS;
    leg.kernarg_bytes = bytes;
    leg.end = LegEnd::Return;
    Verdict::Admitted
}

/// Where admission placed an execution processed on the device.
#[derive(Clone, Copy, Debug)]
pub struct DeviceRunPlacement {
    pub epoch: u64,
    pub first_id: u64,
    pub kernarg_address: u64,
    /// What its last packet completes.
    pub completion: u64,
}

/// Writes an execution processed on the device: the block processor's dispatch, whose
/// arguments go to `at.kernarg_address` (they name the binding table admission placed), then a
/// BARRIER_AND on the execution's done signal that completes `at.completion`; their header words
/// go to `run.headers`. Arms the epoch's done signal (1) and status record (zero) first.
///
/// # Safety
/// Admission reserved [`DEVICE_RUN_PACKETS`] packets from `at.first_id` and
/// [`device_run_kernarg_bytes`] at `at.kernarg_address`, and placed `run.binding_table`;
/// `target`'s memory and signals live while this execution may run; the epoch slot's previous
/// execution has retired.
///
/// With `timing` (a capture's dispatch timing), admission reserved a timing table of
/// [`DEVICE_TIMING_SLOTS`] after the arguments: it takes that many free timing signals (or
/// fewer), and notes each in `CaptureState::timed` as a [`TimedKind::DeviceSlot`].
pub unsafe fn write_device_run(
    ring: &AqlRing,
    api: &aqueduct_hsa::HsaApi,
    target: &crate::DeviceTarget,
    at: DeviceRunPlacement,
    run: &mut ProgramRun,
    timing: Option<&mut CaptureState>,
) -> Result<(), SubmissionFault> {
    use aqueduct_abi::PacketHeader;
    let DeviceRunPlacement { epoch, first_id, kernarg_address, completion } = at;
    run.headers.clear();
    let image = run.image.as_ref().map(ProgramImageRef::get).ok_or(SubmissionFault::NoProgramImage)?;
    let program = image.built_device_program().ok_or(SubmissionFault::NoDeviceProgram)?;
    let (done, status) = target.slot_of(epoch);
    // SAFETY: the status record is this epoch slot's, in host-visible memory, and the slot's
    // previous execution retired (so its processor is done with it).
    unsafe { (status as *mut ProcessorStatus).write_volatile(ProcessorStatus::default()) };
    // SAFETY: a live signal of the target; no packet of a running execution names it.
    unsafe { (api.hsa_signal_store_relaxed)(aqueduct_hsa::sys::hsa_signal_t { handle: done }, 1) };
    let table = kernarg_address + u64::from(PROCESSOR_ARGS_BYTES);
    let timing = timing.map(|capture| {
        let signals: Vec<u64> = (0..DEVICE_TIMING_SLOTS).map_while(|_| capture.timing_signals.pop()).collect();
        let head = TimingTable { capacity: signals.len() as u32, ..TimingTable::default() };
        // SAFETY: admission reserved the table's bytes after the arguments, in this
        // execution's kernarg span, host-writable and read by no packet until published.
        unsafe {
            (table as *mut TimingTable).write_unaligned(head);
            core::ptr::copy_nonoverlapping(signals.as_ptr(), (table + 16) as *mut u64, signals.len());
        }
        for (index, &signal) in signals.iter().enumerate() {
            let kind = TimedKind::DeviceSlot {
                table,
                index: index as u32,
                program: program.memory.address,
                program_id: image.id,
            };
            capture.timed.push(aqueduct_components::capture::TimedPacket { signal, kind });
        }
        table
    });
    let args = ProcessorArgs {
        program: program.memory.address,
        bindings: run.binding_table,
        queue: target.queue,
        state: target.state,
        status,
        done_signal: done,
        kernarg_capacity: target.kernarg_capacity,
        timing: timing.unwrap_or(0),
        block: 0,
        evaluate: 0,
        blocks_left: u32::try_from(run.block_limit).unwrap_or(u32::MAX),
        binding_count: run.bindings.len() as u32,
        step: 0,
        reserved: 0,
    };
    // SAFETY: the reserved kernarg span holds the arguments (see the caller's contract),
    // host-writable, read by no packet until this one is published.
    unsafe { (kernarg_address as *mut ProcessorArgs).write_unaligned(args) };
    let edges = |kind: PacketType| u32::from(PacketHeader::new(kind, true, FenceScope::System, FenceScope::System).0);
    let template = target.processor.template(1, 1);
    let packet = template.packet(kernarg_address, 0);
    // SAFETY: the first reserved packet.
    unsafe { ring.write_body(first_id, &packet) };
    run.headers.push(edges(PacketType::KernelDispatch) | u32::from(template.dimensions) << 16);
    let mut wait = BarrierAndPacket { completion_signal: completion, ..Default::default() };
    wait.dep_signal[0] = done;
    // SAFETY: the second reserved packet.
    unsafe { ring.write_body(first_id + 1, &wait) };
    run.headers.push(edges(PacketType::BarrierAnd));
    run.device_status = status;
    Ok(())
}

/// Packets the leg publishes: one barrier carries the epoch when its blocks write none.
pub fn leg_packets(leg: &LegPlan) -> u64 {
    leg.packets.max(1)
}

/// The control command that closes block `ordinal`.
fn closing_command(view: &BlockProgram<'_>, ordinal: u32) -> Option<DecodedCommand> {
    let block = view.block(ordinal)?;
    block.command(block.command_count().checked_sub(1)?)?.decode()
}

fn branch_target(view: &BlockProgram<'_>, ordinal: u32) -> Option<u32> {
    match closing_command(view, ordinal)? {
        DecodedCommand::Branch(branch) => Some(branch.target_block),
        _ => None,
    }
}

/// Reads the value a block's closing conditional branch tests and returns the block it picks.
fn evaluate_branch(image: &ProgramImage, ordinal: u32, bindings: &[u64]) -> Option<u32> {
    let view = image.view()?;
    let DecodedCommand::CondBranch(branch) = closing_command(&view, ordinal)? else { return None };
    let address = view.block(ordinal)?.source(u32::from(branch.source))?.resolve(bindings)?;
    // SAFETY: the engine checked when recording (static sources) and when executing (dynamic
    // ones) that the source is a host-visible range of at least `width` bytes, aligned to
    // `width`, in a buffer not freed before this execution settles; the queue has drained, so no
    // packet of this queue writes it concurrently.
    let value = unsafe {
        if branch.width == 8 {
            core::ptr::read_volatile(address as *const u64)
        } else {
            u64::from(core::ptr::read_volatile(address as *const u32))
        }
    };
    branch.next_block(value)
}

/// The cursor after the leg is published.
pub fn advance(run: &mut ProgramRun, leg: &LegPlan) {
    run.blocks_run += leg.blocks.len() as u64;
    run.cursor = match leg.end {
        LegEnd::Return => Cursor::Done,
        LegEnd::Branch(ordinal) => Cursor::PendingBranch(ordinal),
        LegEnd::Continue(ordinal) => Cursor::Block(ordinal),
    };
}

/// The block processor: writes the leg's packet bodies from `first_id` and its kernargs
/// from `kernarg_address`, and leaves each packet's header word in `run.headers` for
/// publication to store in order.
///
/// On a fault (something finishing and the binding-table check guaranteed no longer holds)
/// the caller must not publish `run.headers`: the leg's reserved packets are partly
/// written, and publication overwrites them all with barriers that pass.
///
/// With `capture` (dispatch timing), every dispatch packet the leg writes, builtin ones
/// included, completes on a timing signal of its own, noted in `CaptureState::timed` with the
/// command that recorded it; the last packet keeps `completion`, and if it is a dispatch, it is
/// noted on it. Without, the choice costs this one test: the writer is compiled for each.
///
/// # Safety
/// Admission reserved `leg_packets(leg)` packets from `first_id` and
/// `leg.kernarg_bytes` kernarg bytes (64-byte aligned) at `kernarg_address` for this
/// submission, and `run.bindings` holds base pointers the engine checked against the program's
/// needs, in buffers not freed before the execution settles.
pub unsafe fn write_leg(
    ring: &AqlRing,
    first_id: u64,
    kernarg_address: u64,
    completion: u64,
    run: &mut ProgramRun,
    leg: &LegPlan,
    capture: Option<&mut CaptureState>,
) -> Result<(), SubmissionFault> {
    crate::stage_span!("block_processor");
    match capture {
        // SAFETY: forwarded from the caller.
        Some(capture) => unsafe {
            write_blocks::<true>(ring, first_id, kernarg_address, completion, run, leg, Some(capture))
        },
        // SAFETY: as above.
        None => unsafe { write_blocks::<false>(ring, first_id, kernarg_address, completion, run, leg, None) },
    }
}

/// [`write_leg`]'s body; `TIMED`: whether `capture` is there to time the dispatches.
///
/// # Safety
/// As [`write_leg`].
#[inline(always)]
unsafe fn write_blocks<const TIMED: bool>(
    ring: &AqlRing,
    first_id: u64,
    kernarg_address: u64,
    completion: u64,
    run: &mut ProgramRun,
    leg: &LegPlan,
    capture: Option<&mut CaptureState>,
) -> Result<(), SubmissionFault> {
    let image = run.image.as_ref().map(ProgramImageRef::get).ok_or(SubmissionFault::NoProgramImage)?;
    let view = image.view().ok_or(SubmissionFault::NoProgramImage)?;
    let packets = leg_packets(leg);
    // Sized once and stored by index: a push per packet re-read the vector's length and capacity
    // around every ring write (which may alias it), about a fifth of a baked packet's cost.
    run.headers.clear();
    run.headers.resize(packets as usize, 0);
    let mut writer = PacketWriter::<TIMED> {
        ring,
        first_id,
        next_id: first_id,
        last_id: first_id + packets - 1,
        kernargs: kernarg_address,
        completion,
        headers: &mut run.headers,
        builtins: &image.builtins,
        capture,
        program: image.id,
        command: 0,
    };
    for &ordinal in &leg.blocks {
        let missing = SubmissionFault::MissingBlock { block: ordinal };
        let (facts, commands, patches) = image.blocks.get(ordinal).ok_or(missing)?;
        let (steps, packets) = (&commands.steps, &commands.packets);
        // Only commands finishing could not bake read the image's block.
        let mut block = None;
        for (index, (step, packet)) in steps.iter().zip(packets).enumerate() {
            if TIMED {
                writer.command = facts.first_command + index as u32;
            }
            match step.kind {
                // SAFETY: forwarded from the caller; a baked packet is one packet, no kernargs.
                StepKind::Baked => unsafe { writer.baked(packet, step.header) },
                StepKind::Template => {
                    let at = StepAt { ordinal, command: index as u32 };
                    // SAFETY: forwarded from the caller; one packet and its kernarg bytes.
                    unsafe { writer.template(image, &patches.0, at, step, packet, &run.bindings)? };
                }
                StepKind::Interpret => {
                    let block = match block {
                        Some(block) => block,
                        None => *block.insert(view.block(ordinal).ok_or(missing)?),
                    };
                    let at = Location {
                        block: &block,
                        ordinal,
                        command: index as u32,
                        rodata_address: facts.rodata_address,
                    };
                    let command = block.command(index as u32).ok_or(missing)?;
                    // SAFETY: forwarded from the caller; each command writes within its cost.
                    unsafe { writer.command(&at, &command, &run.bindings)? };
                }
            }
        }
    }
    // Blocks with no packets: one barrier carries the epoch (and is the leg's only packet).
    while writer.next_id <= writer.last_id {
        // SAFETY: a reserved packet.
        unsafe { writer.barrier(CommandFlags::NONE) };
    }
    Ok(())
}

/// A baked command's place, for faults.
#[derive(Clone, Copy)]
struct StepAt {
    ordinal: u32,
    command: u32,
}

/// The command being written: its block (view and ordinal), index and the block's rodata.
struct Location<'a, 'b> {
    block: &'a Block<'b>,
    ordinal: u32,
    command: u32,
    rodata_address: u64,
}

impl Location<'_, '_> {
    /// The address binding source `source` names with this execution's table.
    fn resolve(&self, source: u16, bindings: &[u64]) -> Result<u64, SubmissionFault> {
        self.block
            .source(u32::from(source))
            .and_then(|record| record.resolve(bindings))
            .ok_or(SubmissionFault::UnresolvedSource { block: self.ordinal, source: u32::from(source) })
    }

    fn missing_kernargs(&self) -> SubmissionFault {
        SubmissionFault::MissingKernargData { block: self.ordinal, command: self.command }
    }
}

/// Writes a leg's packets; `TIMED`: under dispatch timing (with `capture`).
struct PacketWriter<'a, const TIMED: bool> {
    ring: &'a AqlRing,
    first_id: u64,
    next_id: u64,
    last_id: u64,
    kernargs: u64,
    completion: u64,
    /// One header word per reserved packet, by `id - first_id`.
    headers: &'a mut [u32],
    builtins: &'a [aqueduct_components::program::BuiltinObject],
    /// Where the dispatches are timed (`TIMED` only).
    capture: Option<&'a mut CaptureState>,
    /// The program's id and the recording index of the command being written (`TIMED` only).
    program: u64,
    command: u32,
}

impl<const TIMED: bool> PacketWriter<'_, TIMED> {
    /// Leaves packet `id`'s header word for publication.
    #[inline(always)]
    fn put_header(&mut self, id: u64, word: u32) {
        // Every id is one of the leg's reserved packets (`next_id` never passes `last_id`:
        // each command writes within the cost the leg reserved).
        debug_assert!((self.first_id..=self.last_id).contains(&id));
        if let Some(slot) = self.headers.get_mut((id - self.first_id) as usize) {
            *slot = word;
        }
    }

    /// Carves `bytes` (rounded to 64) of the leg's kernarg span.
    fn carve(&mut self, bytes: u64) -> u64 {
        let at = self.kernargs;
        self.kernargs += bytes.next_multiple_of(KERNARG_BLOCK_BYTES);
        at
    }

    /// The header word of packet `id`: its type, the flags recording folded in, and the leg
    /// edges (barrier and system acquire on the first packet, barrier and system release on the
    /// last); plus its completion signal (only the last packet's).
    fn header_word(&self, id: u64, kind: PacketType, flags: CommandFlags, setup: u16) -> (u32, u64) {
        self.with_edges(id, kind as u32 | u32::from(flags.packet_header_bits()) | u32::from(setup) << 16)
    }

    /// `word` with the leg-edge bits of packet `id`, and the packet's completion signal.
    #[inline]
    fn with_edges(&self, id: u64, word: u32) -> (u32, u64) {
        use aqueduct_abi::packet::header_bits::{ACQUIRE_SHIFT, BARRIER_SHIFT, RELEASE_SHIFT};
        let (first, last) = (id == self.first_id, id == self.last_id);
        if !first && !last {
            return (word, 0);
        }
        let scope = |shift: u32| (word >> shift) & 3;
        let system = FenceScope::System as u32;
        let acquire = if first { scope(ACQUIRE_SHIFT as u32).max(system) } else { scope(ACQUIRE_SHIFT as u32) };
        let release = if last { scope(RELEASE_SHIFT as u32).max(system) } else { scope(RELEASE_SHIFT as u32) };
        let cleared = word & !(3 << ACQUIRE_SHIFT | 3 << RELEASE_SHIFT);
        let word = cleared | 1 << BARRIER_SHIFT | acquire << ACQUIRE_SHIFT | release << RELEASE_SHIFT;
        (word, if last { self.completion } else { 0 })
    }

    /// The completion signal of dispatch packet `id` (`packet`: its body, for the kernel, grid
    /// and workgroup), whose edges gave it `completion`. Under dispatch timing, the packet is
    /// timed for the command being written: on a timing signal of its own, or on the leg's
    /// completion if it is the last packet; a packet that finds no signal completes on nothing
    /// (counted as untimed). An indirect dispatch is two timed packets of its command, the
    /// patch kernel's and its own, whose grid is noted as recorded (the patch rewrites it on
    /// the device).
    #[inline(always)]
    fn dispatch_completion(&mut self, id: u64, packet: &KernelDispatchPacket, completion: u64) -> u64 {
        if !TIMED {
            return completion;
        }
        let Some(capture) = self.capture.as_deref_mut() else { return completion };
        let kind = TimedKind::Dispatch {
            kernel_object: packet.kernel_object,
            grid: [packet.grid_size_x, packet.grid_size_y, packet.grid_size_z],
            workgroup: [packet.workgroup_size_x, packet.workgroup_size_y, packet.workgroup_size_z],
            command: Some((self.program, self.command)),
        };
        if id != self.last_id {
            return capture.time_packet(kind);
        }
        if completion == 0 {
            capture.untimed += 1;
        } else {
            capture.timed.push(aqueduct_components::capture::TimedPacket { signal: completion, kind });
        }
        completion
    }

    /// A packet finishing built completely: copied into the ring as it is.
    #[inline]
    unsafe fn baked(&mut self, packet: &KernelDispatchPacket, word: u32) {
        let id = self.next_id;
        self.next_id += 1;
        let (header, completion) = self.with_edges(id, word);
        let completion = self.dispatch_completion(id, packet, completion);
        if completion == 0 {
            // SAFETY: a reserved packet of this leg.
            unsafe { self.ring.write_body(id, packet) };
        } else {
            let packet = KernelDispatchPacket { completion_signal: completion, ..*packet };
            // SAFETY: as above.
            unsafe { self.ring.write_body(id, &packet) };
        }
        self.put_header(id, header);
    }

    /// A dispatch finishing built but for its kernargs: copies the template into this
    /// leg's kernarg span, writes each patch's resolved pointer into the copy, and copies the
    /// packet with the copy's address. Only the kernarg address and the patch words differ from
    /// one execution to the next.
    #[inline]
    unsafe fn template(
        &mut self,
        image: &ProgramImage,
        patches: &[SlotPatch],
        at: StepAt,
        step: &BlockStep,
        packet: &KernelDispatchPacket,
        bindings: &[u64],
    ) -> Result<(), SubmissionFault> {
        let missing = SubmissionFault::MissingKernargData { block: at.ordinal, command: at.command };
        let size = step.kernarg_bytes as usize;
        let template = image.bytes.get(step.template as usize..step.template as usize + size).ok_or(missing)?;
        let first_patch = step.first_patch as usize;
        let patches = patches.get(first_patch..first_patch + step.patch_count as usize).ok_or(missing)?;
        let kernargs = self.carve(size as u64);
        // SAFETY: `carve` handed out `size` bytes (rounded up to 64) of this leg's reserved
        // kernarg span, host-writable memory that no packet reads until the leg is published.
        unsafe { core::ptr::copy_nonoverlapping(template.as_ptr(), kernargs as *mut u8, size) };
        for patch in patches {
            let unresolved = SubmissionFault::UnresolvedSource { block: at.ordinal, source: u32::from(patch.source) };
            let base = bindings.get(patch.slot as usize).ok_or(unresolved)?;
            let pointer = base.checked_add(patch.offset).ok_or(unresolved)?;
            if usize::from(patch.kernarg_offset) + 8 > size {
                return Err(missing);
            }
            // SAFETY: the eight bytes lie inside the `size` bytes carved above (checked).
            unsafe { ((kernargs + u64::from(patch.kernarg_offset)) as *mut u64).write_unaligned(pointer) };
        }
        let id = self.next_id;
        self.next_id += 1;
        let (header, completion) = self.with_edges(id, step.header);
        let completion = self.dispatch_completion(id, packet, completion);
        let packet = KernelDispatchPacket { kernarg_address: kernargs, completion_signal: completion, ..*packet };
        // SAFETY: a reserved packet of this leg.
        unsafe { self.ring.write_body(id, &packet) };
        self.put_header(id, header);
        Ok(())
    }

    /// Takes the next packet id and its header word and completion signal.
    fn next(&mut self, kind: PacketType, flags: CommandFlags, setup: u16) -> (u64, u32, u64) {
        let id = self.next_id;
        self.next_id += 1;
        let (header, completion) = self.header_word(id, kind, flags, setup);
        (id, header, completion)
    }

    unsafe fn command(
        &mut self,
        at: &Location<'_, '_>,
        command: &Command,
        bindings: &[u64],
    ) -> Result<(), SubmissionFault> {
        let resolve = |source: u16| at.resolve(source, bindings);
        let flags = command.flags();
        let plan = match command.decode() {
            Some(DecodedCommand::Dispatch(dispatch)) => {
                // SAFETY: forwarded.
                return unsafe { self.dispatch(at, &dispatch, bindings) };
            }
            Some(DecodedCommand::Fill(fill)) => {
                aqueduct_builtins::plan_fill(resolve(fill.target)?, fill.length, fill.pattern, fill.width)
            }
            Some(DecodedCommand::Copy(copy)) => {
                aqueduct_builtins::plan_copy(resolve(copy.source)?, resolve(copy.target)?, copy.length)
            }
            Some(DecodedCommand::Update(update)) => aqueduct_builtins::plan_copy(
                at.rodata_address + u64::from(update.payload_offset),
                resolve(update.target)?,
                u64::from(update.length),
            ),
            Some(DecodedCommand::ProfileMarker(marker)) => aqueduct_builtins::plan_timestamp(resolve(marker.target)?),
            Some(DecodedCommand::Barrier(_)) => {
                // SAFETY: forwarded.
                unsafe { self.barrier(flags) };
                return Ok(());
            }
            Some(DecodedCommand::Branch(_) | DecodedCommand::CondBranch(_) | DecodedCommand::Return(_)) => {
                return Ok(());
            }
            None => return Err(SubmissionFault::MissingBlock { block: at.ordinal }),
        };
        // The engine checked every transfer's ranges when recording and executing.
        let plan = plan.map_err(|_| SubmissionFault::TransferNotPlanned { block: at.ordinal, command: at.command })?;
        // SAFETY: forwarded.
        unsafe { self.builtin(&plan, flags) }
    }

    unsafe fn barrier(&mut self, flags: CommandFlags) {
        let (id, header, completion) = self.next(PacketType::BarrierAnd, flags, 0);
        let packet = BarrierAndPacket { completion_signal: completion, ..Default::default() };
        // SAFETY: a reserved packet of this leg.
        unsafe { self.ring.write_body(id, &packet) };
        self.put_header(id, header);
    }

    unsafe fn builtin(&mut self, plan: &DispatchPlan, flags: CommandFlags) -> Result<(), SubmissionFault> {
        let kernel = self.builtins.get(plan.kernel as usize).copied().filter(|kernel| kernel.kernel_object != 0);
        let kernel = kernel.ok_or(SubmissionFault::MissingBuiltin { builtin: plan.kernel as u8 })?;
        let args = plan.kernarg_bytes();
        let kernarg_address = self.carve(args.len() as u64);
        // SAFETY: inside this leg's kernarg span (builtin arguments fit one 64-byte block).
        unsafe { core::ptr::copy_nonoverlapping(args.as_ptr(), kernarg_address as *mut u8, args.len()) };
        let template = kernel.template(plan.grid_size, plan.workgroup_size);
        let (id, header, completion) = self.next(PacketType::KernelDispatch, flags, template.dimensions);
        let mut packet = template.packet(kernarg_address, completion);
        packet.completion_signal = self.dispatch_completion(id, &packet, completion);
        // SAFETY: a reserved packet of this leg.
        unsafe { self.ring.write_body(id, &packet) };
        self.put_header(id, header);
        Ok(())
    }

    unsafe fn dispatch(
        &mut self,
        at: &Location<'_, '_>,
        dispatch: &DispatchCommand,
        bindings: &[u64],
    ) -> Result<(), SubmissionFault> {
        let block = at.block;
        let size = u64::from(dispatch.kernarg_size);
        let strategy = dispatch.strategy();
        let kernarg_address = match strategy {
            Some(KernargStrategy::Prepublished) => at.rodata_address + u64::from(dispatch.template_offset),
            Some(KernargStrategy::PointerScatter) => {
                let constants = block.constants(dispatch).ok_or_else(|| at.missing_kernargs())?;
                let start = self.carve(size);
                let pointers = block.dispatch_sources(dispatch).enumerate().map(|(index, source)| {
                    source.resolve(bindings).ok_or(SubmissionFault::UnresolvedSource {
                        block: at.ordinal,
                        source: u32::from(dispatch.first_source) + index as u32,
                    })
                });
                // The recorder picks pointer scatter only for kernels that read no implicit
                // arguments; one that did would get the block a direct dispatch gets.
                let implicit = (dispatch.implicit_args_offset != NO_IMPLICIT_ARGS).then(|| {
                    (
                        u32::from(dispatch.implicit_args_offset),
                        ImplicitKernargs::for_grid(dispatch.grid_size, dispatch.workgroup_size),
                    )
                });
                // SAFETY: `carve` handed out `size` bytes of this leg's reserved kernarg span,
                // host-writable memory that no packet reads until the leg is published.
                let kernarg_segment = unsafe { core::slice::from_raw_parts_mut(start as *mut u8, size as usize) };
                let implicit = implicit.as_ref().map(|(offset, block)| (*offset, block));
                aqueduct_abi::try_write_hal_kernargs(kernarg_segment, pointers, constants, implicit)?;
                start
            }
            _ => {
                let template = block.template(dispatch).ok_or_else(|| at.missing_kernargs())?;
                let start = self.carve(size);
                let length = template.len().min(size as usize);
                // SAFETY: the template copy lies inside `kernarg_size` (validated).
                unsafe { core::ptr::copy_nonoverlapping(template.as_ptr(), start as *mut u8, length) };
                for patch in block.dispatch_patches(dispatch) {
                    let pointer = at.resolve(patch.source_index, bindings)?;
                    // SAFETY: each patch lies inside `kernarg_size` (validated).
                    unsafe { ((start + u64::from(patch.kernarg_offset)) as *mut u64).write_unaligned(pointer) };
                }
                start
            }
        };
        let flags = dispatch.header.flags;
        if strategy == Some(KernargStrategy::Indirect) {
            // The patch packet first: it rewrites the dispatch's grid (and implicit block counts)
            // from the count buffer, then stores the dispatch's header.
            let counts = at.resolve(dispatch.indirect_source, bindings)?;
            let implicit = if dispatch.implicit_args_offset == NO_IMPLICIT_ARGS {
                0
            } else {
                kernarg_address + u64::from(dispatch.implicit_args_offset)
            };
            let dispatch_id = self.next_id + 1;
            let (header, _) = self.with_edges(dispatch_id, dispatch.header_word());
            let args = PatchIndirectArgs {
                packet: self.ring.slot_address(dispatch_id),
                counts,
                implicit_args: implicit,
                header,
                reserved: 0,
            };
            let plan = DispatchPlan {
                kernel: Builtin::PatchIndirect,
                kernargs: aqueduct_builtins::Kernargs::PatchIndirect(args),
                grid_size: 1,
                workgroup_size: 1,
            };
            // SAFETY: forwarded; the patch packet and its 64 kernarg bytes are in the cost.
            unsafe { self.builtin(&plan, flags)? };
        }
        let id = self.next_id;
        self.next_id += 1;
        let (header, completion) = self.with_edges(id, dispatch.header_word());
        let mut packet = dispatch.template().packet(kernarg_address, completion);
        packet.completion_signal = self.dispatch_completion(id, &packet, completion);
        // SAFETY: a reserved packet of this leg.
        unsafe { self.ring.write_body(id, &packet) };
        self.put_header(id, if strategy == Some(KernargStrategy::Indirect) { HEADER_LEFT_TO_DEVICE } else { header });
        Ok(())
    }
}
