//! An owned, editable program that serializes to the image [`super::validate`] accepts.
//!
//! The builder derives everything execution must not recompute (section offsets, source counts by
//! kind, worst-case packets and kernarg bytes, the binding-slot count), so a recorder only pushes
//! records; what it cannot derive (indices inside commands) the validator checks.

use super::{
    BindingSource, BlockHeader, BlockParts, BlockProgram, Command, ExecutionCost, ImageWriter, PatchRecord,
    RODATA_ALIGN, SourceKind, TerminatorKind,
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

    /// The sum of the commands' execution costs (unknown command kinds cost nothing here; the
    /// validator rejects them).
    pub fn execution_cost(&self) -> ExecutionCost {
        self.commands
            .iter()
            .filter_map(Command::decode)
            .fold(ExecutionCost::default(), |sum, command| sum.saturating_add(command.execution_cost()))
    }

    /// The block's records as [`BlockParts`], with the counts and cost derived by scanning.
    fn parts(&self) -> BlockParts<'_> {
        BlockParts {
            terminator: self.terminator,
            commands: &self.commands,
            closing: None,
            sources: &self.sources,
            static_sources: index_u32(self.sources.iter().filter(|s| s.kind == SourceKind::Static as u8).count()),
            patches: &self.patches,
            rodata: &self.rodata,
            cost: self.execution_cost(),
        }
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
        let headers: Vec<BlockHeader> = self
            .blocks
            .iter()
            .enumerate()
            .map(|(ordinal, block)| block.parts().header(index_u32(ordinal)))
            .collect::<Option<_>>()
            .expect("block program offsets and counts fit in u32");
        let mut image =
            ImageWriter::new(&headers, self.binding_slot_count()).expect("block program offsets and counts fit in u32");
        for (block, header) in self.blocks.iter().zip(&headers) {
            image.push_block(&block.parts(), header);
        }
        image.finish()
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
