//! The read-only view execution works from.
//!
//! Every accessor is bounds-checked and returns `None` rather than panicking, but a view only
//! comes out of [`super::validate`], so for a validated program every index below the header's
//! counts and every range a command names yields `Some`.

use core::mem::size_of;

use bytemuck::Pod;

use super::{
    BLOCK_HEADER_SIZE, BLOCK_TABLE_ENTRY_SIZE, BindingSource, BlockHeader, Command, DispatchCommand, PatchRecord,
    ProgramHeader, TerminatorKind, UpdateCommand,
};

/// Reads a `T` at `offset`, unaligned; `None` past the end.
pub(crate) fn read<T: Pod>(bytes: &[u8], offset: u64) -> Option<T> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(size_of::<T>())?;
    bytes.get(start..end).map(bytemuck::pod_read_unaligned)
}

/// Reads element `index` of an array of `T` starting at `base`.
pub(crate) fn read_element<T: Pod>(bytes: &[u8], base: u32, index: u32) -> Option<T> {
    let offset = u64::from(index).checked_mul(size_of::<T>() as u64)?.checked_add(u64::from(base))?;
    read(bytes, offset)
}

/// `bytes[offset..offset + length]`, or `None`.
pub(crate) fn slice(bytes: &[u8], offset: u64, length: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(length).ok()?)?;
    bytes.get(start..end)
}

/// A validated program image.
#[derive(Clone, Copy, Debug)]
pub struct BlockProgram<'a> {
    bytes: &'a [u8],
    header: ProgramHeader,
}

impl<'a> BlockProgram<'a> {
    /// Only [`super::validate`] builds views.
    pub(crate) const fn new(bytes: &'a [u8], header: ProgramHeader) -> Self {
        Self { bytes, header }
    }

    /// Reopens an image [`super::validate`] accepted before, reading only the program header, so
    /// a program validated once can be executed many times without walking it again. Accessors
    /// stay bounds-checked: a wrong image yields `None`s, never an out-of-bounds read.
    pub fn reopen(bytes: &'a [u8]) -> Option<Self> {
        let header: ProgramHeader = read(bytes, 0)?;
        (header.magic == super::PROGRAM_MAGIC).then_some(Self { bytes, header })
    }

    /// The whole image (`total_length` bytes).
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub const fn header(&self) -> &ProgramHeader {
        &self.header
    }

    pub const fn block_count(&self) -> u32 {
        self.header.block_count
    }

    /// The binding table given to execution must have at least this many slots.
    pub const fn binding_slot_count(&self) -> u32 {
        self.header.binding_slot_count
    }

    /// The byte offset of block `ordinal` in the image.
    pub fn block_offset(&self, ordinal: u32) -> Option<u32> {
        if ordinal >= self.header.block_count {
            return None;
        }
        read_element::<u32>(self.bytes, self.header.block_table_offset, ordinal)
    }

    pub fn block(&self, ordinal: u32) -> Option<Block<'a>> {
        let offset = self.block_offset(ordinal)?;
        let header: BlockHeader = read(self.bytes, u64::from(offset))?;
        let bytes = slice(self.bytes, u64::from(offset), u64::from(header.block_length))?;
        Some(Block { ordinal, offset, bytes, header })
    }

    /// The entry block (ordinal 0).
    pub fn entry(&self) -> Option<Block<'a>> {
        self.block(0)
    }

    pub fn blocks(&self) -> impl Iterator<Item = Block<'a>> + 'a {
        let program = *self;
        (0..program.header.block_count).filter_map(move |ordinal| program.block(ordinal))
    }
}

/// One block of a validated program.
#[derive(Clone, Copy, Debug)]
pub struct Block<'a> {
    ordinal: u32,
    offset: u32,
    bytes: &'a [u8],
    header: BlockHeader,
}

impl<'a> Block<'a> {
    pub const fn ordinal(&self) -> u32 {
        self.ordinal
    }

    /// The block's byte offset in the program image.
    pub const fn offset(&self) -> u32 {
        self.offset
    }

    /// The block's bytes, header included (`block_length` bytes).
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub const fn header(&self) -> &BlockHeader {
        &self.header
    }

    pub const fn terminator(&self) -> Option<TerminatorKind> {
        self.header.terminator_kind()
    }

    pub const fn command_count(&self) -> u32 {
        self.header.command_count
    }

    pub fn command(&self, index: u32) -> Option<Command> {
        if index >= self.header.command_count {
            return None;
        }
        read_element(self.bytes, self.header.command_offset, index)
    }

    pub fn commands(&self) -> impl Iterator<Item = Command> + 'a {
        let block = *self;
        (0..block.header.command_count).filter_map(move |index| block.command(index))
    }

    /// Static plus dynamic sources.
    pub fn source_count(&self) -> u32 {
        self.header.static_source_count.saturating_add(self.header.dynamic_source_count)
    }

    pub fn source(&self, index: u32) -> Option<BindingSource> {
        if index >= self.source_count() {
            return None;
        }
        read_element(self.bytes, self.header.source_offset, index)
    }

    pub fn sources(&self) -> impl Iterator<Item = BindingSource> + 'a {
        let block = *self;
        (0..block.source_count()).filter_map(move |index| block.source(index))
    }

    pub const fn patch_count(&self) -> u32 {
        self.header.patch_count
    }

    pub fn patch(&self, index: u32) -> Option<PatchRecord> {
        if index >= self.header.patch_count {
            return None;
        }
        read_element(self.bytes, self.header.patch_offset, index)
    }

    pub fn patches(&self) -> impl Iterator<Item = PatchRecord> + 'a {
        let block = *self;
        (0..block.header.patch_count).filter_map(move |index| block.patch(index))
    }

    /// The patch records a dispatch applies, in order.
    pub fn dispatch_patches(&self, dispatch: &DispatchCommand) -> impl Iterator<Item = PatchRecord> + 'a {
        let block = *self;
        dispatch.patches().filter_map(move |index| block.patch(index))
    }

    /// The sources a dispatch reads, in order (pointer scatter writes them at 0, 8, 16, ...).
    pub fn dispatch_sources(&self, dispatch: &DispatchCommand) -> impl Iterator<Item = BindingSource> + 'a {
        let block = *self;
        dispatch.sources().filter_map(move |index| block.source(index))
    }

    pub fn rodata(&self) -> &'a [u8] {
        slice(self.bytes, u64::from(self.header.rodata_offset), u64::from(self.header.rodata_length)).unwrap_or(&[])
    }

    /// `length` rodata bytes at rodata offset `offset`.
    pub fn rodata_range(&self, offset: u32, length: u64) -> Option<&'a [u8]> {
        slice(self.rodata(), u64::from(offset), length)
    }

    /// A template-strategy dispatch's kernarg template: its first `kernarg_size` bytes are the
    /// kernargs before patching.
    pub fn template(&self, dispatch: &DispatchCommand) -> Option<&'a [u8]> {
        self.rodata_range(dispatch.template_offset, u64::from(dispatch.template_length))
    }

    /// A dispatch's u32 constants as raw little-endian bytes.
    pub fn constants(&self, dispatch: &DispatchCommand) -> Option<&'a [u8]> {
        self.rodata_range(dispatch.constants_offset, u64::from(dispatch.constant_count) * 4)
    }

    pub fn update_payload(&self, update: &UpdateCommand) -> Option<&'a [u8]> {
        self.rodata_range(update.payload_offset, u64::from(update.length))
    }
}

const _: () = assert!(BLOCK_TABLE_ENTRY_SIZE as usize == size_of::<u32>());
const _: () = assert!(BLOCK_HEADER_SIZE as usize == size_of::<BlockHeader>());
