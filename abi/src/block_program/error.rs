//! Why a byte image is not a valid block program, and where.

use core::fmt;

use super::{CommandKind, TerminatorKind};

/// Where in the program a problem is. Indices are block ordinals and block-local record indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    Program,
    Block { block: u32 },
    Command { block: u32, command: u32 },
    Source { block: u32, source: u32 },
    Patch { block: u32, patch: u32 },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Program => write!(f, "program"),
            Self::Block { block } => write!(f, "block {block}"),
            Self::Command { block, command } => write!(f, "block {block} command {command}"),
            Self::Source { block, source } => write!(f, "block {block} binding source {source}"),
            Self::Patch { block, patch } => write!(f, "block {block} patch {patch}"),
        }
    }
}

/// A region of the image with its own offset, length and alignment rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The whole image, as declared by `total_length`.
    Program,
    ProgramHeader,
    BlockTable,
    /// A whole block, as declared by its table offset and `block_length`.
    Block,
    BlockHeader,
    Commands,
    Sources,
    Patches,
    Rodata,
}

impl Section {
    pub const fn name(self) -> &'static str {
        match self {
            Self::Program => "program",
            Self::ProgramHeader => "program header",
            Self::BlockTable => "block table",
            Self::Block => "block",
            Self::BlockHeader => "block header",
            Self::Commands => "command section",
            Self::Sources => "binding-source section",
            Self::Patches => "patch section",
            Self::Rodata => "rodata section",
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The first problem [`super::validate`] found. Every variant says where (`at`) and, through
/// [`ProgramError::field`], which header or record field is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramError {
    /// The bytes end before `section` does.
    Truncated {
        at: Location,
        section: Section,
        needed: u64,
        available: u64,
    },
    /// `magic` is not [`super::PROGRAM_MAGIC`] / [`super::BLOCK_MAGIC`].
    BadMagic {
        at: Location,
        found: u32,
    },
    UnsupportedVersion {
        at: Location,
        found: u16,
    },
    /// A reserved field or bit is not zero.
    ReservedNotZero {
        at: Location,
        field: &'static str,
    },
    /// A declared count or length disagrees with what is actually there.
    CountMismatch {
        at: Location,
        field: &'static str,
        declared: u64,
        actual: u64,
    },
    /// A field holds a value outside its domain (unknown enum, zero where nonzero is required...).
    InvalidField {
        at: Location,
        field: &'static str,
        value: u64,
    },
    MisalignedSection {
        at: Location,
        section: Section,
        offset: u64,
        align: u32,
    },
    /// `offset..offset + length` does not fit in `0..limit` (the program or the block).
    SectionOutOfRange {
        at: Location,
        section: Section,
        offset: u64,
        length: u64,
        limit: u64,
    },
    OverlappingSections {
        at: Location,
        first: Section,
        second: Section,
    },
    /// A block starts before the previous block (or, for `None`, the block table) ends.
    OverlappingBlocks {
        at: Location,
        previous: Option<u32>,
    },
    /// The block header's `ordinal` is not its index in the block table.
    OrdinalMismatch {
        at: Location,
        found: u32,
    },
    UnknownTerminator {
        at: Location,
        value: u8,
    },
    UnknownCommandKind {
        at: Location,
        kind: u8,
    },
    /// A fence scope uses the reserved encoding 3.
    InvalidFenceScope {
        at: Location,
        field: &'static str,
        value: u8,
    },
    /// A binding-source, patch or binding-table index (or a range's end) is not below `limit`.
    IndexOutOfRange {
        at: Location,
        field: &'static str,
        index: u64,
        limit: u64,
    },
    /// `offset..offset + length` does not fit in the block's rodata.
    RodataOutOfRange {
        at: Location,
        field: &'static str,
        offset: u64,
        length: u64,
        rodata_length: u32,
    },
    /// A field that must be a multiple of `align` is not.
    MisalignedField {
        at: Location,
        field: &'static str,
        value: u64,
        align: u64,
    },
    /// A template strategy's template is shorter than the kernarg segment it initialises.
    TemplateTooShort {
        at: Location,
        template_length: u16,
        kernarg_size: u16,
    },
    /// Kernarg bytes a dispatch writes (`offset..offset + length`) exceed its `kernarg_size`.
    KernargOutOfRange {
        at: Location,
        field: &'static str,
        offset: u64,
        length: u64,
        kernarg_size: u16,
    },
    /// Patch `patch` of the dispatch at `at` writes past the dispatch's kernarg segment.
    PatchOutOfRange {
        at: Location,
        patch: u32,
        kernarg_offset: u32,
        kernarg_size: u16,
    },
    /// Patch `patch` of the dispatch at `at` is not 8-byte aligned.
    MisalignedPatch {
        at: Location,
        patch: u32,
        kernarg_offset: u32,
    },
    /// The dispatch's patch range starts before the previous dispatch's (in the same block) ends;
    /// patch ranges are disjoint and ascending.
    OverlappingPatchRanges {
        at: Location,
        first_patch: u16,
        previous_end: u64,
    },
    /// A grid or workgroup axis is zero.
    ZeroDimension {
        at: Location,
        field: &'static str,
        axis: u8,
    },
    InvalidFillWidth {
        at: Location,
        width: u8,
    },
    /// A branch names a block that does not exist.
    BranchTargetOutOfRange {
        at: Location,
        field: &'static str,
        target: u32,
        block_count: u32,
    },
    /// A branch, conditional branch or return before the block's last command.
    MisplacedControl {
        at: Location,
        kind: CommandKind,
    },
    /// The header's terminator needs a final control command that the block does not end with.
    MissingTerminator {
        at: Location,
        terminator: TerminatorKind,
    },
    /// The block ends with a control command of another kind than its header's terminator says.
    TerminatorMismatch {
        at: Location,
        terminator: TerminatorKind,
        found: CommandKind,
    },
    /// The last block falls through to a block that does not exist.
    FallthroughPastEnd {
        at: Location,
    },
    /// A block's worst case is below what its commands need under the execution cost model.
    WorstCaseTooSmall {
        at: Location,
        field: &'static str,
        declared: u32,
        required: u64,
    },
}

impl ProgramError {
    pub const fn location(&self) -> Location {
        match *self {
            Self::Truncated { at, .. }
            | Self::BadMagic { at, .. }
            | Self::UnsupportedVersion { at, .. }
            | Self::ReservedNotZero { at, .. }
            | Self::CountMismatch { at, .. }
            | Self::InvalidField { at, .. }
            | Self::MisalignedSection { at, .. }
            | Self::SectionOutOfRange { at, .. }
            | Self::OverlappingSections { at, .. }
            | Self::OverlappingBlocks { at, .. }
            | Self::OrdinalMismatch { at, .. }
            | Self::UnknownTerminator { at, .. }
            | Self::UnknownCommandKind { at, .. }
            | Self::InvalidFenceScope { at, .. }
            | Self::IndexOutOfRange { at, .. }
            | Self::RodataOutOfRange { at, .. }
            | Self::MisalignedField { at, .. }
            | Self::TemplateTooShort { at, .. }
            | Self::KernargOutOfRange { at, .. }
            | Self::PatchOutOfRange { at, .. }
            | Self::MisalignedPatch { at, .. }
            | Self::OverlappingPatchRanges { at, .. }
            | Self::ZeroDimension { at, .. }
            | Self::InvalidFillWidth { at, .. }
            | Self::BranchTargetOutOfRange { at, .. }
            | Self::MisplacedControl { at, .. }
            | Self::MissingTerminator { at, .. }
            | Self::TerminatorMismatch { at, .. }
            | Self::FallthroughPastEnd { at }
            | Self::WorstCaseTooSmall { at, .. } => at,
        }
    }

    /// The header or record field at fault (for section errors, the section's offset field).
    pub const fn field(&self) -> &'static str {
        match *self {
            Self::Truncated { section, .. } | Self::SectionOutOfRange { section, .. } => match section {
                Section::Program => "total_length",
                Section::ProgramHeader => "header",
                Section::BlockTable => "block_table_offset",
                Section::Block => "block_length",
                Section::BlockHeader => "block offset",
                Section::Commands => "command_offset",
                Section::Sources => "source_offset",
                Section::Patches => "patch_offset",
                Section::Rodata => "rodata_offset",
            },
            Self::MisalignedSection { section, .. } | Self::OverlappingSections { second: section, .. } => {
                match section {
                    Section::BlockTable => "block_table_offset",
                    Section::Commands => "command_offset",
                    Section::Sources => "source_offset",
                    Section::Patches => "patch_offset",
                    Section::Rodata => "rodata_offset",
                    _ => "block offset",
                }
            }
            Self::BadMagic { .. } => "magic",
            Self::UnsupportedVersion { .. } => "version",
            Self::OverlappingBlocks { .. } => "block offset",
            Self::OrdinalMismatch { .. } => "ordinal",
            Self::UnknownTerminator { .. }
            | Self::MissingTerminator { .. }
            | Self::TerminatorMismatch { .. }
            | Self::FallthroughPastEnd { .. } => "terminator",
            Self::UnknownCommandKind { .. } | Self::MisplacedControl { .. } => "kind",
            Self::TemplateTooShort { .. } => "template_length",
            Self::PatchOutOfRange { .. } | Self::MisalignedPatch { .. } => "kernarg_offset",
            Self::InvalidFillWidth { .. } => "width",
            Self::OverlappingPatchRanges { .. } => "first_patch",
            Self::ReservedNotZero { field, .. }
            | Self::CountMismatch { field, .. }
            | Self::InvalidField { field, .. }
            | Self::InvalidFenceScope { field, .. }
            | Self::IndexOutOfRange { field, .. }
            | Self::RodataOutOfRange { field, .. }
            | Self::MisalignedField { field, .. }
            | Self::KernargOutOfRange { field, .. }
            | Self::ZeroDimension { field, .. }
            | Self::BranchTargetOutOfRange { field, .. }
            | Self::WorstCaseTooSmall { field, .. } => field,
        }
    }
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.location();
        match *self {
            Self::Truncated { section, needed, available, .. } => {
                write!(f, "{at}: {section} needs {needed} bytes but only {available} are there")
            }
            Self::BadMagic { found, .. } => write!(f, "{at}: bad magic {found:#010x}"),
            Self::UnsupportedVersion { found, .. } => write!(f, "{at}: unsupported version {found}"),
            Self::ReservedNotZero { field, .. } => write!(f, "{at}: reserved {field} is not zero"),
            Self::CountMismatch { field, declared, actual, .. } => {
                write!(f, "{at}: {field} is {declared} but {actual} are there")
            }
            Self::InvalidField { field, value, .. } => write!(f, "{at}: invalid {field} {value:#x}"),
            Self::MisalignedSection { section, offset, align, .. } => {
                write!(f, "{at}: {section} at {offset:#x} is not {align}-byte aligned")
            }
            Self::SectionOutOfRange { section, offset, length, limit, .. } => {
                write!(f, "{at}: {section} at {offset:#x}, {length} bytes, does not fit in {limit} bytes")
            }
            Self::OverlappingSections { first, second, .. } => {
                write!(f, "{at}: {second} overlaps the {first}")
            }
            Self::OverlappingBlocks { previous: Some(previous), .. } => {
                write!(f, "{at} overlaps block {previous}")
            }
            Self::OverlappingBlocks { previous: None, .. } => {
                write!(f, "{at} overlaps the program header or block table")
            }
            Self::OrdinalMismatch { found, .. } => write!(f, "{at}: header says ordinal {found}"),
            Self::UnknownTerminator { value, .. } => write!(f, "{at}: unknown terminator {value}"),
            Self::UnknownCommandKind { kind, .. } => write!(f, "{at}: unknown command kind {kind}"),
            Self::InvalidFenceScope { field, value, .. } => {
                write!(f, "{at}: reserved {field} fence scope {value}")
            }
            Self::IndexOutOfRange { field, index, limit, .. } => {
                write!(f, "{at}: {field} {index} is out of range (limit {limit})")
            }
            Self::RodataOutOfRange { field, offset, length, rodata_length, .. } => {
                write!(f, "{at}: {field} {offset:#x} + {length} bytes is outside the {rodata_length}-byte rodata")
            }
            Self::MisalignedField { field, value, align, .. } => {
                write!(f, "{at}: {field} {value:#x} is not a multiple of {align}")
            }
            Self::TemplateTooShort { template_length, kernarg_size, .. } => write!(
                f,
                "{at}: kernarg template of {template_length} bytes is shorter than the {kernarg_size}-byte kernargs"
            ),
            Self::KernargOutOfRange { field, offset, length, kernarg_size, .. } => write!(
                f,
                "{at}: {field} writes kernarg bytes {offset}..{} past the {kernarg_size}-byte kernargs",
                offset.saturating_add(length)
            ),
            Self::PatchOutOfRange { patch, kernarg_offset, kernarg_size, .. } => write!(
                f,
                "{at}: patch {patch} writes 8 bytes at kernarg offset {kernarg_offset}, past the {kernarg_size}-byte kernargs"
            ),
            Self::MisalignedPatch { patch, kernarg_offset, .. } => {
                write!(f, "{at}: patch {patch} kernarg offset {kernarg_offset} is not 8-byte aligned")
            }
            Self::OverlappingPatchRanges { first_patch, previous_end, .. } => write!(
                f,
                "{at}: patch range starts at {first_patch}, before the previous dispatch's ends at {previous_end}"
            ),
            Self::ZeroDimension { field, axis, .. } => write!(f, "{at}: {field} axis {axis} is zero"),
            Self::InvalidFillWidth { width, .. } => write!(f, "{at}: fill width {width} is not 1, 2, 4 or 8"),
            Self::BranchTargetOutOfRange { field, target, block_count, .. } => {
                write!(f, "{at}: {field} names block {target} of {block_count}")
            }
            Self::MisplacedControl { kind, .. } => {
                write!(f, "{at}: {kind:?} before the block's last command")
            }
            Self::MissingTerminator { terminator, .. } => {
                write!(f, "{at}: terminator {terminator:?} but the block does not end with that command")
            }
            Self::TerminatorMismatch { terminator, found, .. } => {
                write!(f, "{at}: terminator {terminator:?} but the block ends with {found:?}")
            }
            Self::FallthroughPastEnd { .. } => write!(f, "{at}: the last block falls through past the end"),
            Self::WorstCaseTooSmall { field, declared, required, .. } => {
                write!(f, "{at}: {field} is {declared} but the commands need {required}")
            }
        }
    }
}

impl std::error::Error for ProgramError {}
