//! A command-buffer execution as the stages see it: the finalized program image with the facts
//! finalization recorded once, and the cursor of one execution through it.
//!
//! An execution runs as one or more *segments*, one epoch each. A segment is the longest run of
//! blocks, following unconditional branches, that fits the ring's free space; it also ends after
//! a block whose terminator is a conditional branch, because the branch reads a value that the
//! block's own commands may write, so it is evaluated only once the queue has drained.

use aqueduct_abi::block_program::{BlockHeader, BlockProgram};

/// A device-library kernel resolved on one agent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuiltinObject {
    pub kernel_object: u64,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
}

impl BuiltinObject {
    /// The launch of a builtin, direct or replayed: the planners describe one-dimensional
    /// grids, and the packet says [`aqueduct_abi::DISPATCH_DIMENSIONS`] (y and z are 1), as every
    /// dispatch packet the engine publishes does.
    pub fn template(&self, grid_size: u32, workgroup_size: u16) -> aqueduct_abi::DispatchTemplate {
        aqueduct_abi::DispatchTemplate {
            kernel_object: self.kernel_object,
            grid: [grid_size, 1, 1],
            workgroup: [workgroup_size, 1, 1],
            dimensions: aqueduct_abi::DISPATCH_DIMENSIONS,
            group_segment_size: self.group_segment_size,
            private_segment_size: self.private_segment_size,
        }
    }
}

/// What replay needs of one block without reading its header from the image again.
#[derive(Clone, Copy, Debug)]
pub struct BlockFacts {
    pub offset: u32,
    pub header: BlockHeader,
    /// Device address of the block's rodata in the published image (0 when the program has no
    /// published image: nothing in it is read from device memory).
    pub rodata_address: u64,
    /// Index of the block's first command in [`ProgramImage::steps`] and
    /// [`ProgramImage::packets`].
    pub first_command: u32,
}

/// How replay writes one command, decided at finalization.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepKind {
    /// Replay decodes the command and builds its packets (transfers, barriers, pointer scatter,
    /// indirect dispatches); control commands write nothing.
    #[default]
    Interpret,
    /// The packet is complete (a prepublished dispatch): replay copies it as it is.
    Baked,
    /// The packet is complete but for its kernarg address: replay copies `kernarg_bytes` of the
    /// template at `template` into the segment's kernarg span, writes the patches' pointers into
    /// the copy, and points the packet at it.
    Template,
}

/// One command's replay recipe; with the packet at the same index of [`ProgramImage::packets`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayStep {
    pub kind: StepKind,
    /// The packet's header word (`header | setup << 16`) with the flags recording folded in
    /// (baked and template steps).
    pub header: u32,
    /// Template steps: bytes of kernargs the dispatch takes.
    pub kernarg_bytes: u32,
    /// Template steps: byte offset of the template in [`ProgramImage::bytes`].
    pub template: u32,
    /// Template steps: `patch_count` entries of [`ProgramImage::patches`] from `first_patch`.
    pub first_patch: u32,
    pub patch_count: u32,
}

/// "Write binding-table slot `slot`'s base plus `offset` at kernarg byte `kernarg_offset`": a
/// dynamic binding's patch record with its binding source already looked up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotPatch {
    /// 8-byte aligned, inside the dispatch's kernarg bytes.
    pub kernarg_offset: u16,
    /// The block-local binding source the patch came from (named in faults).
    pub source: u16,
    pub slot: u32,
    pub offset: u64,
}

/// A validated program image, its published device copy and its per-block facts. Immutable once
/// built, shared by every execution of the command buffer.
pub struct ProgramImage {
    /// The image as [`aqueduct_abi::block_program::validate`] accepts it.
    pub bytes: Box<[u8]>,
    pub blocks: Box<[BlockFacts]>,
    /// The device-library kernels of the agent the program was recorded for, by
    /// `aqueduct_builtins::Builtin` discriminant.
    pub builtins: Box<[BuiltinObject]>,
    /// Per command (in block order, control commands included): how replay writes it.
    pub steps: Box<[ReplayStep]>,
    /// Per command: the packet body of a baked or template step (without completion signal,
    /// and for a template step without kernarg address); zero otherwise.
    pub packets: Box<[aqueduct_abi::KernelDispatchPacket]>,
    /// The template steps' patches, resolved to binding-table slots.
    pub patches: Box<[SlotPatch]>,
}

impl ProgramImage {
    /// The image as a view. Every accessor stays bounds-checked, so even a corrupted image could
    /// only yield `None`s; the image was validated when it was built and is never written again.
    pub fn view(&self) -> Option<BlockProgram<'_>> {
        BlockProgram::reopen(&self.bytes)
    }

    /// An image whose every command replay interprets (no baked packets): how a program read
    /// from elsewhere than the recorder replays.
    pub fn interpreted(bytes: Box<[u8]>, blocks: Box<[BlockFacts]>, builtins: Box<[BuiltinObject]>) -> Self {
        let commands = blocks.iter().map(|block| block.header.command_count as usize).sum();
        Self {
            bytes,
            blocks,
            builtins,
            steps: vec![ReplayStep::default(); commands].into_boxed_slice(),
            packets: vec![Default::default(); commands].into_boxed_slice(),
            patches: Box::default(),
        }
    }
}

/// Where the next segment of an execution starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cursor {
    /// At this block (block 0 is the entry).
    Block(u32),
    /// After the conditional branch ending this block, which is evaluated once the queue drains.
    PendingBranch(u32),
    /// The program returned.
    Done,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor::Block(0)
    }
}

/// One execution's state. Kept in the staged submission; its vectors keep their capacity.
#[derive(Default)]
pub struct ProgramRun {
    pub image: Option<std::sync::Arc<ProgramImage>>,
    /// Binding-table slot base pointers, resolved once per execution.
    pub bindings: Vec<u64>,
    pub cursor: Cursor,
    /// Blocks replayed so far; an execution that exceeds `block_limit` fails instead of spinning.
    pub blocks_replayed: u64,
    pub block_limit: u64,
    /// Header words of the segment being published, in packet order (reused scratch).
    pub headers: Vec<u32>,
}

impl ProgramRun {
    pub fn clear(&mut self) {
        self.image = None;
        self.bindings.clear();
        self.cursor = Cursor::default();
        self.blocks_replayed = 0;
        self.block_limit = 0;
        self.headers.clear();
    }
}

/// How the planned segment ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SegmentEnd {
    /// The last block returns: this is the execution's final epoch.
    #[default]
    Return,
    /// The last block ends in a conditional branch, evaluated after the queue drains.
    Branch(u32),
    /// The ring had no room for the next block; it starts the next segment.
    Continue(u32),
}

/// The segment admission planned and reserved for.
#[derive(Clone, Debug, Default)]
pub struct SegmentPlan {
    /// Block ordinals in replay order.
    pub blocks: Vec<u32>,
    /// Packets and kernarg bytes the blocks may write (their headers' worst cases).
    pub packets: u64,
    pub kernarg_bytes: u64,
    pub end: SegmentEnd,
}

impl SegmentPlan {
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.packets = 0;
        self.kernarg_bytes = 0;
        self.end = SegmentEnd::Return;
    }
}
