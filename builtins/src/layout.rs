//! The kernarg layouts of the builtin kernels, defined once for the host planner.
//!
//! Each struct mirrors the parameter list of its C kernel in `device/blit.c` field by field; the
//! `kernarg_layout` test checks every field's offset and size against the metadata of every
//! prebuilt code object.

use core::mem::{offset_of, size_of};

use bytemuck::{Pod, Zeroable};

/// The most host bytes one `update_inline` dispatch carries in its kernarg segment. Larger
/// updates go through bounce memory and a copy kernel ([`crate::plan_update_copied`]).
pub const UPDATE_INLINE_MAX_BYTES: usize = 192;

/// `fill_*(target, element_count, pattern)`.
///
/// `element_count` is in the kernel's elements (see [`Builtin::element_bytes`]); `pattern` is the
/// fill pattern repeated to 64 bits, and byte `k` of the range receives byte `k % 8` of it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct FillArgs {
    pub target: u64,
    pub element_count: u64,
    pub pattern: u64,
}

/// `copy_*(source, target, element_count)`; the ranges must not overlap.
///
/// `element_count` is in the kernel's elements; for `copy_block_unaligned_x16` it is in bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct CopyArgs {
    pub source: u64,
    pub target: u64,
    pub element_count: u64,
}

/// `update_inline(target, byte_length, reserved, payload)`: the first `byte_length` payload bytes
/// go to `target`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct UpdateInlineArgs {
    pub target: u64,
    pub byte_length: u32,
    pub reserved: u32,
    pub payload: [u8; UPDATE_INLINE_MAX_BYTES],
}

/// `timestamp(target)`: one u64 is written at `target`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct TimestampArgs {
    pub target: u64,
}

/// `patch_indirect(packet, counts, implicit_args, header, reserved)`: completes an indirect
/// kernel-dispatch packet on the device, then publishes it.
///
/// - `packet`: the 64-byte-aligned target `hsa_kernel_dispatch_packet_t`, whose header word is
///   still INVALID and whose `workgroup_size_{x,y,z}` are already written.
/// - `counts`: three u32 workgroup counts (X, Y, Z), 4-byte aligned.
/// - `implicit_args`: the target dispatch's code-object-v5 hidden arguments, or 0 for none.
/// - `header`: the packet's first 32 bits, `header | setup << 16`, stored last with a release at
///   system scope.
///
/// Per axis, with `group` the packet's workgroup size and `count` the workgroup count, the kernel
/// uses the *effective count* `count` if `count * group` fits in u32, otherwise
/// `u32::MAX / group` (the largest count whose grid fits: a silent clamp, not an error). It writes
/// `grid_size = effective * group`, and when `implicit_args != 0` it writes
/// `hidden_block_count = effective` (u32 at +0, +4, +8) and `hidden_remainder = 0` (u16 at +18,
/// +20, +22). A zero workgroup size never overflows: the grid is 0 and the count is kept.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct PatchIndirectArgs {
    pub packet: u64,
    pub counts: u64,
    pub implicit_args: u64,
    pub header: u32,
    pub reserved: u32,
}

// The C side passes these as plain parameters, which clang lays out at natural alignment in an
// 8-byte-aligned segment; any drift here would be caught by the metadata test, but fail early.
const _: () = {
    assert!(size_of::<FillArgs>() == 24 && align_of::<FillArgs>() == 8);
    assert!(size_of::<CopyArgs>() == 24 && align_of::<CopyArgs>() == 8);
    assert!(size_of::<UpdateInlineArgs>() == 16 + UPDATE_INLINE_MAX_BYTES && align_of::<UpdateInlineArgs>() == 8);
    assert!(offset_of!(UpdateInlineArgs, payload) == 16);
    assert!(size_of::<TimestampArgs>() == 8);
    assert!(size_of::<PatchIndirectArgs>() == 32 && align_of::<PatchIndirectArgs>() == 8);
    assert!(offset_of!(PatchIndirectArgs, header) == 24);
};

/// What an explicit kernel argument carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A device address (metadata value kind `global_buffer`).
    Pointer,
    /// Plain bytes (metadata value kind `by_value`).
    Value,
}

/// One explicit kernel argument: where it sits in the kernarg segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgField {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
    pub kind: ArgKind,
}

macro_rules! fields {
    ($type:ty { $($field:ident: $kind:ident),* $(,)? }) => {
        &[$(ArgField {
            name: stringify!($field),
            offset: offset_of!($type, $field),
            size: {
                // The field's size, without a value of the struct at hand.
                const fn size_of_return<T, F>(_: fn(&T) -> &F) -> usize { size_of::<F>() }
                size_of_return(|args: &$type| &args.$field)
            },
            kind: ArgKind::$kind,
        }),*]
    };
}

const FILL_FIELDS: &[ArgField] = fields!(FillArgs { target: Pointer, element_count: Value, pattern: Value });
const COPY_FIELDS: &[ArgField] = fields!(CopyArgs { source: Pointer, target: Pointer, element_count: Value });
const UPDATE_INLINE_FIELDS: &[ArgField] =
    fields!(UpdateInlineArgs { target: Pointer, byte_length: Value, reserved: Value, payload: Value });
const TIMESTAMP_FIELDS: &[ArgField] = fields!(TimestampArgs { target: Pointer });
const PATCH_INDIRECT_FIELDS: &[ArgField] = fields!(PatchIndirectArgs {
    packet: Pointer,
    counts: Pointer,
    implicit_args: Pointer,
    header: Value,
    reserved: Value
});

/// `block_processor`'s arguments: one step of a command-buffer execution processed on the
/// device (`builtins/device/block_processor.h`); the record is the abi's, shared with the
/// engine that fills it.
pub use aqueduct_abi::device_program::ProcessorArgs as BlockProcessorArgs;

const BLOCK_PROCESSOR_FIELDS: &[ArgField] = fields!(BlockProcessorArgs {
    program: Pointer,
    bindings: Pointer,
    queue: Pointer,
    state: Pointer,
    status: Pointer,
    done_signal: Value,
    kernarg_capacity: Value,
    timing: Pointer,
    block: Value,
    evaluate: Value,
    blocks_left: Value,
    binding_count: Value,
    step: Value,
    reserved: Value
});

/// Every kernel of the device library.
///
/// The engine indexes builtins by discriminant, so new kernels go at the end (here and in
/// [`Builtin::ALL`]) and the existing order never changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Builtin {
    FillX1,
    FillX2,
    FillX4,
    FillX8,
    FillBlockX16,
    CopyX1,
    CopyBlockX4,
    CopyBlockX8,
    CopyBlockX16,
    CopyBlockUnalignedX16,
    UpdateInline,
    Timestamp,
    PatchIndirect,
    BlockProcessor,
}

impl Builtin {
    pub const ALL: [Builtin; 14] = [
        Builtin::FillX1,
        Builtin::FillX2,
        Builtin::FillX4,
        Builtin::FillX8,
        Builtin::FillBlockX16,
        Builtin::CopyX1,
        Builtin::CopyBlockX4,
        Builtin::CopyBlockX8,
        Builtin::CopyBlockX16,
        Builtin::CopyBlockUnalignedX16,
        Builtin::UpdateInline,
        Builtin::Timestamp,
        Builtin::PatchIndirect,
        Builtin::BlockProcessor,
    ];

    /// The kernel's name in the code object (`fill_x4`).
    pub const fn name(self) -> &'static str {
        self.names().0
    }

    /// The kernel descriptor's symbol (`fill_x4.kd`), as `hsa_executable_get_symbol_by_name` and
    /// the soft runtime's CPU registry want it.
    pub const fn symbol(self) -> &'static str {
        self.names().1
    }

    const fn names(self) -> (&'static str, &'static str) {
        match self {
            Builtin::FillX1 => ("fill_x1", "fill_x1.kd"),
            Builtin::FillX2 => ("fill_x2", "fill_x2.kd"),
            Builtin::FillX4 => ("fill_x4", "fill_x4.kd"),
            Builtin::FillX8 => ("fill_x8", "fill_x8.kd"),
            Builtin::FillBlockX16 => ("fill_block_x16", "fill_block_x16.kd"),
            Builtin::CopyX1 => ("copy_x1", "copy_x1.kd"),
            Builtin::CopyBlockX4 => ("copy_block_x4", "copy_block_x4.kd"),
            Builtin::CopyBlockX8 => ("copy_block_x8", "copy_block_x8.kd"),
            Builtin::CopyBlockX16 => ("copy_block_x16", "copy_block_x16.kd"),
            Builtin::CopyBlockUnalignedX16 => ("copy_block_unaligned_x16", "copy_block_unaligned_x16.kd"),
            Builtin::UpdateInline => ("update_inline", "update_inline.kd"),
            Builtin::Timestamp => ("timestamp", "timestamp.kd"),
            Builtin::PatchIndirect => ("patch_indirect", "patch_indirect.kd"),
            Builtin::BlockProcessor => ("block_processor", "block_processor.kd"),
        }
    }

    /// Looks a builtin up by kernel name or descriptor symbol.
    pub fn from_name(name_or_symbol: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|builtin| builtin.name() == name_or_symbol || builtin.symbol() == name_or_symbol)
    }

    /// Bytes one element of `element_count` stands for. The unaligned block copy counts bytes
    /// (each work-item moves up to 16 of them). `patch_indirect` has no element count; it reads
    /// u32 workgroup counts, so its element is 4 bytes; `block_processor` has none either, and
    /// counts bytes.
    pub const fn element_bytes(self) -> u64 {
        match self {
            Builtin::BlockProcessor => 1,
            Builtin::FillX1 | Builtin::CopyX1 | Builtin::CopyBlockUnalignedX16 | Builtin::UpdateInline => 1,
            Builtin::FillX2 => 2,
            Builtin::FillX4 | Builtin::CopyBlockX4 | Builtin::PatchIndirect => 4,
            Builtin::FillX8 | Builtin::CopyBlockX8 | Builtin::Timestamp => 8,
            Builtin::FillBlockX16 | Builtin::CopyBlockX16 => 16,
        }
    }

    /// The explicit kernel arguments, in order, as the Rust kernarg struct lays them out.
    pub const fn fields(self) -> &'static [ArgField] {
        match self {
            Builtin::FillX1 | Builtin::FillX2 | Builtin::FillX4 | Builtin::FillX8 | Builtin::FillBlockX16 => {
                FILL_FIELDS
            }
            Builtin::CopyX1
            | Builtin::CopyBlockX4
            | Builtin::CopyBlockX8
            | Builtin::CopyBlockX16
            | Builtin::CopyBlockUnalignedX16 => COPY_FIELDS,
            Builtin::UpdateInline => UPDATE_INLINE_FIELDS,
            Builtin::Timestamp => TIMESTAMP_FIELDS,
            Builtin::PatchIndirect => PATCH_INDIRECT_FIELDS,
            Builtin::BlockProcessor => BLOCK_PROCESSOR_FIELDS,
        }
    }

    /// Size of the kernel's kernarg struct: the bytes a dispatch must provide.
    pub const fn kernarg_size(self) -> usize {
        match self {
            Builtin::FillX1 | Builtin::FillX2 | Builtin::FillX4 | Builtin::FillX8 | Builtin::FillBlockX16 => {
                size_of::<FillArgs>()
            }
            Builtin::CopyX1
            | Builtin::CopyBlockX4
            | Builtin::CopyBlockX8
            | Builtin::CopyBlockX16
            | Builtin::CopyBlockUnalignedX16 => size_of::<CopyArgs>(),
            Builtin::UpdateInline => size_of::<UpdateInlineArgs>(),
            Builtin::Timestamp => size_of::<TimestampArgs>(),
            Builtin::PatchIndirect => size_of::<PatchIndirectArgs>(),
            Builtin::BlockProcessor => size_of::<BlockProcessorArgs>(),
        }
    }
}

impl core::fmt::Display for Builtin {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_symbols_agree() {
        for builtin in Builtin::ALL {
            assert_eq!(builtin.symbol(), format!("{}.kd", builtin.name()));
            assert_eq!(Builtin::from_name(builtin.name()), Some(builtin));
            assert_eq!(Builtin::from_name(builtin.symbol()), Some(builtin));
        }
        assert_eq!(Builtin::from_name("fill_x3"), None);
    }

    #[test]
    fn discriminants_are_positions_in_all_and_new_kernels_come_last() {
        for (index, builtin) in Builtin::ALL.into_iter().enumerate() {
            assert_eq!(builtin as usize, index, "{builtin}");
        }
        assert_eq!(Builtin::Timestamp as usize, 11);
        assert_eq!(Builtin::PatchIndirect as usize, 12);
        assert_eq!(Builtin::BlockProcessor as usize, 13);
        assert_eq!(Builtin::ALL.last(), Some(&Builtin::BlockProcessor));
    }

    #[test]
    fn fields_tile_each_struct_without_gaps() {
        for builtin in Builtin::ALL {
            let mut end = 0;
            for field in builtin.fields() {
                assert_eq!(field.offset, end, "{builtin}.{}", field.name);
                end = field.offset + field.size;
            }
            assert_eq!(end, builtin.kernarg_size(), "{builtin}");
        }
    }
}
