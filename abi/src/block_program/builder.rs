//! An owned, editable program that serializes to the image [`super::validate`] accepts.
//!
//! The builder derives everything replay must not recompute (section offsets, source counts by
//! kind, worst-case packets and kernarg bytes, the binding-slot count), so a recorder only pushes
//! records; what it cannot derive (indices inside commands) the validator checks.

use super::{
    BLOCK_ALIGN, BLOCK_HEADER_SIZE, BLOCK_TABLE_ENTRY_SIZE, BindingSource, BlockHeader, BlockProgram, Command,
    PROGRAM_HEADER_SIZE, PatchRecord, ProgramHeader, RODATA_ALIGN, ReplayCost, SourceKind, TerminatorKind,
};

/// One block under construction. Source and patch indices returned by the `push_*` methods are
/// the block-local indices commands refer to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockBuf {
    pub terminator: TerminatorKind,
    pub commands: Vec<Command>,
    pub sources: Vec<BindingSource>,
    pub patches: Vec<PatchRecord>,
    pub rodata: Vec<u8>,
}

impl BlockBuf {
    pub fn new(terminator: TerminatorKind) -> Self {
        Self { terminator, commands: Vec::new(), sources: Vec::new(), patches: Vec::new(), rodata: Vec::new() }
    }

    /// Appends a command (any per-kind record) and returns its index.
    pub fn push_command(&mut self, command: impl Into<Command>) -> u32 {
        self.commands.push(command.into());
        index_u32(self.commands.len() - 1)
    }

    /// Appends a binding source and returns its index.
    ///
    /// # Panics
    /// If the block already has `u16::MAX` sources (that value is [`super::NO_SOURCE`]).
    pub fn push_source(&mut self, source: BindingSource) -> u16 {
        let index = u16::try_from(self.sources.len()).ok().filter(|&i| i != u16::MAX);
        self.sources.push(source);
        index.expect("a block holds fewer than 65535 binding sources")
    }

    /// Appends a patch record and returns its index.
    ///
    /// # Panics
    /// If the block already has `u16::MAX` patches.
    pub fn push_patch(&mut self, patch: PatchRecord) -> u16 {
        let index = u16::try_from(self.patches.len()).ok().filter(|&i| i != u16::MAX);
        self.patches.push(patch);
        index.expect("a block holds fewer than 65535 patch records")
    }

    /// Appends `bytes` to the rodata at the next multiple of `align` and returns their offset.
    ///
    /// # Panics
    /// If `align` is not a power of two of at most [`RODATA_ALIGN`] (the rodata's own alignment).
    pub fn push_rodata(&mut self, bytes: &[u8], align: u32) -> u32 {
        assert!(align.is_power_of_two() && align <= RODATA_ALIGN, "rodata alignment {align}");
        let offset = self.rodata.len().next_multiple_of(align as usize);
        self.rodata.resize(offset, 0);
        self.rodata.extend_from_slice(bytes);
        index_u32(offset)
    }

    /// The sum of the commands' replay costs (unknown command kinds cost nothing here; the
    /// validator rejects them).
    pub fn replay_cost(&self) -> ReplayCost {
        self.commands
            .iter()
            .filter_map(Command::decode)
            .fold(ReplayCost::default(), |sum, command| sum.saturating_add(command.replay_cost()))
    }

    /// The block's bytes: header, commands, sources, patches, then rodata at the next 64-byte
    /// boundary, padded to a multiple of [`BLOCK_ALIGN`].
    fn encode(&self, ordinal: u32) -> Vec<u8> {
        let command_offset = BLOCK_HEADER_SIZE as usize;
        let source_offset = command_offset + size_of::<Command>() * self.commands.len();
        let patch_offset = source_offset + size_of::<BindingSource>() * self.sources.len();
        let rodata_offset =
            (patch_offset + size_of::<PatchRecord>() * self.patches.len()).next_multiple_of(RODATA_ALIGN as usize);
        let block_length = (rodata_offset + self.rodata.len()).next_multiple_of(BLOCK_ALIGN as usize);

        let count = |kind: SourceKind| index_u32(self.sources.iter().filter(|s| s.kind == kind as u8).count());
        let cost = self.replay_cost();
        let header = BlockHeader {
            block_length: index_u32(block_length),
            command_offset: index_u32(command_offset),
            command_count: index_u32(self.commands.len()),
            source_offset: index_u32(source_offset),
            static_source_count: count(SourceKind::Static),
            dynamic_source_count: count(SourceKind::Dynamic),
            patch_offset: index_u32(patch_offset),
            patch_count: index_u32(self.patches.len()),
            rodata_offset: index_u32(rodata_offset),
            rodata_length: index_u32(self.rodata.len()),
            // Saturated costs fail validation instead of wrapping into a too-small budget.
            max_packet_count: u32::try_from(cost.packets).unwrap_or(u32::MAX),
            max_kernarg_bytes: u32::try_from(cost.kernarg_bytes).unwrap_or(u32::MAX),
            ..BlockHeader::new(ordinal, self.terminator)
        };

        let mut bytes = Vec::with_capacity(block_length);
        bytes.extend_from_slice(bytemuck::bytes_of(&header));
        bytes.extend_from_slice(bytemuck::cast_slice(&self.commands));
        bytes.extend_from_slice(bytemuck::cast_slice(&self.sources));
        bytes.extend_from_slice(bytemuck::cast_slice(&self.patches));
        bytes.resize(rodata_offset, 0);
        bytes.extend_from_slice(&self.rodata);
        bytes.resize(block_length, 0);
        bytes
    }

    /// The block as a view reads it back.
    fn decode(block: &super::Block<'_>) -> Self {
        Self {
            terminator: block.terminator().unwrap_or(TerminatorKind::Return),
            commands: block.commands().collect(),
            sources: block.sources().collect(),
            patches: block.patches().collect(),
            rodata: block.rodata().to_vec(),
        }
    }
}

/// A program under construction: blocks in ordinal order, block 0 the entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockProgramBuf {
    pub blocks: Vec<BlockBuf>,
}

impl BlockProgramBuf {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a block and returns its ordinal.
    pub fn push_block(&mut self, block: BlockBuf) -> u32 {
        self.blocks.push(block);
        index_u32(self.blocks.len() - 1)
    }

    pub fn block_mut(&mut self, ordinal: u32) -> Option<&mut BlockBuf> {
        self.blocks.get_mut(usize::try_from(ordinal).ok()?)
    }

    /// One past the highest binding-table slot any dynamic source names.
    pub fn binding_slot_count(&self) -> u32 {
        self.blocks
            .iter()
            .flat_map(|block| &block.sources)
            .filter(|source| source.kind == SourceKind::Dynamic as u8)
            .map(|source| source.slot.saturating_add(1))
            .max()
            .unwrap_or(0)
    }

    /// The program image: header, block table, then each block at the next 64-byte boundary.
    ///
    /// # Panics
    /// If the image would exceed 4 GiB (offsets are u32).
    pub fn to_bytes(&self) -> Vec<u8> {
        let table_offset = PROGRAM_HEADER_SIZE as usize;
        let table_end = table_offset + BLOCK_TABLE_ENTRY_SIZE as usize * self.blocks.len();
        let mut bytes = vec![0u8; table_end.next_multiple_of(BLOCK_ALIGN as usize)];
        for (ordinal, block) in self.blocks.iter().enumerate() {
            let offset = index_u32(bytes.len());
            let entry = table_offset + BLOCK_TABLE_ENTRY_SIZE as usize * ordinal;
            bytes[entry..entry + 4].copy_from_slice(&offset.to_le_bytes());
            bytes.extend_from_slice(&block.encode(index_u32(ordinal)));
        }
        let header = ProgramHeader::new(
            index_u32(bytes.len()),
            index_u32(self.blocks.len()),
            index_u32(table_offset),
            self.binding_slot_count(),
        );
        bytes[..size_of::<ProgramHeader>()].copy_from_slice(bytemuck::bytes_of(&header));
        bytes
    }

    /// The records of a validated program, such that `from_program(&validate(&b.to_bytes())?)`
    /// equals `b` for any builder `b` that validates.
    pub fn from_program(program: &BlockProgram<'_>) -> Self {
        Self { blocks: program.blocks().map(|block| BlockBuf::decode(&block)).collect() }
    }
}

fn index_u32(value: usize) -> u32 {
    u32::try_from(value).expect("block program offsets and counts fit in u32")
}

// The builder writes records with bytemuck slices; keep it honest about their sizes.
const _: () = assert!(size_of::<Command>() == super::COMMAND_SIZE as usize);
const _: () = assert!(size_of::<BindingSource>() == super::BINDING_SOURCE_SIZE as usize);
const _: () = assert!(size_of::<PatchRecord>() == super::PATCH_RECORD_SIZE as usize);
