//! Writes a program image straight from borrowed records, in one pass and one allocation.
//!
//! [`super::BlockProgramBuf::to_bytes`] and the engine's finishing both lay blocks out through
//! here, so there is one encoder. A caller computes every block's header first
//! ([`BlockParts::header`]: offsets and counts only, no record is touched), opens an
//! [`ImageWriter`] sized exactly from them, then appends each block's records once.

use super::{
    BLOCK_ALIGN, BLOCK_HEADER_SIZE, BLOCK_TABLE_ENTRY_SIZE, BindingSource, BlockHeader, Command, ExecutionCost,
    PROGRAM_HEADER_SIZE, PatchRecord, ProgramHeader, RODATA_ALIGN, TerminatorKind,
};

/// One block's records, borrowed from wherever they were recorded.
#[derive(Clone, Copy, Debug)]
pub struct BlockParts<'a> {
    pub terminator: TerminatorKind,
    pub commands: &'a [Command],
    /// Written after `commands`: the control command that closes the block, when it is kept
    /// apart from the payload commands (a recorder patches its target at layout).
    pub closing: Option<&'a Command>,
    /// The source section; `static_sources` of them are static, the rest dynamic.
    pub sources: &'a [BindingSource],
    pub static_sources: u32,
    pub patches: &'a [PatchRecord],
    pub rodata: &'a [u8],
    /// The sum of the commands' execution costs: the header's worst cases.
    pub cost: ExecutionCost,
}

impl BlockParts<'_> {
    /// The block's header as block `ordinal`: section offsets, counts and worst cases. `None`
    /// when the block would not fit the format's u32 offsets.
    pub fn header(&self, ordinal: u32) -> Option<BlockHeader> {
        let commands = self.commands.len() + usize::from(self.closing.is_some());
        let command_offset = BLOCK_HEADER_SIZE as usize;
        let source_offset = command_offset.checked_add(size_of::<Command>().checked_mul(commands)?)?;
        let patch_offset = source_offset.checked_add(size_of::<BindingSource>().checked_mul(self.sources.len())?)?;
        let patch_end = patch_offset.checked_add(size_of::<PatchRecord>().checked_mul(self.patches.len())?)?;
        let rodata_offset = patch_end.checked_next_multiple_of(RODATA_ALIGN as usize)?;
        let block_length =
            rodata_offset.checked_add(self.rodata.len())?.checked_next_multiple_of(BLOCK_ALIGN as usize)?;
        let fit = |value: usize| u32::try_from(value).ok();
        let source_count = fit(self.sources.len())?;
        Some(BlockHeader {
            block_length: fit(block_length)?,
            command_offset: fit(command_offset)?,
            command_count: fit(commands)?,
            source_offset: fit(source_offset)?,
            static_source_count: self.static_sources.min(source_count),
            dynamic_source_count: source_count - self.static_sources.min(source_count),
            patch_offset: fit(patch_offset)?,
            patch_count: fit(self.patches.len())?,
            rodata_offset: fit(rodata_offset)?,
            rodata_length: fit(self.rodata.len())?,
            // Saturated costs fail validation instead of wrapping into a too-small budget.
            max_packet_count: u32::try_from(self.cost.packets).unwrap_or(u32::MAX),
            max_kernarg_bytes: u32::try_from(self.cost.kernarg_bytes).unwrap_or(u32::MAX),
            ..BlockHeader::new(ordinal, self.terminator)
        })
    }
}

/// A program image being written: the program header and block table first, then each block
/// in ordinal order.
pub struct ImageWriter {
    bytes: Vec<u8>,
    total: usize,
}

impl ImageWriter {
    /// Allocates the whole image (exactly its length) and writes the program header and block
    /// table for blocks with `headers`, in ordinal order. `None` when the image would not fit
    /// the format's u32 offsets.
    pub fn new(headers: &[BlockHeader], binding_slot_count: u32) -> Option<Self> {
        let table_offset = PROGRAM_HEADER_SIZE as usize;
        let table_end = table_offset + BLOCK_TABLE_ENTRY_SIZE as usize * headers.len();
        let first_block = table_end.next_multiple_of(BLOCK_ALIGN as usize);
        let total = headers
            .iter()
            .try_fold(first_block, |offset, header| offset.checked_add(header.block_length as usize))
            .filter(|&total| u32::try_from(total).is_ok())?;
        let mut bytes = Vec::with_capacity(total);
        let header = ProgramHeader::new(
            total as u32,
            u32::try_from(headers.len()).ok()?,
            table_offset as u32,
            binding_slot_count,
        );
        bytes.extend_from_slice(bytemuck::bytes_of(&header));
        let mut offset = first_block as u32;
        for header in headers {
            bytes.extend_from_slice(&offset.to_le_bytes());
            offset += header.block_length;
        }
        bytes.resize(first_block, 0);
        Some(Self { bytes, total })
    }

    /// The image's length once every block is pushed.
    pub fn image_length(&self) -> usize {
        self.total
    }

    /// Where the next block starts in the image.
    pub fn next_offset(&self) -> u32 {
        self.bytes.len() as u32
    }

    /// Appends the next block: `header` (from `parts.header`), then its sections, padded.
    pub fn push_block(&mut self, parts: &BlockParts<'_>, header: &BlockHeader) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytemuck::bytes_of(header));
        self.bytes.extend_from_slice(bytemuck::cast_slice(parts.commands));
        if let Some(closing) = parts.closing {
            self.bytes.extend_from_slice(&closing.bytes);
        }
        self.bytes.extend_from_slice(bytemuck::cast_slice(parts.sources));
        self.bytes.extend_from_slice(bytemuck::cast_slice(parts.patches));
        self.bytes.resize(start + header.rodata_offset as usize, 0);
        self.bytes.extend_from_slice(parts.rodata);
        self.bytes.resize(start + header.block_length as usize, 0);
    }

    /// The image. Exactly the length [`Self::new`] computed when every block was pushed with
    /// its own header.
    pub fn finish(self) -> Vec<u8> {
        debug_assert_eq!(self.bytes.len(), self.total, "every block was pushed with its header");
        self.bytes
    }
}
