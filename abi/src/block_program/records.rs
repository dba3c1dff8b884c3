//! The fixed records around the commands: program header, block header, binding source, patch.

use bytemuck::{Pod, Zeroable};

use super::{
    BINDING_SOURCE_SIZE, BLOCK_HEADER_SIZE, BLOCK_MAGIC, PATCH_RECORD_SIZE, PROGRAM_HEADER_SIZE, PROGRAM_MAGIC,
    PROGRAM_VERSION, SourceKind, TerminatorKind,
};
use crate::{assert_layout, assert_offset};

/// The first 32 bytes of a program image.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct ProgramHeader {
    /// [`PROGRAM_MAGIC`].
    pub magic: u32,
    /// [`PROGRAM_VERSION`].
    pub version: u16,
    pub reserved0: u16,
    /// The whole image, header included; must equal the length of the validated slice, so a
    /// truncated or padded file is caught before anything inside it is trusted.
    pub total_length: u32,
    /// At least one: block 0 is the entry.
    pub block_count: u32,
    pub block_table_offset: u32,
    /// Binding-table slots the program may name: every dynamic source's slot is below this, so
    /// execution checks the caller's binding table length once instead of per source.
    pub binding_slot_count: u32,
    pub reserved1: u64,
}
assert_layout!(ProgramHeader, size = PROGRAM_HEADER_SIZE as usize, align = 8);
assert_offset!(ProgramHeader, magic, 0);
assert_offset!(ProgramHeader, version, 4);
assert_offset!(ProgramHeader, reserved0, 6);
assert_offset!(ProgramHeader, total_length, 8);
assert_offset!(ProgramHeader, block_count, 12);
assert_offset!(ProgramHeader, block_table_offset, 16);
assert_offset!(ProgramHeader, binding_slot_count, 20);
assert_offset!(ProgramHeader, reserved1, 24);

impl ProgramHeader {
    pub const fn new(total_length: u32, block_count: u32, block_table_offset: u32, binding_slot_count: u32) -> Self {
        Self {
            magic: PROGRAM_MAGIC,
            version: PROGRAM_VERSION,
            reserved0: 0,
            total_length,
            block_count,
            block_table_offset,
            binding_slot_count,
            reserved1: 0,
        }
    }
}

/// The first 64 bytes of every block: everything execution needs before touching a command.
///
/// The worst cases let execution reserve ring slots and kernarg space for the whole block up front,
/// so the interpreter never has to stop half-way through a block for space.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct BlockHeader {
    /// [`BLOCK_MAGIC`].
    pub magic: u32,
    /// [`PROGRAM_VERSION`].
    pub version: u16,
    /// A [`TerminatorKind`].
    pub terminator: u8,
    pub reserved0: u8,
    /// This block's index in the block table; a copy so a block read alone knows who it is.
    pub ordinal: u32,
    /// Bytes from the header's start to the block's end, all sections included.
    pub block_length: u32,
    pub command_offset: u32,
    pub command_count: u32,
    /// The source section holds `static_source_count + dynamic_source_count` records in any order.
    pub source_offset: u32,
    pub static_source_count: u32,
    pub dynamic_source_count: u32,
    pub patch_offset: u32,
    pub patch_count: u32,
    pub rodata_offset: u32,
    pub rodata_length: u32,
    /// AQL packets execution may write for this block; at least the sum of the commands' costs.
    pub max_packet_count: u32,
    /// Kernarg bytes execution may write for this block; at least the sum of the commands' costs.
    pub max_kernarg_bytes: u32,
    pub reserved1: u32,
}
assert_layout!(BlockHeader, size = BLOCK_HEADER_SIZE as usize, align = 4);
assert_offset!(BlockHeader, magic, 0);
assert_offset!(BlockHeader, version, 4);
assert_offset!(BlockHeader, terminator, 6);
assert_offset!(BlockHeader, reserved0, 7);
assert_offset!(BlockHeader, ordinal, 8);
assert_offset!(BlockHeader, block_length, 12);
assert_offset!(BlockHeader, command_offset, 16);
assert_offset!(BlockHeader, command_count, 20);
assert_offset!(BlockHeader, source_offset, 24);
assert_offset!(BlockHeader, static_source_count, 28);
assert_offset!(BlockHeader, dynamic_source_count, 32);
assert_offset!(BlockHeader, patch_offset, 36);
assert_offset!(BlockHeader, patch_count, 40);
assert_offset!(BlockHeader, rodata_offset, 44);
assert_offset!(BlockHeader, rodata_length, 48);
assert_offset!(BlockHeader, max_packet_count, 52);
assert_offset!(BlockHeader, max_kernarg_bytes, 56);
assert_offset!(BlockHeader, reserved1, 60);

impl BlockHeader {
    /// A header with the magic, version, ordinal and terminator set and every section empty.
    pub fn new(ordinal: u32, terminator: TerminatorKind) -> Self {
        Self { magic: BLOCK_MAGIC, version: PROGRAM_VERSION, terminator: terminator as u8, ordinal, ..Self::zeroed() }
    }

    pub const fn terminator_kind(&self) -> Option<TerminatorKind> {
        TerminatorKind::from_bits(self.terminator)
    }

    /// Static plus dynamic sources, without overflow.
    pub const fn source_count(&self) -> u64 {
        self.static_source_count as u64 + self.dynamic_source_count as u64
    }
}

/// Where a command's buffer lives: a device pointer, or a binding-table slot plus a byte offset.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct BindingSource {
    /// A [`SourceKind`].
    pub kind: u8,
    pub reserved: [u8; 3],
    /// Dynamic: the binding-table slot. Static: zero.
    pub slot: u32,
    /// Static: the device pointer. Dynamic: the byte offset added to the slot's base pointer.
    pub value: u64,
}
assert_layout!(BindingSource, size = BINDING_SOURCE_SIZE as usize, align = 8);
assert_offset!(BindingSource, kind, 0);
assert_offset!(BindingSource, reserved, 1);
assert_offset!(BindingSource, slot, 4);
assert_offset!(BindingSource, value, 8);

impl BindingSource {
    pub const fn fixed(pointer: u64) -> Self {
        Self { kind: SourceKind::Static as u8, reserved: [0; 3], slot: 0, value: pointer }
    }

    pub const fn dynamic(slot: u32, offset: u64) -> Self {
        Self { kind: SourceKind::Dynamic as u8, reserved: [0; 3], slot, value: offset }
    }

    pub const fn source_kind(&self) -> Option<SourceKind> {
        SourceKind::from_bits(self.kind)
    }

    /// The device pointer this source names, given the binding table as base pointers by slot.
    /// `None` for a slot past the table, an address that wraps, or an unknown kind.
    pub fn resolve(&self, binding_table: &[u64]) -> Option<u64> {
        match self.source_kind()? {
            SourceKind::Static => Some(self.value),
            SourceKind::Dynamic => {
                let base = *binding_table.get(usize::try_from(self.slot).ok()?)?;
                base.checked_add(self.value)
            }
        }
    }
}

/// "Write the resolved pointer of block source `source_index` at kernarg byte `kernarg_offset`."
///
/// Patch records only carry dynamic (or not-yet-backed) bindings; static pointers are already in
/// the template, so the patch list is exactly the per-execution work.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct PatchRecord {
    /// 8-byte aligned, and `kernarg_offset + 8 <= kernarg_size` of every dispatch using the patch.
    pub kernarg_offset: u32,
    /// A block-local index into the source section.
    pub source_index: u16,
    pub reserved: u16,
}
assert_layout!(PatchRecord, size = PATCH_RECORD_SIZE as usize, align = 4);
assert_offset!(PatchRecord, kernarg_offset, 0);
assert_offset!(PatchRecord, source_index, 4);
assert_offset!(PatchRecord, reserved, 6);

impl PatchRecord {
    pub const fn new(kernarg_offset: u32, source_index: u16) -> Self {
        Self { kernarg_offset, source_index, reserved: 0 }
    }
}
