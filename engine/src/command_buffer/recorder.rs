//! Recording: commands become block-program records as they arrive.
//!
//! - **Barriers are metadata.** `barrier()` sets a pending flag; the next payload command gets
//!   the barrier bit and an agent-scope acquire, and the previous one an agent-scope release.
//!   Adjacent barriers coalesce. A block's first command always starts with a barrier and its
//!   last ends with a release: control flow is an ordering point.
//! - **Blocks split** when the next command would push the current chunk past the
//!   [`BlockLimits`]; chunks of one block follow each other by fallthrough.
//! - **Strategies** are chosen per dispatch here: indirect when the grid comes from a buffer;
//!   prepublished when every binding is static (reusable buffers); pointer scatter when every
//!   binding is dynamic and the kernel reads no implicit arguments; otherwise a patched template.

use std::sync::Arc;

use aqueduct_abi::block_program::{
    BindingSource, BranchCommand, Command, CommandFlags, CommandHeader, CommandKind, CommandRecord, CompareOp,
    CondBranchCommand, CopyCommand, DecodedCommand, DispatchCommand, ExecutionCost, FillCommand, KernargStrategy,
    MAX_KERNARG_ALIGNMENT, NO_IMPLICIT_ARGS, NO_SOURCE, PatchRecord, ProfileMarkerCommand, RODATA_ALIGN, ReturnCommand,
    SourceKind, TerminatorKind, UpdateCommand,
};
use aqueduct_abi::packet::FenceScope;
use aqueduct_abi::{KernelDispatchPacket, write_hal_kernargs};
use aqueduct_components::program::{BlockStep, SlotPatch, StepKind};
use bytemuck::Zeroable;

use super::needs::{CopyCheck, SlotNeed};
use super::{BlockLimits, CommandBuffer, CommandBufferUsage, Retained, State};
use crate::device::DeviceShared;
use crate::dispatch::{Dispatch, GridSource, ValidatedDispatch, validate_dispatch};
use crate::error::{EngineError, EngineResult};
use crate::executable::Kernel;
use crate::memory::{Binding, Buffer};

/// Most binding-table slots a program may name.
pub const MAX_BINDING_SLOTS: u32 = 1 << 16;
/// Sources or patches per chunk before it splits (the ABI's u16 indices stop at 65,534).
const CHUNK_RECORD_LIMIT: usize = 60_000;
/// Largest update payload a command buffer carries in its rodata.
const MAX_RECORDED_UPDATE: usize = crate::memory::MAX_UPDATE_BYTES;

/// A buffer range a command uses: fixed at record time, or a binding-table slot resolved at
/// every execution.
#[derive(Clone, Copy, Debug)]
pub enum BufferRef<'a> {
    /// A buffer range fixed at record time.
    Static(Binding<'a>),
    /// `length` bytes at `offset` into the slot's range.
    Slot {
        /// The binding-table slot.
        slot: u32,
        /// Byte offset into the slot's range.
        offset: u64,
        /// Bytes used.
        length: u64,
    },
}

impl BufferRef<'_> {
    /// `bytes` bytes at `byte_offset` of binding-table slot `slot` (a slot is untyped, so it
    /// counts bytes; [`Self::slot_of`] counts elements).
    pub fn slot(slot: u32, byte_offset: u64, bytes: u64) -> Self {
        BufferRef::Slot { slot, offset: byte_offset, length: bytes }
    }

    /// `count` elements of `T` from element `first` of binding-table slot `slot`, as
    /// [`Buffer::range`](crate::Buffer::range) counts them.
    pub fn slot_of<T: bytemuck::Pod>(slot: u32, first: u64, count: u64) -> Self {
        let element = size_of::<T>() as u64;
        // Saturated: an overflowing range is out of bounds when it is checked.
        Self::slot(slot, first.saturating_mul(element), count.saturating_mul(element))
    }

    fn length(&self) -> u64 {
        match self {
            BufferRef::Static(binding) => binding.length,
            BufferRef::Slot { length, .. } => *length,
        }
    }
}

impl<'a> From<Binding<'a>> for BufferRef<'a> {
    fn from(binding: Binding<'a>) -> Self {
        BufferRef::Static(binding)
    }
}

impl<'a> From<&'a Buffer> for BufferRef<'a> {
    fn from(buffer: &'a Buffer) -> Self {
        BufferRef::Static(buffer.whole())
    }
}

/// A block of the program being recorded; label 0 is the entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockLabel(pub(crate) u32);

impl BlockLabel {
    /// The block recording starts in, where execution starts.
    pub const ENTRY: BlockLabel = BlockLabel(0);
}

/// One user block: where its chunks are, and how it ends.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct UserBlock {
    pub begun: bool,
    /// Set once a branch, conditional branch or return closed it.
    pub terminated: bool,
    /// Its chunks are `chunks[first_chunk..first_chunk + chunk_count]` (a block is recorded in
    /// one go, so they are adjacent).
    pub first_chunk: u32,
    pub chunk_count: u32,
}

/// One chunk: a block of the program. Its records are the recorder's arenas from its starts to
/// the next chunk's starts (or the arenas' ends), because chunks are recorded one after another.
#[derive(Clone, Copy, Debug)]
pub(super) struct Chunk {
    pub command_start: usize,
    pub source_start: usize,
    pub patch_start: usize,
    /// 64-byte aligned, so rodata offsets relative to it keep their alignment in the image.
    pub rodata_start: usize,
    pub static_sources: u32,
    /// The recording index of the chunk's first command (see [`Recorder::terminators`]).
    pub first_command: u32,
    pub cost: ExecutionCost,
    /// The branch, conditional branch or return that ended the user block (branch targets are
    /// labels until layout turns them into ordinals).
    pub closing: Option<Command>,
    pub terminator: TerminatorKind,
}

/// What finishing counts into [`super::ProgramFacts`], counted as commands are recorded.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    pub dispatches: u32,
    pub prepublished: u32,
    pub patched_template: u32,
    pub pointer_scatter: u32,
    pub indirect: u32,
    pub transfers: u32,
    /// Updates read their payload from the published image.
    pub updates: u32,
}

/// The recording state. Every record goes into one of the flat arenas below, which keep their
/// capacity when the device recycles the recorder, so recording a program of a size seen before
/// allocates nothing.
#[derive(Default)]
pub(crate) struct Recorder {
    pub(super) limits: BlockLimits,
    pub(super) blocks: Vec<UserBlock>,
    pub(super) chunks: Vec<Chunk>,
    pub(super) current: usize,
    pending_barrier: bool,
    pub(super) commands: Vec<Command>,
    /// Per command: its block step and packet, offsets relative to its chunk (finishing
    /// rebases them and sets the header words).
    pub(super) steps: Vec<BlockStep>,
    pub(super) packets: Vec<KernelDispatchPacket>,
    pub(super) sources: Vec<BindingSource>,
    pub(super) patches: Vec<PatchRecord>,
    /// Per patch record: the same patch with its source resolved to a slot.
    pub(super) slot_patches: Vec<SlotPatch>,
    pub(super) rodata: Vec<u8>,
    /// Branches, conditional branches and returns recorded so far. Commands are numbered in
    /// recording order, payload commands and these terminators alike (a barrier is no command:
    /// it folds into its neighbours' flags); a terminator is its block's last record, so a
    /// chunk's first command is numbered `commands.len() + terminators` when it opens.
    pub(super) terminators: u32,
    pub(super) counts: Counts,
    /// Static buffers and executables, each once.
    pub(super) retained: Vec<Retained>,
    /// The last buffer and executable retained: commands name a few many times over.
    last_retained: [usize; 2],
    pub(super) slot_needs: Vec<SlotNeed>,
    pub(super) copy_checks: Vec<CopyCheck>,
    /// Finishing's scratch: the blocks' headers and the labels' first ordinals.
    pub(super) scratch_headers: Vec<aqueduct_abi::block_program::BlockHeader>,
    pub(super) scratch_ordinals: Vec<u32>,
}

/// What a command needs of the memory a reference names.
#[derive(Clone, Copy, Debug)]
struct Access {
    /// A conditional branch reads it on the host.
    host_visible: bool,
    align: u64,
}

const ANY_ACCESS: Access = Access { host_visible: false, align: 1 };

pub(super) fn check_limits(limits: BlockLimits) -> EngineResult<()> {
    // The costliest single command: an indirect dispatch (2 packets) with a 64 KiB kernarg segment.
    if limits.packets < 2 || limits.kernarg_bytes < 70 * 1024 {
        return Err(EngineError::InvalidArgument {
            what: "block limits",
            reason: format!("{limits:?}: at least 2 packets and 71,680 kernarg bytes, so any one command fits a block"),
        });
    }
    Ok(())
}

impl Recorder {
    /// Empties every buffer (keeping its capacity) and opens the entry block.
    pub fn start(&mut self, limits: BlockLimits) {
        self.clear();
        self.limits = limits;
        self.blocks.push(UserBlock { begun: true, ..UserBlock::default() });
        self.pending_barrier = true;
        self.open_chunk();
    }

    /// Empties every buffer, keeping its capacity.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.chunks.clear();
        self.current = 0;
        self.commands.clear();
        self.steps.clear();
        self.packets.clear();
        self.sources.clear();
        self.patches.clear();
        self.slot_patches.clear();
        self.rodata.clear();
        self.terminators = 0;
        self.counts = Counts::default();
        self.retained.clear();
        self.last_retained = [0; 2];
        self.slot_needs.clear();
        self.copy_checks.clear();
        self.scratch_headers.clear();
        self.scratch_ordinals.clear();
    }

    /// Bytes the buffers hold on to.
    pub fn capacity_bytes(&self) -> usize {
        fn bytes<T>(vec: &Vec<T>) -> usize {
            vec.capacity() * size_of::<T>()
        }
        bytes(&self.blocks)
            + bytes(&self.chunks)
            + bytes(&self.commands)
            + bytes(&self.steps)
            + bytes(&self.packets)
            + bytes(&self.sources)
            + bytes(&self.patches)
            + bytes(&self.slot_patches)
            + bytes(&self.rodata)
            + bytes(&self.scratch_headers)
            + bytes(&self.scratch_ordinals)
    }

    /// Starts a chunk of the current block at the arenas' ends.
    fn open_chunk(&mut self) {
        let rodata_start = self.rodata.len().next_multiple_of(RODATA_ALIGN as usize);
        self.rodata.resize(rodata_start, 0);
        self.chunks.push(Chunk {
            command_start: self.commands.len(),
            source_start: self.sources.len(),
            patch_start: self.patches.len(),
            rodata_start,
            static_sources: 0,
            first_command: self.commands.len() as u32 + self.terminators,
            cost: ExecutionCost::default(),
            closing: None,
            terminator: TerminatorKind::Return,
        });
        self.blocks[self.current].chunk_count += 1;
    }

    fn chunk(&self) -> &Chunk {
        self.chunks.last().expect("the current block has a chunk")
    }

    fn chunk_mut(&mut self) -> &mut Chunk {
        self.chunks.last_mut().expect("the current block has a chunk")
    }

    fn open_block(&self) -> EngineResult<()> {
        if self.blocks[self.current].terminated {
            return Err(EngineError::CommandBufferState {
                reason: "the current block already ended with a branch or return; begin() another block",
            });
        }
        Ok(())
    }

    /// Starts a new chunk when `cost` (plus `records` sources or patches) would overflow the
    /// current one, and counts `cost` into the chunk that takes the command.
    #[inline(always)]
    fn chunk_for(&mut self, cost: ExecutionCost, records: usize) {
        let limits = self.limits;
        let chunk = self.chunk();
        let full = self.commands.len() > chunk.command_start
            && (chunk.cost.packets + cost.packets > u64::from(limits.packets)
                || chunk.cost.kernarg_bytes + cost.kernarg_bytes > u64::from(limits.kernarg_bytes)
                || (self.sources.len() - chunk.source_start).max(self.patches.len() - chunk.patch_start) + records
                    > CHUNK_RECORD_LIMIT);
        if full {
            self.open_chunk();
        }
        let chunk = self.chunk_mut();
        chunk.cost = chunk.cost.saturating_add(cost);
    }

    /// Appends a binding source to the current chunk and returns its block-local index.
    #[inline(always)]
    fn push_source(&mut self, source: BindingSource) -> u16 {
        let chunk = self.chunks.last_mut().expect("the current block has a chunk");
        let index = (self.sources.len() - chunk.source_start) as u16;
        chunk.static_sources += u32::from(source.source_kind() == Some(SourceKind::Static));
        self.sources.push(source);
        index
    }

    /// Reserves `length` zeroed rodata bytes of the current chunk at the next multiple of
    /// `align` (at most 64) and returns their chunk-relative offset and arena range.
    #[inline(always)]
    fn reserve_rodata(&mut self, length: usize, align: u32) -> (u32, std::ops::Range<usize>) {
        let at = self.rodata.len().next_multiple_of(align as usize);
        self.rodata.resize(at + length, 0);
        ((at - self.chunk().rodata_start) as u32, at..at + length)
    }

    fn push_rodata(&mut self, bytes: &[u8], align: u32) -> u32 {
        let (offset, range) = self.reserve_rodata(bytes.len(), align);
        self.rodata[range].copy_from_slice(bytes);
        offset
    }

    /// Appends a payload command with its block step and packet.
    fn push_command(&mut self, command: Command, step: BlockStep, packet: KernelDispatchPacket) {
        self.commands.push(command);
        self.steps.push(step);
        self.packets.push(packet);
    }

    /// Appends a zeroed command, an interpreted step and a zeroed packet, and returns them to
    /// be filled in place.
    #[inline(always)]
    fn push_slots(&mut self) -> (&mut Command, &mut BlockStep, &mut KernelDispatchPacket) {
        self.commands.push(Command::zeroed());
        self.steps.push(BlockStep::default());
        self.packets.push(KernelDispatchPacket::zeroed());
        let last = self.commands.len() - 1;
        (&mut self.commands[last], &mut self.steps[last], &mut self.packets[last])
    }

    /// The flags of the next payload command; a pending barrier also releases the previous one.
    #[inline(always)]
    fn take_flags(&mut self) -> CommandFlags {
        if !std::mem::take(&mut self.pending_barrier) {
            return CommandFlags::NONE;
        }
        self.release_last(FenceScope::Agent);
        CommandFlags::new(true, FenceScope::Agent, FenceScope::None)
    }

    /// Raises the release scope of the current block's last payload command to at least `scope`.
    #[inline(always)]
    fn release_last(&mut self, scope: FenceScope) {
        let block = self.blocks[self.current];
        let first = self.chunks[block.first_chunk as usize].command_start;
        if self.commands.len() <= first {
            return;
        }
        let Some(command) = self.commands.last_mut() else { return };
        let flags = command.flags();
        let release = flags.release_bits().max(scope as u8);
        command.bytes[1] = flags.0 & !(3 << CommandFlags::RELEASE_SHIFT) | release << CommandFlags::RELEASE_SHIFT;
    }

    /// Keeps what a checked, recorded reference needs: its buffer alive, or its slot's
    /// requirements for every execution's binding table.
    #[inline(always)]
    fn commit_ref(&mut self, reference: BufferRef<'_>, access: Access) {
        match reference {
            BufferRef::Static(binding) => self.retain(&binding.buffer.0, 0),
            BufferRef::Slot { slot, offset, length } => {
                let index = slot as usize;
                if self.slot_needs.len() <= index {
                    self.slot_needs.resize(index + 1, SlotNeed::default());
                }
                let need = &mut self.slot_needs[index];
                need.used = true;
                need.length = need.length.max(offset.saturating_add(length));
                need.host_visible |= access.host_visible;
                need.align = need.align.max(access.align);
            }
        }
    }

    /// Retains `object` once; `cache` picks the last-retained entry to check first (0 buffers,
    /// 1 executables).
    #[inline(always)]
    fn retain<T: Send + Sync + 'static>(&mut self, object: &Arc<T>, cache: usize) {
        let address = Arc::as_ptr(object) as *const () as usize;
        if self.last_retained[cache] == address {
            return;
        }
        self.last_retained[cache] = address;
        if !self.retained.iter().any(|kept| Arc::as_ptr(kept) as *const () as usize == address) {
            self.retained.push(object.clone() as Retained);
        }
    }

    /// Appends a checked dispatch's sources, then its constants (pointer scatter) or kernarg
    /// template and patches, and counts it. Call after [`Self::chunk_for`], so the records land
    /// in the chunk that takes the command; returns where they went.
    #[inline(always)]
    fn push_dispatch_records(
        &mut self,
        checked: &CheckedDispatch<'_>,
        dispatch: &Dispatch<'_, BufferRef<'_>>,
    ) -> DispatchRecords {
        let sources_start = self.sources.len();
        let first_source = (sources_start - self.chunk().source_start) as u16;
        for binding in dispatch.bindings {
            self.push_source(source_of(*binding));
        }
        let indirect_source = checked.indirect_source.map_or(NO_SOURCE, |counts| self.push_source(counts));
        let constants: &[u8] = bytemuck::cast_slice(dispatch.constants);
        let (mut template_offset, mut constants_offset, mut patches) = (0, 0, 0..0);
        self.counts.dispatches += 1;
        if checked.strategy == KernargStrategy::PointerScatter {
            self.counts.pointer_scatter += 1;
            constants_offset = self.push_rodata(constants, 4);
        } else {
            let bindings = sources_start..sources_start + dispatch.bindings.len();
            (template_offset, patches) = self.push_kernarg_template(checked, constants, bindings, first_source);
        }
        DispatchRecords { first_source, indirect_source, template_offset, constants_offset, patches }
    }

    /// Writes a dispatch's kernarg template into fresh rodata and, unless it is prepublished, a
    /// patch for each dynamic binding (`bindings`: its sources in the arena, the first numbered
    /// `first_source` in the chunk). Returns the template's offset and the patch range.
    #[inline(always)]
    fn push_kernarg_template(
        &mut self,
        checked: &CheckedDispatch<'_>,
        constants: &[u8],
        bindings: std::ops::Range<usize>,
        first_source: u16,
    ) -> (u32, std::ops::Range<usize>) {
        // The template: the whole kernarg segment as a direct dispatch writes it (the same
        // writer and implicit block), with dynamic pointers zero until execution patches them.
        let (offset, range) =
            self.reserve_rodata(usize::from(checked.kernarg_size), u32::from(checked.kernarg_alignment));
        let Recorder { rodata, sources, patches: patch_records, slot_patches, chunks, .. } = self;
        let sources = &sources[bindings];
        let pointers =
            sources.iter().map(|source| if source.kind == SourceKind::Static as u8 { source.value } else { 0 });
        let implicit = checked.validated.implicit();
        let implicit = implicit.as_ref().map(|(offset, block)| (*offset, block));
        write_hal_kernargs(&mut rodata[range], pointers, constants, implicit);
        let mut patches = 0..0;
        if checked.strategy != KernargStrategy::Prepublished {
            let chunk_patches = chunks.last().map_or(0, |chunk| chunk.patch_start);
            let first = patch_records.len() - chunk_patches;
            for (index, source) in sources.iter().enumerate() {
                if source.kind == SourceKind::Dynamic as u8 {
                    let source_index = first_source + index as u16;
                    patch_records.push(PatchRecord::new(8 * index as u32, source_index));
                    slot_patches.push(SlotPatch {
                        kernarg_offset: 8 * index as u16,
                        source: source_index,
                        slot: source.slot,
                        offset: source.value,
                    });
                }
            }
            patches = first..patch_records.len() - chunk_patches;
        }
        (offset, patches)
    }
}

/// The binding source a reference checked by [`check_ref`] records.
#[inline(always)]
fn source_of(reference: BufferRef<'_>) -> BindingSource {
    match reference {
        BufferRef::Static(binding) => BindingSource::fixed(binding.buffer.device_address() + binding.offset),
        BufferRef::Slot { slot, offset, .. } => BindingSource::dynamic(slot, offset),
    }
}

/// The recorder of a command buffer that is still recording.
fn recording(state: &mut State) -> EngineResult<&mut Recorder> {
    match state {
        State::Recording(recorder) => Ok(recorder),
        State::Finished(_) | State::Released => {
            Err(EngineError::CommandBufferState { reason: "it is finished; record into a new command buffer" })
        }
    }
}

/// Checks a buffer reference and returns the binding source to record. Changes nothing:
/// [`Recorder::commit_ref`] does, once the whole command is checked.
///
/// Inlined: out of line, the source came back through the `Result` in pieces and was re-read
/// whole, a store-forwarding stall that cost more than the checks.
#[inline(always)]
fn check_ref(
    device: &DeviceShared,
    what: &'static str,
    reference: BufferRef<'_>,
    access: Access,
) -> EngineResult<BindingSource> {
    let align = access.align;
    match reference {
        BufferRef::Static(binding) => {
            binding.buffer.belongs_to(device)?;
            if binding.buffer.pool_origin().is_some() {
                // A recording outlives any one alloca; the table is checked at each execution.
                return Err(EngineError::InvalidArgument {
                    what,
                    reason: "an alloca's buffer binds through a binding table, not statically".into(),
                });
            }
            let address = binding.buffer.check_range(what, binding.offset, binding.length)?;
            if access.host_visible && !binding.buffer.kind().host_accessible() {
                return Err(EngineError::NotHostAccessible { kind: binding.buffer.kind() });
            }
            if !address.is_multiple_of(align) {
                return Err(EngineError::InvalidArgument {
                    what,
                    reason: format!("address {address:#x} is not {align}-byte aligned"),
                });
            }
            Ok(BindingSource::fixed(address))
        }
        BufferRef::Slot { slot, offset, length } => {
            if slot >= MAX_BINDING_SLOTS {
                return Err(EngineError::InvalidArgument {
                    what,
                    reason: format!("slot {slot} is past the {MAX_BINDING_SLOTS}-slot limit"),
                });
            }
            if offset.checked_add(length).is_none() {
                return Err(EngineError::OutOfBounds { what, offset, length, size: u64::MAX });
            }
            if !offset.is_multiple_of(align) {
                return Err(EngineError::InvalidArgument {
                    what,
                    reason: format!("slot offset {offset} is not {align}-byte aligned"),
                });
            }
            Ok(BindingSource::dynamic(slot, offset))
        }
    }
}

/// What an indirect dispatch needs of its counts buffer: three u32 workgroup counts.
const COUNTS_ACCESS: Access = Access { host_visible: false, align: 4 };

/// A dispatch that passed every recording check, with what its records are built from.
struct CheckedDispatch<'k> {
    validated: ValidatedDispatch<'k>,
    strategy: KernargStrategy,
    kernarg_size: u16,
    kernarg_alignment: u8,
    /// The counts' binding source, for an indirect dispatch.
    indirect_source: Option<BindingSource>,
}

/// Where a dispatch's records went; indices and offsets are relative to the chunk that took it.
struct DispatchRecords {
    first_source: u16,
    /// The counts' source index, or [`NO_SOURCE`].
    indirect_source: u16,
    template_offset: u32,
    constants_offset: u32,
    patches: std::ops::Range<usize>,
}

/// Checks a dispatch for recording (the kernel and its arguments, the kernarg size a command
/// carries, the indirect counts, every binding) and picks its strategy. Changes nothing, so on
/// error nothing was recorded.
#[inline(always)]
fn check_dispatch<'k>(
    device: &DeviceShared,
    agent: usize,
    usage: CommandBufferUsage,
    kernel: &'k Kernel,
    dispatch: &Dispatch<'_, BufferRef<'_>>,
    indirect: Option<BufferRef<'_>>,
) -> EngineResult<CheckedDispatch<'k>> {
    let grid = if indirect.is_some() { GridSource::Buffer } else { GridSource::Dispatch };
    let validated = validate_dispatch(device, agent, kernel, dispatch, grid)?;
    let info = validated.info;
    let kernarg_size = u16::try_from(info.kernarg_size).map_err(|_| EngineError::KernargMismatch {
        kernel: info.name.clone(),
        reason: format!("{}-byte kernarg segment; command buffers carry at most 65,535", info.kernarg_size),
    })?;
    let indirect_source = match indirect {
        Some(counts) if counts.length() < 12 => {
            return Err(EngineError::InvalidArgument {
                what: "indirect counts",
                reason: format!("{} bytes; three u32 counts need 12", counts.length()),
            });
        }
        Some(counts) => Some(check_ref(device, "indirect counts", counts, COUNTS_ACCESS)?),
        None => None,
    };
    let mut dynamic = 0usize;
    for binding in dispatch.bindings {
        check_ref(device, "binding", *binding, ANY_ACCESS)?;
        dynamic += usize::from(matches!(binding, BufferRef::Slot { .. }));
    }
    let strategy = if indirect_source.is_some() {
        KernargStrategy::Indirect
    } else if dynamic == 0 && usage == CommandBufferUsage::Reusable {
        KernargStrategy::Prepublished
    } else if dynamic > 0 && dynamic == dispatch.bindings.len() && validated.layout.implicit_offset.is_none() {
        KernargStrategy::PointerScatter
    } else {
        KernargStrategy::PatchedTemplate
    };
    let kernarg_alignment = info.kernarg_alignment.min(MAX_KERNARG_ALIGNMENT) as u8;
    Ok(CheckedDispatch { validated, strategy, kernarg_size, kernarg_alignment, indirect_source })
}

/// Stores a dispatch command's fields into `command`, a zeroed slot in the command arena.
#[inline(always)]
fn write_dispatch_command(
    command: &mut DispatchCommand,
    flags: CommandFlags,
    checked: &CheckedDispatch<'_>,
    dispatch: &Dispatch<'_, BufferRef<'_>>,
    records: &DispatchRecords,
) {
    let template = &checked.validated.template;
    command.header = CommandHeader::new(CommandKind::Dispatch, flags);
    command.kernarg_strategy = checked.strategy as u8;
    command.kernarg_alignment = checked.kernarg_alignment;
    command.workgroup_size = template.workgroup;
    command.kernarg_size = checked.kernarg_size;
    command.grid_size = template.grid;
    command.kernel_object = template.kernel_object;
    command.private_segment_size = template.private_segment_size;
    command.group_segment_size = template.group_segment_size;
    command.template_offset = records.template_offset;
    command.constants_offset = records.constants_offset;
    if checked.strategy == KernargStrategy::PointerScatter {
        command.constant_count = dispatch.constants.len() as u16;
    } else {
        command.template_length = checked.kernarg_size;
    }
    command.first_source = records.first_source;
    command.source_count = dispatch.bindings.len() as u16;
    command.first_patch = records.patches.start as u16;
    command.patch_count = records.patches.len() as u16;
    command.implicit_args_offset =
        checked.validated.layout.implicit_offset.map_or(NO_IMPLICIT_ARGS, |offset| offset as u16);
    command.indirect_source = records.indirect_source;
}

/// Bakes a non-interpreted dispatch's block step and packet into `step` and `packet`, the zeroed
/// slots pushed with its command.
///
/// Finishing sets the header word and rebases the kernarg address (prepublished: the
/// template's device address; a template step's execution points it at its copy).
#[inline(always)]
fn bake_dispatch_step(
    step: &mut BlockStep,
    packet: &mut KernelDispatchPacket,
    kind: StepKind,
    checked: &CheckedDispatch<'_>,
    records: &DispatchRecords,
) {
    let template = &checked.validated.template;
    step.kind = kind;
    step.kernarg_bytes = u32::from(checked.kernarg_size);
    step.template = records.template_offset;
    step.first_patch = records.patches.start as u32;
    step.patch_count = records.patches.len() as u32;
    packet.setup = template.dimensions;
    packet.workgroup_size_x = template.workgroup[0];
    packet.workgroup_size_y = template.workgroup[1];
    packet.workgroup_size_z = template.workgroup[2];
    packet.grid_size_x = template.grid[0];
    packet.grid_size_y = template.grid[1];
    packet.grid_size_z = template.grid[2];
    packet.group_segment_size = template.group_segment_size;
    packet.private_segment_size = template.private_segment_size;
    packet.kernel_object = template.kernel_object;
    packet.kernarg_address = u64::from(records.template_offset);
}

impl CommandBuffer {
    pub(super) fn dispatch_unrecorded(
        &mut self,
        kernel: &Kernel,
        dispatch: &Dispatch<'_, BufferRef<'_>>,
    ) -> EngineResult<()> {
        self.record_dispatch(kernel, dispatch, None)
    }

    pub(super) fn dispatch_indirect_unrecorded(
        &mut self,
        kernel: &Kernel,
        dispatch: &Dispatch<'_, BufferRef<'_>>,
        counts: BufferRef<'_>,
    ) -> EngineResult<()> {
        self.record_dispatch(kernel, dispatch, Some(counts))
    }

    fn record_dispatch(
        &mut self,
        kernel: &Kernel,
        dispatch: &Dispatch<'_, BufferRef<'_>>,
        indirect: Option<BufferRef<'_>>,
    ) -> EngineResult<()> {
        let Self { device, agent, usage, state, .. } = self;
        let recorder = recording(state)?;
        recorder.open_block()?;
        // Every check first (nothing is written until the whole command is known to be good).
        let checked = check_dispatch(device, *agent, *usage, kernel, dispatch, indirect)?;
        let cost = DispatchCommand::cost(Some(checked.strategy), checked.kernarg_size);

        // Commit the references, then write the records in place: each record is zeroed in its
        // arena and its fields stored there, never assembled elsewhere and copied (a copy of a
        // record just stored field by field stalls on store forwarding).
        for binding in dispatch.bindings {
            recorder.commit_ref(*binding, ANY_ACCESS);
        }
        if let Some(counts) = indirect {
            recorder.commit_ref(counts, COUNTS_ACCESS);
        }
        recorder.retain(&kernel.executable, 1);
        let flags = recorder.take_flags();
        recorder.chunk_for(cost, dispatch.bindings.len() + 1);
        let records = recorder.push_dispatch_records(&checked, dispatch);
        let kind = match checked.strategy {
            KernargStrategy::Prepublished => {
                recorder.counts.prepublished += 1;
                StepKind::Baked
            }
            KernargStrategy::PatchedTemplate => {
                recorder.counts.patched_template += 1;
                StepKind::Template
            }
            KernargStrategy::Indirect => {
                recorder.counts.indirect += 1;
                StepKind::Interpret
            }
            KernargStrategy::PointerScatter => StepKind::Interpret,
        };
        let (command, step, packet) = recorder.push_slots();
        write_dispatch_command(bytemuck::cast_mut(command), flags, &checked, dispatch, &records);
        if kind != StepKind::Interpret {
            bake_dispatch_step(step, packet, kind, &checked, &records);
        }
        Ok(())
    }

    pub(super) fn fill_unrecorded<'b>(&mut self, target: impl Into<BufferRef<'b>>, pattern: &[u8]) -> EngineResult<()> {
        recording(&mut self.state)?.open_block()?;
        let target = target.into();
        let width = u8::try_from(pattern.len()).unwrap_or(0);
        let mut word = [0u8; 8];
        word[..pattern.len().min(8)].copy_from_slice(&pattern[..pattern.len().min(8)]);
        let pattern_value = u64::from_le_bytes(word);
        // The planner's checks (width, length) against a stand-in address; the real one is planned at execution.
        aqueduct_builtins::plan_fill(0x1000, target.length(), pattern_value, width)?;
        let source = check_ref(&self.device, "fill target", target, ANY_ACCESS)?;
        let length = target.length();
        self.push_with_sources(&[target], ANY_ACCESS, &[source], |[index, _]| {
            FillCommand::new(index, length, pattern_value, width)
        })
    }

    pub(super) fn copy_unrecorded<'b>(
        &mut self,
        source: impl Into<BufferRef<'b>>,
        target: impl Into<BufferRef<'b>>,
    ) -> EngineResult<()> {
        recording(&mut self.state)?.open_block()?;
        let (source, target) = (source.into(), target.into());
        if source.length() != target.length() {
            return Err(EngineError::InvalidArgument {
                what: "copy",
                reason: format!("source is {} bytes, target {}", source.length(), target.length()),
            });
        }
        let length = source.length();
        let from = check_ref(&self.device, "copy source", source, ANY_ACCESS)?;
        let to = check_ref(&self.device, "copy target", target, ANY_ACCESS)?;
        let both_static =
            from.source_kind() == Some(SourceKind::Static) && to.source_kind() == Some(SourceKind::Static);
        if both_static {
            aqueduct_builtins::plan_copy(from.value, to.value, length)?;
        } else {
            recording(&mut self.state)?.copy_checks.push(CopyCheck { source: from, target: to, length });
        }
        self.push_with_sources(&[source, target], ANY_ACCESS, &[from, to], |[from, to]| {
            CopyCommand::new(from, to, length)
        })
    }

    pub(super) fn update_unrecorded<'b>(&mut self, target: impl Into<BufferRef<'b>>, data: &[u8]) -> EngineResult<()> {
        recording(&mut self.state)?.open_block()?;
        let target = target.into();
        if data.is_empty() || data.len() > MAX_RECORDED_UPDATE || data.len() as u64 != target.length() {
            return Err(EngineError::InvalidArgument {
                what: "update",
                reason: format!(
                    "{} bytes into a {}-byte range; 1 to {MAX_RECORDED_UPDATE} bytes, matching the range",
                    data.len(),
                    target.length()
                ),
            });
        }
        let source = check_ref(&self.device, "update target", target, ANY_ACCESS)?;
        let recorder = recording(&mut self.state)?;
        recorder.commit_ref(target, ANY_ACCESS);
        let flags = recorder.take_flags();
        let probe = UpdateCommand::new(0, 0, data.len() as u32);
        recorder.chunk_for(DecodedCommand::Update(probe).execution_cost(), 1);
        let target = recorder.push_source(source);
        let payload = recorder.push_rodata(data, 16);
        let command = UpdateCommand::new(target, payload, data.len() as u32).with_flags(flags);
        recorder.counts.transfers += 1;
        recorder.counts.updates += 1;
        recorder.push_command(command.into(), BlockStep::default(), KernelDispatchPacket::default());
        Ok(())
    }

    pub(super) fn barrier_unrecorded(&mut self) -> EngineResult<()> {
        let recorder = recording(&mut self.state)?;
        recorder.open_block()?;
        recorder.pending_barrier = true;
        Ok(())
    }

    pub(super) fn profile_marker_unrecorded<'b>(
        &mut self,
        target: impl Into<BufferRef<'b>>,
        marker_id: u32,
    ) -> EngineResult<()> {
        recording(&mut self.state)?.open_block()?;
        let target = target.into();
        if target.length() < 8 {
            return Err(EngineError::InvalidArgument {
                what: "profile marker",
                reason: format!("{}-byte target; a timestamp needs 8", target.length()),
            });
        }
        const STAMP_ACCESS: Access = Access { host_visible: false, align: 8 };
        let source = check_ref(&self.device, "profile marker", target, STAMP_ACCESS)?;
        self.push_with_sources(&[target], STAMP_ACCESS, &[source], |[index, _]| {
            ProfileMarkerCommand::new(index, marker_id)
        })
    }

    pub(super) fn new_block_unrecorded(&mut self) -> EngineResult<BlockLabel> {
        let recorder = recording(&mut self.state)?;
        let label = BlockLabel(recorder.blocks.len() as u32);
        recorder.blocks.push(UserBlock::default());
        Ok(label)
    }

    pub(super) fn begin_unrecorded(&mut self, label: BlockLabel) -> EngineResult<()> {
        let recorder = recording(&mut self.state)?;
        let block = recorder.blocks.get(label.0 as usize).ok_or(EngineError::InvalidArgument {
            what: "block label",
            reason: format!("{label:?} is not a block of this command buffer"),
        })?;
        if block.begun {
            return Err(EngineError::CommandBufferState { reason: "that block was already begun" });
        }
        close(recorder);
        recorder.current = label.0 as usize;
        let first_chunk = recorder.chunks.len() as u32;
        let block = &mut recorder.blocks[label.0 as usize];
        block.begun = true;
        block.first_chunk = first_chunk;
        recorder.open_chunk();
        recorder.pending_barrier = true;
        Ok(())
    }

    pub(super) fn branch_unrecorded(&mut self, target: BlockLabel) -> EngineResult<()> {
        self.check_label(target)?;
        self.terminate(BranchCommand::new(target.0).into(), TerminatorKind::Branch, None)
    }

    pub(super) fn branch_if_unrecorded<'b>(
        &mut self,
        value: impl Into<BufferRef<'b>>,
        compare: CompareOp,
        operand: u64,
        taken: BlockLabel,
        not_taken: BlockLabel,
    ) -> EngineResult<()> {
        self.check_label(taken)?;
        self.check_label(not_taken)?;
        recording(&mut self.state)?.open_block()?;
        let value = value.into();
        let width = match value.length() {
            4 if operand <= u64::from(u32::MAX) => 4u8,
            8 => 8,
            length => {
                return Err(EngineError::InvalidArgument {
                    what: "branch condition",
                    reason: format!("a {length}-byte value with operand {operand}; 4 bytes (operand < 2^32) or 8"),
                });
            }
        };
        let access = Access { host_visible: true, align: u64::from(width) };
        let source = check_ref(&self.device, "branch condition", value, access)?;
        recording(&mut self.state)?.commit_ref(value, access);
        let command = CondBranchCommand::new(0, width, compare, operand, taken.0, not_taken.0);
        self.terminate(command.into(), TerminatorKind::CondBranch, Some(source))
    }

    pub(super) fn ret_unrecorded(&mut self) -> EngineResult<()> {
        self.terminate(ReturnCommand::new().into(), TerminatorKind::Return, None)
    }

    fn check_label(&mut self, label: BlockLabel) -> EngineResult<()> {
        if label.0 as usize >= recording(&mut self.state)?.blocks.len() {
            return Err(EngineError::InvalidArgument {
                what: "block label",
                reason: format!("{label:?} is not a block of this command buffer"),
            });
        }
        Ok(())
    }

    fn terminate(
        &mut self,
        mut command: Command,
        terminator: TerminatorKind,
        source: Option<BindingSource>,
    ) -> EngineResult<()> {
        let recorder = recording(&mut self.state)?;
        recorder.open_block()?;
        recorder.chunk_for(ExecutionCost::default(), 1);
        if let Some(source) = source {
            let index = recorder.push_source(source);
            command.bytes[4..6].copy_from_slice(&index.to_le_bytes());
        }
        let chunk = recorder.chunk_mut();
        chunk.closing = Some(command);
        chunk.terminator = terminator;
        recorder.terminators += 1;
        recorder.blocks[recorder.current].terminated = true;
        // The block's last payload command releases what it wrote to whoever runs next.
        recorder.release_last(FenceScope::Agent);
        Ok(())
    }

    /// Commits `references` (checked into `sources`, at most two) and records the transfer
    /// `make` builds from the sources' block-local indices.
    fn push_with_sources<C: CommandRecord>(
        &mut self,
        references: &[BufferRef<'_>],
        access: Access,
        sources: &[BindingSource],
        make: impl Fn([u16; 2]) -> C,
    ) -> EngineResult<()> {
        let cost = DecodedCommand::execution_cost(&make([0, 0]).into().decode().expect("a recorded command decodes"));
        let recorder = recording(&mut self.state)?;
        for reference in references {
            recorder.commit_ref(*reference, access);
        }
        let flags = recorder.take_flags();
        recorder.chunk_for(cost, sources.len());
        let mut indices = [0u16; 2];
        for (index, source) in indices.iter_mut().zip(sources) {
            *index = recorder.push_source(*source);
        }
        recorder.counts.transfers += 1;
        let command = make(indices).with_flags(flags).into();
        recorder.push_command(command, BlockStep::default(), KernelDispatchPacket::default());
        Ok(())
    }
}

/// Closes the current block before recording moves on: an unterminated block returns, and a
/// barrier still pending releases its last command.
pub(super) fn close(recorder: &mut Recorder) {
    if !recorder.blocks[recorder.current].terminated {
        recorder.release_last(FenceScope::Agent);
    }
}
