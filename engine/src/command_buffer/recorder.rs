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
    BindingSource, BlockBuf, BranchCommand, Command, CommandFlags, CommandRecord, CompareOp, CondBranchCommand,
    CopyCommand, DecodedCommand, DispatchCommand, FillCommand, KernargStrategy, MAX_KERNARG_ALIGNMENT, PatchRecord,
    ProfileMarkerCommand, ReplayCost, ReturnCommand, SourceKind, TerminatorKind, UpdateCommand,
};
use aqueduct_abi::packet::FenceScope;
use aqueduct_abi::write_hal_kernargs;
use aqueduct_components::Retained;
use aqueduct_components::device_entities::MemoryKind;

use super::needs::{CopyCheck, SlotNeed};
use super::{BlockLimits, CommandBuffer, CommandBufferUsage};
use crate::dispatch::{Dispatch, GridSource, validate_dispatch};
use crate::error::{EngineError, EngineResult};
use crate::executable::Kernel;
use crate::memory::{Binding, Buffer};

/// Most binding-table slots a program may name.
pub const MAX_BINDING_SLOTS: u32 = 1 << 16;
/// Sources or patches per chunk before it splits (the ABI's u16 indices stop at 65,534).
const CHUNK_RECORD_LIMIT: usize = 60_000;
/// Largest update payload a command buffer carries in its rodata.
const MAX_RECORDED_UPDATE: usize = crate::queue::MAX_UPDATE_BYTES;

/// A buffer range a command uses: fixed at record time, or a binding-table slot resolved at
/// every execution.
#[derive(Clone, Copy, Debug)]
pub enum BufferRef<'a> {
    Static(Binding<'a>),
    /// `length` bytes at `offset` into the slot's range.
    Slot {
        slot: u32,
        offset: u64,
        length: u64,
    },
}

impl BufferRef<'_> {
    /// `length` bytes at `offset` of binding-table slot `slot`.
    pub fn slot(slot: u32, offset: u64, length: u64) -> Self {
        BufferRef::Slot { slot, offset, length }
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

/// One user block: its chunks, and how it ends.
pub(super) struct UserBlock {
    pub chunks: Vec<BlockBuf>,
    pub begun: bool,
    /// Set once a branch, conditional branch or return closed it.
    pub terminated: bool,
    /// Replay cost of the last chunk so far.
    pub chunk_cost: ReplayCost,
}

pub(crate) struct Recorder {
    pub(super) limits: BlockLimits,
    pub(super) blocks: Vec<UserBlock>,
    pub(super) current: usize,
    pending_barrier: bool,
    pub(super) retained: Vec<Retained>,
    pub(super) slot_needs: Vec<SlotNeed>,
    pub(super) copy_checks: Vec<CopyCheck>,
    pub(super) kernels: Vec<Kernel>,
    /// Reused by every dispatch, so recording allocates only as the program grows.
    scratch_sources: Vec<BindingSource>,
    scratch_kernargs: Vec<u8>,
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
    pub fn new(limits: BlockLimits) -> Self {
        let entry = UserBlock {
            chunks: vec![BlockBuf::new(TerminatorKind::Return)],
            begun: true,
            terminated: false,
            chunk_cost: ReplayCost::default(),
        };
        Self {
            limits,
            blocks: vec![entry],
            current: 0,
            pending_barrier: true,
            retained: Vec::new(),
            slot_needs: Vec::new(),
            copy_checks: Vec::new(),
            kernels: Vec::new(),
            scratch_sources: Vec::new(),
            scratch_kernargs: Vec::new(),
        }
    }

    fn open_block(&mut self) -> EngineResult<&mut UserBlock> {
        let block = &mut self.blocks[self.current];
        if block.terminated {
            return Err(EngineError::CommandBufferState {
                reason: "the current block already ended with a branch or return; begin() another block",
            });
        }
        Ok(block)
    }

    /// Starts a new chunk when `cost` (plus `records` sources or patches) would overflow the
    /// current one, and returns the chunk to push into.
    fn chunk_for(&mut self, cost: ReplayCost, records: usize) -> EngineResult<&mut BlockBuf> {
        let limits = self.limits;
        let block = self.open_block()?;
        let chunk = block.chunks.last().expect("a block has a chunk");
        let full = !chunk.commands.is_empty()
            && (block.chunk_cost.packets + cost.packets > u64::from(limits.packets)
                || block.chunk_cost.kernarg_bytes + cost.kernarg_bytes > u64::from(limits.kernarg_bytes)
                || chunk.sources.len().max(chunk.patches.len()) + records > CHUNK_RECORD_LIMIT);
        if full {
            block.chunks.push(BlockBuf::new(TerminatorKind::Return));
            block.chunk_cost = ReplayCost::default();
        }
        block.chunk_cost = block.chunk_cost.saturating_add(cost);
        Ok(block.chunks.last_mut().expect("a block has a chunk"))
    }

    /// The flags of the next payload command; a pending barrier also releases the previous one.
    fn take_flags(&mut self) -> CommandFlags {
        if !std::mem::take(&mut self.pending_barrier) {
            return CommandFlags::NONE;
        }
        release_last(&mut self.blocks[self.current], FenceScope::Agent);
        CommandFlags::new(true, FenceScope::Agent, FenceScope::None)
    }

    /// Keeps what a checked, recorded reference needs: its buffer alive, or its slot's
    /// requirements for every execution's binding table.
    fn commit_ref(&mut self, reference: BufferRef<'_>, access: Access) {
        match reference {
            BufferRef::Static(binding) => self.retain_buffer(binding.buffer),
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

    fn retain_buffer(&mut self, buffer: &Buffer) {
        // Commands usually name a few buffers many times; keep each once.
        if !self.retained.iter().any(|kept| Arc::as_ptr(kept) as *const () == Arc::as_ptr(&buffer.0) as *const ()) {
            self.retained.push(buffer.0.clone() as Retained);
        }
    }
}

/// Raises the release scope of the block's last payload command to at least `scope`.
fn release_last(block: &mut UserBlock, scope: FenceScope) {
    let Some(command) = block.chunks.iter_mut().rev().find_map(|chunk| chunk.commands.last_mut()) else { return };
    let flags = command.flags();
    let release = flags.release_bits().max(scope as u8);
    command.bytes[1] = flags.0 & !(3 << CommandFlags::RELEASE_SHIFT) | release << CommandFlags::RELEASE_SHIFT;
}

impl CommandBuffer {
    /// Checks a buffer reference and returns the binding source to record. Changes nothing:
    /// [`Recorder::commit_ref`] does, once the whole command is checked.
    fn check_ref(&self, what: &'static str, reference: BufferRef<'_>, access: Access) -> EngineResult<BindingSource> {
        let align = access.align;
        match reference {
            BufferRef::Static(binding) => {
                binding.buffer.belongs_to(&self.device)?;
                let address = binding.buffer.check_range(what, binding.offset, binding.length)?;
                if access.host_visible && binding.buffer.kind() != MemoryKind::HostVisible {
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

    /// Records a kernel dispatch (HAL layout).
    pub fn dispatch(&mut self, kernel: &Kernel, dispatch: &Dispatch<'_, BufferRef<'_>>) -> EngineResult<()> {
        self.record_dispatch(kernel, dispatch, None)
    }

    /// Records a dispatch whose workgroup counts (three u32 at `counts`) are read when the queue
    /// reaches it: the grid is counts × workgroup size, and `dispatch.grid` is not used.
    pub fn dispatch_indirect(
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
        self.recorder()?.open_block()?;
        let grid = if indirect.is_some() { GridSource::Buffer } else { GridSource::Dispatch };
        let validated = validate_dispatch(&self.device, self.agent, kernel, dispatch, grid)?;
        let (info, layout, template) = (validated.info, validated.layout, validated.template);
        let kernarg_size = u16::try_from(info.kernarg_size).map_err(|_| EngineError::KernargMismatch {
            kernel: info.name.clone(),
            reason: format!("{}-byte kernarg segment; command buffers carry at most 65,535", info.kernarg_size),
        })?;
        const COUNTS_ACCESS: Access = Access { host_visible: false, align: 4 };
        let indirect_source = match indirect {
            Some(counts) if counts.length() < 12 => {
                return Err(EngineError::InvalidArgument {
                    what: "indirect counts",
                    reason: format!("{} bytes; three u32 counts need 12", counts.length()),
                });
            }
            Some(counts) => Some(self.check_ref("indirect counts", counts, COUNTS_ACCESS)?),
            None => None,
        };
        let mut sources = std::mem::take(&mut self.recorder()?.scratch_sources);
        sources.clear();
        for binding in dispatch.bindings {
            sources.push(self.check_ref("binding", *binding, ANY_ACCESS)?);
        }
        let is_static = |source: &BindingSource| source.source_kind() == Some(SourceKind::Static);
        let strategy = if indirect_source.is_some() {
            KernargStrategy::Indirect
        } else if sources.iter().all(is_static) && self.usage == CommandBufferUsage::Reusable {
            KernargStrategy::Prepublished
        } else if !sources.is_empty() && !sources.iter().any(is_static) && layout.implicit_offset.is_none() {
            KernargStrategy::PointerScatter
        } else {
            KernargStrategy::PatchedTemplate
        };
        let mut command = DispatchCommand::new(strategy, template.kernel_object, template.grid, template.workgroup);
        command.kernarg_size = kernarg_size;
        command.kernarg_alignment = info.kernarg_alignment.min(MAX_KERNARG_ALIGNMENT) as u8;
        command.group_segment_size = template.group_segment_size;
        command.private_segment_size = template.private_segment_size;
        if let Some(offset) = layout.implicit_offset {
            command.implicit_args_offset = offset as u16;
        }
        let cost = DecodedCommand::Dispatch(command).replay_cost();

        // Everything is checked: commit the references, then write the records.
        let mut kernargs = std::mem::take(&mut self.recorder()?.scratch_kernargs);
        let recorder = self.recorder()?;
        for binding in dispatch.bindings {
            recorder.commit_ref(*binding, ANY_ACCESS);
        }
        if let Some(counts) = indirect {
            recorder.commit_ref(counts, COUNTS_ACCESS);
        }
        if !recorder.kernels.iter().any(|kept| Arc::ptr_eq(&kept.executable, &kernel.executable)) {
            recorder.kernels.push(kernel.clone());
        }
        let flags = recorder.take_flags();
        let chunk = recorder.chunk_for(cost, sources.len() + 1)?;
        let first_source = chunk.sources.len() as u16;
        for source in &sources {
            chunk.push_source(*source);
        }
        command.first_source = first_source;
        command.source_count = sources.len() as u16;
        if let Some(counts) = indirect_source {
            command.indirect_source = chunk.push_source(counts);
        }
        if strategy == KernargStrategy::PointerScatter {
            command.constants_offset = chunk.push_rodata(bytemuck::cast_slice(dispatch.constants), 4);
            command.constant_count = dispatch.constants.len() as u16;
        } else {
            // The template: the whole kernarg segment as a direct dispatch writes it (the same
            // writer and implicit block), with dynamic pointers zero until replay patches them.
            kernargs.clear();
            kernargs.resize(usize::from(kernarg_size), 0);
            let pointers = sources.iter().map(|source| if is_static(source) { source.value } else { 0 });
            let implicit = validated.implicit();
            let implicit = implicit.as_ref().map(|(offset, block)| (*offset, block));
            write_hal_kernargs(&mut kernargs, pointers, bytemuck::cast_slice(dispatch.constants), implicit);
            command.template_offset = chunk.push_rodata(&kernargs, u32::from(command.kernarg_alignment));
            command.template_length = kernarg_size;
            if strategy != KernargStrategy::Prepublished {
                command.first_patch = chunk.patches.len() as u16;
                for (index, _) in sources.iter().enumerate().filter(|(_, source)| !is_static(source)) {
                    chunk.push_patch(PatchRecord::new(8 * index as u32, first_source + index as u16));
                }
                command.patch_count = chunk.patches.len() as u16 - command.first_patch;
            }
        }
        chunk.push_command(command.with_flags(flags));
        recorder.scratch_sources = sources;
        recorder.scratch_kernargs = kernargs;
        Ok(())
    }

    /// Records a fill of `target` with a 1, 2, 4 or 8-byte `pattern`.
    pub fn fill<'b>(&mut self, target: impl Into<BufferRef<'b>>, pattern: &[u8]) -> EngineResult<()> {
        self.recorder()?.open_block()?;
        let target = target.into();
        let width = u8::try_from(pattern.len()).unwrap_or(0);
        let mut word = [0u8; 8];
        word[..pattern.len().min(8)].copy_from_slice(&pattern[..pattern.len().min(8)]);
        let pattern_value = u64::from_le_bytes(word);
        // The planner's checks (width, length) against a stand-in address; the real one is planned at replay.
        aqueduct_builtins::plan_fill(0x1000, target.length(), pattern_value, width)?;
        let source = self.check_ref("fill target", target, ANY_ACCESS)?;
        let length = target.length();
        self.push_with_sources(&[target], ANY_ACCESS, &[source], |[index, _]| {
            FillCommand::new(index, length, pattern_value, width)
        })
    }

    /// Records a copy of `source` into `target` (same length, not overlapping).
    pub fn copy<'b>(&mut self, source: impl Into<BufferRef<'b>>, target: impl Into<BufferRef<'b>>) -> EngineResult<()> {
        self.recorder()?.open_block()?;
        let (source, target) = (source.into(), target.into());
        if source.length() != target.length() {
            return Err(EngineError::InvalidArgument {
                what: "copy",
                reason: format!("source is {} bytes, target {}", source.length(), target.length()),
            });
        }
        let length = source.length();
        let from = self.check_ref("copy source", source, ANY_ACCESS)?;
        let to = self.check_ref("copy target", target, ANY_ACCESS)?;
        let both_static =
            from.source_kind() == Some(SourceKind::Static) && to.source_kind() == Some(SourceKind::Static);
        if both_static {
            aqueduct_builtins::plan_copy(from.value, to.value, length)?;
        } else {
            self.recorder()?.copy_checks.push(CopyCheck { source: from, target: to, length });
        }
        self.push_with_sources(&[source, target], ANY_ACCESS, &[from, to], |[from, to]| {
            CopyCommand::new(from, to, length)
        })
    }

    /// Records writing `data` (carried in the program's rodata) into `target`.
    pub fn update<'b>(&mut self, target: impl Into<BufferRef<'b>>, data: &[u8]) -> EngineResult<()> {
        self.recorder()?.open_block()?;
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
        let source = self.check_ref("update target", target, ANY_ACCESS)?;
        let recorder = self.recorder()?;
        recorder.commit_ref(target, ANY_ACCESS);
        let flags = recorder.take_flags();
        let probe = UpdateCommand::new(0, 0, data.len() as u32);
        let chunk = recorder.chunk_for(DecodedCommand::Update(probe).replay_cost(), 1)?;
        let target = chunk.push_source(source);
        let payload = chunk.push_rodata(data, 16);
        chunk.push_command(UpdateCommand::new(target, payload, data.len() as u32).with_flags(flags));
        Ok(())
    }
    /// Orders everything recorded before against everything after (execution and memory, at
    /// agent scope). It costs no packet: it becomes the barrier bit and acquire scope of the
    /// next command and the release scope of the previous one.
    pub fn barrier(&mut self) -> EngineResult<()> {
        let recorder = self.recorder()?;
        recorder.open_block()?;
        recorder.pending_barrier = true;
        Ok(())
    }

    /// Records a device timestamp (one u64, 8-byte aligned) written to `target` when the queue
    /// reaches this point; `marker_id` tags it.
    pub fn profile_marker<'b>(&mut self, target: impl Into<BufferRef<'b>>, marker_id: u32) -> EngineResult<()> {
        self.recorder()?.open_block()?;
        let target = target.into();
        if target.length() < 8 {
            return Err(EngineError::InvalidArgument {
                what: "profile marker",
                reason: format!("{}-byte target; a timestamp needs 8", target.length()),
            });
        }
        const STAMP_ACCESS: Access = Access { host_visible: false, align: 8 };
        let source = self.check_ref("profile marker", target, STAMP_ACCESS)?;
        self.push_with_sources(&[target], STAMP_ACCESS, &[source], |[index, _]| {
            ProfileMarkerCommand::new(index, marker_id)
        })
    }

    /// A new, empty block to branch to; record into it after [`Self::begin`].
    pub fn new_block(&mut self) -> EngineResult<BlockLabel> {
        let recorder = self.recorder()?;
        let label = BlockLabel(recorder.blocks.len() as u32);
        recorder.blocks.push(UserBlock {
            chunks: vec![BlockBuf::new(TerminatorKind::Return)],
            begun: false,
            terminated: false,
            chunk_cost: ReplayCost::default(),
        });
        Ok(label)
    }

    /// Continues recording in `label`. The current block keeps what it has; if it has no
    /// branch or return yet, it returns.
    pub fn begin(&mut self, label: BlockLabel) -> EngineResult<()> {
        let recorder = self.recorder()?;
        let block = recorder.blocks.get(label.0 as usize).ok_or(EngineError::InvalidArgument {
            what: "block label",
            reason: format!("{label:?} is not a block of this command buffer"),
        })?;
        if block.begun {
            return Err(EngineError::CommandBufferState { reason: "that block was already begun" });
        }
        close(recorder);
        recorder.blocks[label.0 as usize].begun = true;
        recorder.current = label.0 as usize;
        recorder.pending_barrier = true;
        Ok(())
    }

    /// Ends the current block by continuing at `target`.
    pub fn branch(&mut self, target: BlockLabel) -> EngineResult<()> {
        self.check_label(target)?;
        self.terminate(BranchCommand::new(target.0).into(), TerminatorKind::Branch, None)
    }

    /// Ends the current block with a conditional branch: once the queue has run everything
    /// before it, the 4- or 8-byte unsigned value at `value` (host-visible memory, by its
    /// length) is compared with `operand`, and execution continues at `taken` if
    /// `value compare operand` holds, else at `not_taken`.
    pub fn branch_if<'b>(
        &mut self,
        value: impl Into<BufferRef<'b>>,
        compare: CompareOp,
        operand: u64,
        taken: BlockLabel,
        not_taken: BlockLabel,
    ) -> EngineResult<()> {
        self.check_label(taken)?;
        self.check_label(not_taken)?;
        self.recorder()?.open_block()?;
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
        let source = self.check_ref("branch condition", value, access)?;
        self.recorder()?.commit_ref(value, access);
        let command = CondBranchCommand::new(0, width, compare, operand, taken.0, not_taken.0);
        self.terminate(command.into(), TerminatorKind::CondBranch, Some(source))
    }

    /// Ends the current block and the program.
    pub fn ret(&mut self) -> EngineResult<()> {
        self.terminate(ReturnCommand::new().into(), TerminatorKind::Return, None)
    }

    fn check_label(&mut self, label: BlockLabel) -> EngineResult<()> {
        if label.0 as usize >= self.recorder()?.blocks.len() {
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
        let recorder = self.recorder()?;
        recorder.open_block()?;
        let chunk = recorder.chunk_for(ReplayCost::default(), 1)?;
        if let Some(source) = source {
            let index = chunk.push_source(source);
            command.bytes[4..6].copy_from_slice(&index.to_le_bytes());
        }
        chunk.push_command(command);
        chunk.terminator = terminator;
        let block = &mut recorder.blocks[recorder.current];
        block.terminated = true;
        // The block's last payload command releases what it wrote to whoever runs next.
        release_last(block, FenceScope::Agent);
        Ok(())
    }

    /// Commits `references` (checked into `sources`, at most two) and records the command
    /// `make` builds from the sources' block-local indices.
    fn push_with_sources<C: CommandRecord>(
        &mut self,
        references: &[BufferRef<'_>],
        access: Access,
        sources: &[BindingSource],
        make: impl Fn([u16; 2]) -> C,
    ) -> EngineResult<()> {
        let cost = DecodedCommand::replay_cost(&make([0, 0]).into().decode().expect("a recorded command decodes"));
        let recorder = self.recorder()?;
        for reference in references {
            recorder.commit_ref(*reference, access);
        }
        let flags = recorder.take_flags();
        let chunk = recorder.chunk_for(cost, sources.len())?;
        let mut indices = [0u16; 2];
        for (index, source) in indices.iter_mut().zip(sources) {
            *index = chunk.push_source(*source);
        }
        chunk.push_command(make(indices).with_flags(flags));
        Ok(())
    }
}

/// Closes the current block before recording moves on: an unterminated block returns, and a
/// barrier still pending releases its last command.
pub(super) fn close(recorder: &mut Recorder) {
    let block = &mut recorder.blocks[recorder.current];
    if !block.terminated {
        release_last(block, FenceScope::Agent);
    }
}
