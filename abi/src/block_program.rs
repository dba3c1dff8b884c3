//! The block program: the finished, executable form of a reusable command buffer.
//!
//! Recording folds barriers into command flags and decides each dispatch's kernarg strategy once;
//! finishing writes the result as a flat byte image that execution only reads. Execution is a small
//! interpreter, so the image is designed for it: every record is fixed-size, every count and worst
//! case is precomputed, and [`validate`] checks every index and range once so the interpreter's
//! reads afterwards cannot go out of bounds.
//!
//! ```text
//! program   ProgramHeader (32 B)
//!           block table: block_count little-endian u32 block offsets (4-byte aligned)
//!           blocks, in ordinal order, 64-byte aligned, not overlapping
//! block     BlockHeader (64 B)
//!           commands  command_count × Command (64 B), 64-byte aligned
//!           sources   (static + dynamic) × BindingSource (16 B), 16-byte aligned
//!           patches   patch_count × PatchRecord (8 B), 8-byte aligned
//!           rodata    rodata_length bytes (kernarg templates, constants, update payloads), 64-byte aligned
//! ```
//!
//! Section offsets are relative to the block's start and may come in any order as long as they
//! do not overlap each other or the header. Everything is little-endian. The view reads records by
//! value with unaligned loads, so an image read from disk into any `&[u8]` can be validated and
//! executed in place; the alignment rules keep records naturally aligned when the image itself sits
//! at a 64-byte boundary, as the recorder's allocation does.
//!
//! Indices inside a block (binding sources, patches) are block-local, so a block is self-contained
//! and execution resolves one block's binding sources in one pass. Branch targets are block ordinals.

mod builder;
mod command;
mod error;
mod records;
mod validate;
mod view;
mod writer;

pub use builder::{BlockBuf, BlockProgramBuf};
pub use command::{
    BarrierCommand, BranchCommand, Command, CommandFlags, CommandHeader, CommandRecord, CondBranchCommand, CopyCommand,
    DecodedCommand, DispatchCommand, ExecutionCost, FillCommand, ProfileMarkerCommand, ReturnCommand, UpdateCommand,
};
pub use error::{Location, ProgramError, Section};
pub use records::{BindingSource, BlockHeader, PatchRecord, ProgramHeader};
pub use validate::validate;
pub use view::{Block, BlockProgram};
pub use writer::{BlockParts, ImageWriter};

/// `"AQBP"`: the first word of a program image.
pub const PROGRAM_MAGIC: u32 = u32::from_le_bytes(*b"AQBP");
/// `"AQBK"`: the first word of every block, so a block is recognisable in a hex dump on its own.
pub const BLOCK_MAGIC: u32 = u32::from_le_bytes(*b"AQBK");
/// The format version written into program and block headers; any other version is rejected.
pub const PROGRAM_VERSION: u16 = 1;

pub const PROGRAM_HEADER_SIZE: u32 = 32;
pub const BLOCK_HEADER_SIZE: u32 = 64;
pub const COMMAND_SIZE: u32 = 64;
pub const BINDING_SOURCE_SIZE: u32 = 16;
pub const PATCH_RECORD_SIZE: u32 = 8;
/// Bytes per block-table entry (one u32 block offset).
pub const BLOCK_TABLE_ENTRY_SIZE: u32 = 4;

/// Alignment of block offsets within the program and of the sections within a block.
pub const BLOCK_ALIGN: u32 = 64;
pub const BLOCK_TABLE_ALIGN: u32 = 4;
pub const COMMAND_ALIGN: u32 = 64;
pub const SOURCE_ALIGN: u32 = 16;
pub const PATCH_ALIGN: u32 = 8;
/// Rodata is 64-byte aligned so a template at an offset aligned to its kernarg alignment (at most
/// [`MAX_KERNARG_ALIGNMENT`]) stays aligned once the rodata is published to device memory.
pub const RODATA_ALIGN: u32 = 64;
pub const MAX_KERNARG_ALIGNMENT: u32 = 64;

/// "No binding source" in u16 source-index fields (e.g. a non-indirect dispatch's grid source).
pub const NO_SOURCE: u16 = u16::MAX;
/// "No implicit kernel arguments" in [`DispatchCommand::implicit_args_offset`].
pub const NO_IMPLICIT_ARGS: u16 = u16::MAX;

/// Execution carves kernarg space in blocks of this many bytes (one cache line), so every command's
/// kernargs start 64-byte aligned and never share a line with another command's.
pub const KERNARG_BLOCK_BYTES: u64 = 64;
/// Kernarg bytes of the fill, copy and timestamp builtins: their arguments fit one block. An
/// update is a copy too: its payload lives in the block's rodata, which finishing publishes
/// to device memory, so execution never stages payload bytes.
pub const BUILTIN_KERNARG_BYTES: u64 = KERNARG_BLOCK_BYTES;
/// Kernarg bytes of the one-work-item kernel that patches an indirect dispatch's grid.
pub const INDIRECT_PATCH_KERNARG_BYTES: u64 = KERNARG_BLOCK_BYTES;

/// How a block ends; recorded in [`BlockHeader::terminator`] so execution knows without scanning.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TerminatorKind {
    /// The last command is a [`ReturnCommand`]: the program ends.
    Return = 1,
    /// The last command is a [`BranchCommand`].
    Branch = 2,
    /// The last command is a [`CondBranchCommand`].
    CondBranch = 3,
    /// No control command: execution continues at ordinal + 1, which must exist.
    Fallthrough = 4,
}

impl TerminatorKind {
    /// Zero is not a terminator, so a zeroed header never validates.
    pub const fn from_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            1 => Self::Return,
            2 => Self::Branch,
            3 => Self::CondBranch,
            4 => Self::Fallthrough,
            _ => return None,
        })
    }

    /// The control command that must end a block with this terminator.
    pub const fn command_kind(self) -> Option<CommandKind> {
        match self {
            Self::Return => Some(CommandKind::Return),
            Self::Branch => Some(CommandKind::Branch),
            Self::CondBranch => Some(CommandKind::CondBranch),
            Self::Fallthrough => None,
        }
    }
}

/// The kind tag in byte 0 of every [`Command`].
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandKind {
    Dispatch = 1,
    Fill = 2,
    Copy = 3,
    Update = 4,
    Barrier = 5,
    ProfileMarker = 6,
    Branch = 7,
    CondBranch = 8,
    Return = 9,
}

impl CommandKind {
    /// Zero is not a kind, so a zeroed command record never validates.
    pub const fn from_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            1 => Self::Dispatch,
            2 => Self::Fill,
            3 => Self::Copy,
            4 => Self::Update,
            5 => Self::Barrier,
            6 => Self::ProfileMarker,
            7 => Self::Branch,
            8 => Self::CondBranch,
            9 => Self::Return,
            _ => return None,
        })
    }

    /// Branch, conditional branch and return end a block and may appear only as its last command.
    pub const fn is_control(self) -> bool {
        matches!(self, Self::Branch | Self::CondBranch | Self::Return)
    }
}

/// How execution produces a dispatch's kernarg segment; chosen once at finish.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernargStrategy {
    /// Every binding is static: the template is the complete kernarg segment, published to device
    /// memory once with the block's rodata; execution copies nothing and points the packet at it.
    Prepublished = 1,
    /// Static and dynamic bindings mix: execution copies the immutable template and writes each patch
    /// record's resolved pointer into the copy.
    PatchedTemplate = 2,
    /// Every binding is dynamic: execution writes the resolved pointers of the dispatch's sources at
    /// kernarg offsets 0, 8, 16, ..., then its u32 constants, and zeroes the rest.
    PointerScatter = 3,
    /// As [`Self::PatchedTemplate`], and the grid is read at execution from the `indirect_source`
    /// buffer (three u32 workgroup counts) by an extra patch packet.
    Indirect = 4,
}

impl KernargStrategy {
    pub const fn from_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            1 => Self::Prepublished,
            2 => Self::PatchedTemplate,
            3 => Self::PointerScatter,
            4 => Self::Indirect,
            _ => return None,
        })
    }

    /// Whether the kernargs come from a rodata template (all but pointer scatter).
    pub const fn uses_template(self) -> bool {
        !matches!(self, Self::PointerScatter)
    }
}

/// A binding source's tag.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// A device pointer known at record time.
    Static = 1,
    /// A binding-table slot plus a byte offset, resolved per execution.
    Dynamic = 2,
}

impl SourceKind {
    pub const fn from_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            1 => Self::Static,
            2 => Self::Dynamic,
            _ => return None,
        })
    }
}

/// A conditional branch's comparison, unsigned, as `value op operand`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareOp {
    Eq = 0,
    Ne = 1,
    Lt = 2,
    Le = 3,
    Gt = 4,
    Ge = 5,
}

impl CompareOp {
    pub const fn from_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            0 => Self::Eq,
            1 => Self::Ne,
            2 => Self::Lt,
            3 => Self::Le,
            4 => Self::Gt,
            5 => Self::Ge,
            _ => return None,
        })
    }

    pub const fn holds(self, value: u64, operand: u64) -> bool {
        match self {
            Self::Eq => value == operand,
            Self::Ne => value != operand,
            Self::Lt => value < operand,
            Self::Le => value <= operand,
            Self::Gt => value > operand,
            Self::Ge => value >= operand,
        }
    }
}

/// `value` rounded up to a multiple of `align` (a power of two), without overflow for u32 inputs.
pub(crate) const fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align).saturating_mul(align)
}
