//! A command-buffer execution as the stages see it: the finished program image with the facts
//! finishing recorded once, and the cursor of one execution through it.
//!
//! An execution runs as one or more *legs*, one epoch each. A leg is the longest run of
//! blocks, following unconditional branches, that fits the ring's free space; it also ends after
//! a block whose terminator is a conditional branch, because the branch reads a value that the
//! block's own commands may write, so it is evaluated only once the queue has drained.
//!
//! **Contract.** A program's block World is written once, by `finish`, and then only read, through
//! `&World`, by any number of queues executing it, with no lock. One execution's `ProgramRun` is a
//! column of its queue's rows, under that queue's lock. The device program is built at most once
//! (a `OnceLock`).

use aqueduct_abi::block_program::{BlockHeader, BlockProgram};
use bevy_ecs::prelude::*;
use bevy_ecs::query::QueryState;

/// A device-library kernel resolved on one agent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuiltinObject {
    pub kernel_object: u64,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
}

impl BuiltinObject {
    /// The launch of a builtin, direct or executed: the planners describe one-dimensional
    /// grids, and the packet says [`aqueduct_abi::DISPATCH_DIMENSIONS`] (y and z are 1), as every
    /// dispatch packet the engine publishes does.
    pub fn template(&self, grid_size: u32, workgroup_size: u16) -> aqueduct_abi::DispatchTemplate {
        aqueduct_abi::DispatchTemplate::linear(
            self.kernel_object,
            grid_size,
            workgroup_size,
            self.group_segment_size,
            self.private_segment_size,
        )
    }
}

/// A block of a finished program: an entity of the program's World ([`ProgramBlocks`]). What
/// execution needs of the block without reading its header from the image again.
#[derive(Component, Clone, Copy, Debug)]
pub struct BlockFacts {
    pub offset: u32,
    pub header: BlockHeader,
    /// Device address of the block's rodata in the published image (0 when the program has no
    /// published image: nothing in it is read from device memory).
    pub rodata_address: u64,
    /// The recording index of the block's first command: the command of step `n` is the
    /// command buffer's `first_command + n`-th recorded command. Set when the program is built;
    /// the profile names executed dispatches by it.
    pub first_command: u32,
}

/// A block's commands as execution writes them: one step per command (control commands included),
/// and beside it the packet body of a baked or template step (without completion signal, and
/// for a template step without kernarg address; zero otherwise).
#[derive(Component, Debug, Default)]
pub struct BlockCommands {
    pub steps: Vec<BlockStep>,
    pub packets: Vec<aqueduct_abi::KernelDispatchPacket>,
}

/// A block's template patches, resolved to binding-table slots.
#[derive(Component, Debug, Default)]
pub struct BlockPatches(pub Vec<SlotPatch>);

/// What execution reads of one block.
pub type BlockRow = (&'static BlockFacts, &'static BlockCommands, &'static BlockPatches);

/// How execution writes one command, decided at finish.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepKind {
    /// Execution decodes the command and builds its packets (transfers, barriers, pointer scatter,
    /// indirect dispatches); control commands write nothing.
    #[default]
    Interpret,
    /// The packet is complete (a prepublished dispatch): execution copies it as it is.
    Baked,
    /// The packet is complete but for its kernarg address: execution copies `kernarg_bytes` of the
    /// template at `template` into the leg's kernarg span, writes the patches' pointers into
    /// the copy, and points the packet at it.
    Template,
}

/// One command's execution recipe; with the packet at the same index of [`BlockCommands::packets`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockStep {
    pub kind: StepKind,
    /// The packet's header word (`header | setup << 16`) with the flags recording folded in
    /// (baked and template steps).
    pub header: u32,
    /// Template steps: bytes of kernargs the dispatch takes.
    pub kernarg_bytes: u32,
    /// Template steps: byte offset of the template in [`ProgramImage::bytes`].
    pub template: u32,
    /// Template steps: `patch_count` entries of the block's [`BlockPatches`] from `first_patch`.
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

/// The blocks of one finished program, as entities of the program's own World, in ordinal
/// order. The World is the program's and nothing else's, so every queue executing it reads the
/// rows without a lock; it is built once at finish and never written after. Block
/// entities are kept when the blocks are cleared, so a recycled `ProgramBlocks` (see the
/// engine's command-buffer pools) refills their vectors instead of spawning.
pub struct ProgramBlocks {
    world: World,
    query: QueryState<BlockRow>,
    /// The same rows, writable: only while the program is built.
    fill: QueryState<(&'static mut BlockFacts, &'static mut BlockCommands, &'static mut BlockPatches)>,
    /// The block entities by ordinal; only the first `len` belong to the current program.
    entities: Vec<Entity>,
    len: usize,
}

impl Default for ProgramBlocks {
    fn default() -> Self {
        let mut world = World::new();
        let query = QueryState::new(&mut world);
        let fill = QueryState::new(&mut world);
        Self { world, query, fill, entities: Vec::new(), len: 0 }
    }
}

impl ProgramBlocks {
    /// Forgets the blocks, keeping their entities and their vectors' capacity.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a block and returns its commands and patches, emptied, to fill.
    pub fn push(&mut self, facts: BlockFacts) -> (Mut<'_, BlockCommands>, Mut<'_, BlockPatches>) {
        let entity = match self.entities.get(self.len) {
            Some(&entity) => entity,
            None => {
                let entity = self.world.spawn((facts, BlockCommands::default(), BlockPatches::default())).id();
                self.query.update_archetypes(&self.world);
                self.fill.update_archetypes(&self.world);
                self.entities.push(entity);
                entity
            }
        };
        self.len += 1;
        let Ok((mut stored, mut commands, mut patches)) = self.fill.get_mut(&mut self.world, entity) else {
            unreachable!("block entities are spawned with every block component and never lose one")
        };
        *stored = facts;
        commands.steps.clear();
        commands.packets.clear();
        patches.0.clear();
        (commands, patches)
    }

    /// Block `ordinal`'s row.
    #[inline]
    pub fn get(&self, ordinal: u32) -> Option<(&BlockFacts, &BlockCommands, &BlockPatches)> {
        let entity = *self.entities.get(..self.len)?.get(ordinal as usize)?;
        self.query.get_manual(&self.world, entity).ok()
    }
}

/// A validated program image, its blocks and the builtins it runs with. Immutable once built,
/// shared by every execution of the command buffer.
pub struct ProgramImage {
    /// The program's id, unique in the process ([`next_program_id`]): the profile names the
    /// command buffer of an executed dispatch by it.
    pub id: u64,
    /// The image as [`aqueduct_abi::block_program::validate`] accepts it.
    pub bytes: Box<[u8]>,
    /// Boxed: a block World with its queries is large, and the program moves between pools.
    pub blocks: Box<ProgramBlocks>,
    /// The device-library kernels of the agent the program was recorded for, by
    /// `aqueduct_builtins::Builtin` discriminant.
    pub builtins: std::sync::Arc<[BuiltinObject]>,
    /// The device program the block processor reads, published, or why the program has none.
    /// Built at the first execution that may be processed on the device (or the first question
    /// whether it can be), not at finish: a program only the host processes never pays for it.
    pub device: std::sync::OnceLock<Result<DeviceProgramRef, &'static str>>,
}

/// Kernarg-pool memory holding a published command-buffer program image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramMemory {
    /// The `hsa_amd_memory_pool_t` handle it came from.
    pub pool: u64,
    pub address: u64,
    /// Bytes allocated (the image's size class).
    pub capacity: usize,
}

/// A published device program (`aqueduct_abi::device_program`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceProgramRef {
    /// Where it is published: the command buffer's release gives the memory back.
    pub memory: ProgramMemory,
    pub packets: u32,
    pub max_block_packets: u32,
    pub max_block_kernarg_bytes: u32,
    pub conditional_branches: u32,
    /// Transfers with a dynamic side (written by kernels planned for any alignment).
    pub dynamic_transfers: u32,
}

impl ProgramImage {
    /// Its device program, if one was built and published (`None` before the first execution
    /// that asked for it, or when it has none).
    #[inline]
    pub fn built_device_program(&self) -> Option<&DeviceProgramRef> {
        self.device.get()?.as_ref().ok()
    }

    /// The image as a view. Every accessor stays bounds-checked, so even a corrupted image could
    /// only yield `None`s; the image was validated when it was built and is never written again.
    pub fn view(&self) -> Option<BlockProgram<'_>> {
        BlockProgram::reopen(&self.bytes)
    }

    /// An image whose every command execution interprets (no baked packets): how a program read
    /// from elsewhere than the recorder is executed. It gets a fresh id.
    pub fn interpreted(bytes: Box<[u8]>, blocks: &[BlockFacts], builtins: std::sync::Arc<[BuiltinObject]>) -> Self {
        let mut program = Box::<ProgramBlocks>::default();
        for facts in blocks {
            let (mut commands, _) = program.push(*facts);
            let count = facts.header.command_count as usize;
            commands.steps.resize(count, BlockStep::default());
            commands.packets.resize(count, Default::default());
        }
        Self {
            id: next_program_id(),
            bytes,
            blocks: program,
            builtins,
            device: std::sync::OnceLock::from(Err("a program read from a replay capture is processed on the host")),
        }
    }
}

/// A program id not handed out before in this process (the first is 1).
pub fn next_program_id() -> u64 {
    static NEXT: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, core::sync::atomic::Ordering::Relaxed)
}

/// A finished program's image as an execution names it: its address, not a reference count, so
/// enqueueing an execution touches no shared counter. The engine's command-buffer entity owns the
/// image and frees it only after every row enqueued before the command buffer was released has
/// settled, so the image outlives every row that names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramImageRef(core::ptr::NonNull<ProgramImage>);

// SAFETY: the reference only reads an image that is never written after it was built, and
// `ProgramImage` is itself `Send + Sync`.
unsafe impl Send for ProgramImageRef {}
// SAFETY: as above.
unsafe impl Sync for ProgramImageRef {}

impl ProgramImageRef {
    /// # Safety
    /// `image` must stay alive, at this address, for as long as the reference is used.
    pub unsafe fn new(image: &ProgramImage) -> Self {
        Self(core::ptr::NonNull::from(image))
    }

    pub fn get(&self) -> &ProgramImage {
        // SAFETY: `new`'s caller keeps the image alive while the reference is in use.
        unsafe { self.0.as_ref() }
    }
}

/// Where the next leg of an execution starts.
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

/// One execution's state. Kept in its row's column; its vectors keep their capacity.
#[derive(Debug, Default)]
pub struct ProgramRun {
    pub image: Option<ProgramImageRef>,
    /// Binding-table slot base pointers, resolved once per execution.
    pub bindings: Vec<u64>,
    pub cursor: Cursor,
    /// Blocks executed so far; an execution that exceeds `block_limit` fails instead of spinning.
    pub blocks_run: u64,
    pub block_limit: u64,
    /// Header words of the leg being published, in packet order (reused scratch).
    pub headers: Vec<u32>,
    /// Processed on the device: the whole execution is one leg, the block processor's
    /// dispatch and the barrier that waits for its done signal.
    pub on_device: bool,
    /// On the device: the address of its status record, once published.
    pub device_status: u64,
    /// On the device: its binding table's address, from admission (0 for an empty table).
    pub binding_table: u64,
}

impl ProgramRun {
    pub fn clear(&mut self) {
        self.image = None;
        self.bindings.clear();
        self.cursor = Cursor::default();
        self.blocks_run = 0;
        self.block_limit = 0;
        self.headers.clear();
        self.on_device = false;
        self.device_status = 0;
        self.binding_table = 0;
    }
}

/// How the planned leg ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LegEnd {
    /// The last block returns: this is the execution's final epoch.
    #[default]
    Return,
    /// The last block ends in a conditional branch, evaluated after the queue drains.
    Branch(u32),
    /// The ring had no room for the next block; it starts the next leg.
    Continue(u32),
}

/// The leg admission planned and reserved for.
#[derive(Clone, Debug, Default)]
pub struct LegPlan {
    /// Block ordinals in execution order.
    pub blocks: Vec<u32>,
    /// Packets and kernarg bytes the blocks may write (their headers' worst cases).
    pub packets: u64,
    pub kernarg_bytes: u64,
    pub end: LegEnd,
    /// A device-processed execution with bindings: where its binding table goes (see
    /// `aqueduct_systems::binding_tables`); none for an empty table.
    pub binding_table: Option<crate::kernarg_ring::BindingTablePlan>,
}

impl LegPlan {
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.packets = 0;
        self.kernarg_bytes = 0;
        self.end = LegEnd::Return;
        self.binding_table = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(offset: u32, commands: u32) -> BlockFacts {
        BlockFacts {
            offset,
            header: BlockHeader { command_count: commands, ..bytemuck::Zeroable::zeroed() },
            rodata_address: 0,
            first_command: 0,
        }
    }

    #[test]
    fn blocks_are_rows_read_by_ordinal_and_recycled_without_spawning() {
        let mut blocks = ProgramBlocks::default();
        let empty = blocks.world.entities().count_spawned();
        for ordinal in 0..3u32 {
            let (mut commands, mut patches) = blocks.push(facts(64 * ordinal, ordinal + 1));
            commands.steps.resize(ordinal as usize + 1, BlockStep { kernarg_bytes: ordinal, ..Default::default() });
            patches.0.push(SlotPatch { slot: ordinal, ..Default::default() });
        }
        assert_eq!(blocks.len(), 3);
        let (row, commands, patches) = blocks.get(2).expect("block 2 exists");
        assert_eq!((row.offset, commands.steps.len(), patches.0[0].slot), (128, 3, 2));
        assert!(blocks.get(3).is_none(), "past the last block");
        assert_eq!(blocks.world.entities().count_spawned(), empty + 3);

        // A smaller program reuses the first entity, emptied, and hides the rest.
        blocks.clear();
        let (commands, patches) = blocks.push(facts(0, 0));
        assert!(commands.steps.is_empty() && patches.0.is_empty(), "a reused block starts empty");
        assert_eq!(blocks.len(), 1);
        assert!(blocks.get(1).is_none(), "a block of the previous program is not visible");
        assert_eq!(blocks.get(0).map(|(row, _, _)| row.offset), Some(0), "block 0 is the new program's");
        assert_eq!(blocks.world.entities().count_spawned(), empty + 3, "no entity spawned for a reused block");
    }
}
