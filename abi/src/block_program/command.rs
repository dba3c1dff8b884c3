//! The 64-byte command record and the per-kind views cast from its bytes.
//!
//! Every command starts with a two-byte [`CommandHeader`]: the kind tag and the flags that
//! recording folded in (the barrier bit and the acquire/release fence scopes of the barriers
//! around the command). The rest of the 64 bytes is laid out by kind, like the AQL packet formats
//! behind [`crate::AqlPacket`]; every kind is `Pod` and exactly 64 bytes, so a [`Command`] converts
//! to and from any of them with `bytemuck::cast`.

use bytemuck::{Pod, Zeroable};

use super::{
    BUILTIN_KERNARG_BYTES, CommandKind, CompareOp, INDIRECT_PATCH_KERNARG_BYTES, KERNARG_BLOCK_BYTES, KernargStrategy,
    NO_IMPLICIT_ARGS, NO_SOURCE, align_up,
};
use crate::packet::FenceScope;
use crate::{assert_layout, assert_offset};

/// The barrier bit and fence scopes of a command.
///
/// Bits 0..5 are `hsa_packet_header_t` bits 8..13 shifted down by 8 (barrier, acquire scope,
/// release scope), so execution builds a packet header as `packet_type | flags.packet_header_bits()`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable, Default)]
pub struct CommandFlags(pub u8);

impl CommandFlags {
    pub const NONE: Self = Self(0);
    pub const BARRIER_BIT: u8 = 1 << 0;
    pub const ACQUIRE_SHIFT: u8 = 1;
    pub const RELEASE_SHIFT: u8 = 3;
    /// Bits that must be zero.
    pub const RESERVED_MASK: u8 = 0xE0;

    pub const fn new(barrier: bool, acquire: FenceScope, release: FenceScope) -> Self {
        Self(barrier as u8 | (acquire as u8) << Self::ACQUIRE_SHIFT | (release as u8) << Self::RELEASE_SHIFT)
    }

    pub const fn barrier(self) -> bool {
        self.0 & Self::BARRIER_BIT != 0
    }

    /// The raw two-bit acquire scope; 3 is reserved (as in AQL).
    pub const fn acquire_bits(self) -> u8 {
        self.0 >> Self::ACQUIRE_SHIFT & 3
    }

    pub const fn release_bits(self) -> u8 {
        self.0 >> Self::RELEASE_SHIFT & 3
    }

    /// `None` for the reserved scope encoding.
    pub const fn acquire(self) -> Option<FenceScope> {
        scope(self.acquire_bits())
    }

    pub const fn release(self) -> Option<FenceScope> {
        scope(self.release_bits())
    }

    /// The flags at their `hsa_packet_header_t` bit positions (barrier at 8, scopes at 9 and 11).
    pub const fn packet_header_bits(self) -> u16 {
        ((self.0 & !Self::RESERVED_MASK) as u16) << 8
    }
}

const fn scope(bits: u8) -> Option<FenceScope> {
    match bits {
        0 => Some(FenceScope::None),
        1 => Some(FenceScope::Agent),
        2 => Some(FenceScope::System),
        _ => None,
    }
}

/// Bytes 0..2 of every command.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable, Default)]
pub struct CommandHeader {
    /// A [`CommandKind`].
    pub kind: u8,
    pub flags: CommandFlags,
}
assert_layout!(CommandHeader, size = 2, align = 1);
assert_offset!(CommandHeader, flags, 1);

impl CommandHeader {
    pub const fn new(kind: CommandKind, flags: CommandFlags) -> Self {
        Self { kind: kind as u8, flags }
    }
}

/// One command as raw bytes; [`Command::decode`] picks the per-kind view from byte 0.
#[repr(C, align(8))]
#[derive(Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct Command {
    pub bytes: [u8; 64],
}
assert_layout!(Command, size = 64, align = 8);

impl core::fmt::Debug for Command {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.decode() {
            Some(decoded) => decoded.fmt(f),
            None => f.debug_struct("Command").field("bytes", &self.bytes).finish(),
        }
    }
}

impl Command {
    pub const fn header(&self) -> CommandHeader {
        CommandHeader { kind: self.bytes[0], flags: CommandFlags(self.bytes[1]) }
    }

    pub const fn kind(&self) -> Option<CommandKind> {
        CommandKind::from_bits(self.bytes[0])
    }

    pub const fn flags(&self) -> CommandFlags {
        CommandFlags(self.bytes[1])
    }

    /// The per-kind view, or `None` for an unknown kind tag.
    pub fn decode(&self) -> Option<DecodedCommand> {
        let c = *self;
        Some(match self.kind()? {
            CommandKind::Dispatch => DecodedCommand::Dispatch(bytemuck::cast(c)),
            CommandKind::Fill => DecodedCommand::Fill(bytemuck::cast(c)),
            CommandKind::Copy => DecodedCommand::Copy(bytemuck::cast(c)),
            CommandKind::Update => DecodedCommand::Update(bytemuck::cast(c)),
            CommandKind::Barrier => DecodedCommand::Barrier(bytemuck::cast(c)),
            CommandKind::ProfileMarker => DecodedCommand::ProfileMarker(bytemuck::cast(c)),
            CommandKind::Branch => DecodedCommand::Branch(bytemuck::cast(c)),
            CommandKind::CondBranch => DecodedCommand::CondBranch(bytemuck::cast(c)),
            CommandKind::Return => DecodedCommand::Return(bytemuck::cast(c)),
        })
    }
}

/// A per-kind command view: 64 bytes, `Pod`, header at byte 0.
pub trait CommandRecord: Pod + Into<Command> {
    const KIND: CommandKind;

    fn header(&self) -> CommandHeader;

    /// The same command with `flags` in its header.
    fn with_flags(self, flags: CommandFlags) -> Self;
}

macro_rules! command_record {
    ($ty:ident, $kind:ident) => {
        assert_layout!($ty, size = 64, align = 8);
        assert_offset!($ty, header, 0);

        impl CommandRecord for $ty {
            const KIND: CommandKind = CommandKind::$kind;

            fn header(&self) -> CommandHeader {
                self.header
            }

            fn with_flags(mut self, flags: CommandFlags) -> Self {
                self.header.flags = flags;
                self
            }
        }

        impl From<$ty> for Command {
            fn from(value: $ty) -> Self {
                bytemuck::cast(value)
            }
        }
    };
}

/// Launch a kernel. Execution publishes it with [`crate::DISPATCH_DIMENSIONS`], as every dispatch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct DispatchCommand {
    pub header: CommandHeader,
    /// A [`KernargStrategy`].
    pub kernarg_strategy: u8,
    /// A power of two, at most [`super::MAX_KERNARG_ALIGNMENT`]; template offsets are multiples.
    pub kernarg_alignment: u8,
    /// Each axis nonzero.
    pub workgroup_size: [u16; 3],
    /// Bytes of the kernarg segment, implicit arguments included.
    pub kernarg_size: u16,
    /// Work-items per axis, each nonzero (for an indirect dispatch, the value execution publishes if
    /// the patch packet were skipped; the recorder writes 1s).
    pub grid_size: [u32; 3],
    /// The kernel descriptor's device address (64-byte aligned, nonzero).
    pub kernel_object: u64,
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    /// Rodata offset of the kernarg template (template strategies; zero for pointer scatter).
    pub template_offset: u32,
    /// Rodata offset of `constant_count` u32 constants, 4-byte aligned.
    pub constants_offset: u32,
    /// Bytes recorded at `template_offset`; at least `kernarg_size` for the template strategies.
    pub template_length: u16,
    pub constant_count: u16,
    /// The block-local sources this dispatch reads: pointer scatter writes them in order; the
    /// other strategies list them so execution can track residency without walking patches.
    pub first_source: u16,
    pub source_count: u16,
    /// The block-local patch records applied to the template copy. Within a block, dispatches'
    /// patch ranges are disjoint and in command order.
    pub first_patch: u16,
    pub patch_count: u16,
    /// Kernarg offset of the implicit arguments, or [`NO_IMPLICIT_ARGS`]; 8-byte aligned.
    pub implicit_args_offset: u16,
    /// The source holding the indirect grid (three u32), or [`NO_SOURCE`] unless indirect.
    pub indirect_source: u16,
}
command_record!(DispatchCommand, Dispatch);
assert_offset!(DispatchCommand, kernarg_strategy, 2);
assert_offset!(DispatchCommand, kernarg_alignment, 3);
assert_offset!(DispatchCommand, workgroup_size, 4);
assert_offset!(DispatchCommand, kernarg_size, 10);
assert_offset!(DispatchCommand, grid_size, 12);
assert_offset!(DispatchCommand, kernel_object, 24);
assert_offset!(DispatchCommand, private_segment_size, 32);
assert_offset!(DispatchCommand, group_segment_size, 36);
assert_offset!(DispatchCommand, template_offset, 40);
assert_offset!(DispatchCommand, constants_offset, 44);
assert_offset!(DispatchCommand, template_length, 48);
assert_offset!(DispatchCommand, constant_count, 50);
assert_offset!(DispatchCommand, first_source, 52);
assert_offset!(DispatchCommand, source_count, 54);
assert_offset!(DispatchCommand, first_patch, 56);
assert_offset!(DispatchCommand, patch_count, 58);
assert_offset!(DispatchCommand, implicit_args_offset, 60);
assert_offset!(DispatchCommand, indirect_source, 62);

impl DispatchCommand {
    /// A dispatch with 16-byte kernarg alignment and no template, sources, patches, constants,
    /// implicit arguments or indirect grid; the caller fills in what the strategy needs.
    pub fn new(strategy: KernargStrategy, kernel_object: u64, grid_size: [u32; 3], workgroup_size: [u16; 3]) -> Self {
        Self {
            header: CommandHeader::new(CommandKind::Dispatch, CommandFlags::NONE),
            kernarg_strategy: strategy as u8,
            kernarg_alignment: 16,
            workgroup_size,
            grid_size,
            kernel_object,
            implicit_args_offset: NO_IMPLICIT_ARGS,
            indirect_source: NO_SOURCE,
            ..Self::zeroed()
        }
    }

    pub const fn strategy(&self) -> Option<KernargStrategy> {
        KernargStrategy::from_bits(self.kernarg_strategy)
    }

    /// The execution cost of a dispatch with `strategy` and a `kernarg_size`-byte segment (see
    /// [`DecodedCommand::execution_cost`]), known before the command is built.
    pub const fn cost(strategy: Option<KernargStrategy>, kernarg_size: u16) -> ExecutionCost {
        let own = align_up(kernarg_size as u64, KERNARG_BLOCK_BYTES);
        let (packets, kernarg_bytes) = match strategy {
            Some(KernargStrategy::Prepublished) => (1, 0),
            Some(KernargStrategy::Indirect) => (2, own + INDIRECT_PATCH_KERNARG_BYTES),
            _ => (1, own),
        };
        ExecutionCost { packets, kernarg_bytes }
    }

    /// The launch execution publishes for this dispatch, with [`crate::DISPATCH_DIMENSIONS`].
    pub fn template(&self) -> crate::DispatchTemplate {
        crate::DispatchTemplate {
            kernel_object: self.kernel_object,
            grid: self.grid_size,
            workgroup: self.workgroup_size,
            dimensions: crate::DISPATCH_DIMENSIONS,
            group_segment_size: self.group_segment_size,
            private_segment_size: self.private_segment_size,
        }
    }

    /// The packet's header word (`header | setup << 16`) with the flags recording folded in.
    pub fn header_word(&self) -> u32 {
        crate::PacketType::KernelDispatch as u32
            | u32::from(self.header.flags.packet_header_bits())
            | u32::from(crate::DISPATCH_DIMENSIONS) << 16
    }

    /// The source range `first_source..first_source + source_count`, without overflow.
    pub fn sources(&self) -> core::ops::Range<u32> {
        u32::from(self.first_source)..u32::from(self.first_source) + u32::from(self.source_count)
    }

    pub fn patches(&self) -> core::ops::Range<u32> {
        u32::from(self.first_patch)..u32::from(self.first_patch) + u32::from(self.patch_count)
    }
}

/// Fill `length` bytes of `target` with a `width`-byte `pattern`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct FillCommand {
    pub header: CommandHeader,
    /// 1, 2, 4 or 8.
    pub width: u8,
    pub reserved0: u8,
    /// Block-local source index.
    pub target: u16,
    pub reserved1: u16,
    /// A multiple of `width`.
    pub length: u64,
    /// The low `width` bytes; the bits above must be zero.
    pub pattern: u64,
    pub reserved2: [u64; 5],
}
command_record!(FillCommand, Fill);
assert_offset!(FillCommand, width, 2);
assert_offset!(FillCommand, target, 4);
assert_offset!(FillCommand, length, 8);
assert_offset!(FillCommand, pattern, 16);
assert_offset!(FillCommand, reserved2, 24);

impl FillCommand {
    pub fn new(target: u16, length: u64, pattern: u64, width: u8) -> Self {
        Self {
            header: CommandHeader::new(CommandKind::Fill, CommandFlags::NONE),
            width,
            target,
            length,
            pattern,
            ..Self::zeroed()
        }
    }
}

/// Copy `length` bytes from `source` to `target` (non-overlapping ranges).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct CopyCommand {
    pub header: CommandHeader,
    pub reserved0: u16,
    pub source: u16,
    pub target: u16,
    pub length: u64,
    pub reserved1: [u64; 6],
}
command_record!(CopyCommand, Copy);
assert_offset!(CopyCommand, source, 4);
assert_offset!(CopyCommand, target, 6);
assert_offset!(CopyCommand, length, 8);
assert_offset!(CopyCommand, reserved1, 16);

impl CopyCommand {
    pub fn new(source: u16, target: u16, length: u64) -> Self {
        Self {
            header: CommandHeader::new(CommandKind::Copy, CommandFlags::NONE),
            source,
            target,
            length,
            ..Self::zeroed()
        }
    }
}

/// Write `length` bytes of rodata at `payload_offset` into `target`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct UpdateCommand {
    pub header: CommandHeader,
    pub reserved0: u16,
    pub target: u16,
    pub reserved1: u16,
    pub payload_offset: u32,
    pub length: u32,
    pub reserved2: [u64; 6],
}
command_record!(UpdateCommand, Update);
assert_offset!(UpdateCommand, target, 4);
assert_offset!(UpdateCommand, payload_offset, 8);
assert_offset!(UpdateCommand, length, 12);
assert_offset!(UpdateCommand, reserved2, 16);

impl UpdateCommand {
    pub fn new(target: u16, payload_offset: u32, length: u32) -> Self {
        Self {
            header: CommandHeader::new(CommandKind::Update, CommandFlags::NONE),
            target,
            payload_offset,
            length,
            ..Self::zeroed()
        }
    }
}

/// A barrier recording could not fold into a neighbouring command (e.g. at a block's end).
/// Its acquire and release scopes and barrier bit are the header flags; execution emits one
/// barrier-AND packet with them.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct BarrierCommand {
    pub header: CommandHeader,
    pub reserved0: [u16; 3],
    pub reserved1: [u64; 7],
}
command_record!(BarrierCommand, Barrier);

impl BarrierCommand {
    /// A barrier with the barrier bit set and the given scopes.
    pub fn new(acquire: FenceScope, release: FenceScope) -> Self {
        Self {
            header: CommandHeader::new(CommandKind::Barrier, CommandFlags::new(true, acquire, release)),
            ..Self::zeroed()
        }
    }

    pub const fn acquire(&self) -> Option<FenceScope> {
        self.header.flags.acquire()
    }

    pub const fn release(&self) -> Option<FenceScope> {
        self.header.flags.release()
    }
}

/// A profiling marker: execution dispatches the timestamp builtin, which writes the device clock as
/// one u64 at `target` when the queue reaches the marker. `marker_id` is the recorder's tag, kept
/// so a trace can name the marker.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct ProfileMarkerCommand {
    pub header: CommandHeader,
    /// Block-local source of the 8-byte, 8-byte aligned timestamp slot.
    pub target: u16,
    pub marker_id: u32,
    pub reserved1: [u64; 7],
}
command_record!(ProfileMarkerCommand, ProfileMarker);
assert_offset!(ProfileMarkerCommand, target, 2);
assert_offset!(ProfileMarkerCommand, marker_id, 4);

impl ProfileMarkerCommand {
    pub fn new(target: u16, marker_id: u32) -> Self {
        Self {
            header: CommandHeader::new(CommandKind::ProfileMarker, CommandFlags::NONE),
            target,
            marker_id,
            ..Self::zeroed()
        }
    }
}

/// Continue at block `target_block` (any ordinal, including earlier ones).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct BranchCommand {
    pub header: CommandHeader,
    pub reserved0: u16,
    pub target_block: u32,
    pub reserved1: [u64; 7],
}
command_record!(BranchCommand, Branch);
assert_offset!(BranchCommand, target_block, 4);

impl BranchCommand {
    pub fn new(target_block: u32) -> Self {
        Self { header: CommandHeader::new(CommandKind::Branch, CommandFlags::NONE), target_block, ..Self::zeroed() }
    }
}

/// Read a `width`-byte unsigned value at `source`, compare it with `operand`, and continue at
/// `taken_block` if `value compare operand` holds, else at `not_taken_block`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct CondBranchCommand {
    pub header: CommandHeader,
    /// 4 or 8.
    pub width: u8,
    /// A [`CompareOp`].
    pub compare: u8,
    pub source: u16,
    pub reserved0: u16,
    /// Fits in `width` bytes.
    pub operand: u64,
    pub taken_block: u32,
    pub not_taken_block: u32,
    pub reserved1: [u64; 5],
}
command_record!(CondBranchCommand, CondBranch);
assert_offset!(CondBranchCommand, width, 2);
assert_offset!(CondBranchCommand, compare, 3);
assert_offset!(CondBranchCommand, source, 4);
assert_offset!(CondBranchCommand, operand, 8);
assert_offset!(CondBranchCommand, taken_block, 16);
assert_offset!(CondBranchCommand, not_taken_block, 20);
assert_offset!(CondBranchCommand, reserved1, 24);

impl CondBranchCommand {
    pub fn new(
        source: u16,
        width: u8,
        compare: CompareOp,
        operand: u64,
        taken_block: u32,
        not_taken_block: u32,
    ) -> Self {
        Self {
            header: CommandHeader::new(CommandKind::CondBranch, CommandFlags::NONE),
            width,
            compare: compare as u8,
            source,
            operand,
            taken_block,
            not_taken_block,
            ..Self::zeroed()
        }
    }

    pub const fn compare_op(&self) -> Option<CompareOp> {
        CompareOp::from_bits(self.compare)
    }

    /// The block to continue at, given the raw value read at the source (masked to `width`).
    /// `None` for an unknown comparison, which a validated program does not contain.
    pub fn next_block(&self, value: u64) -> Option<u32> {
        let value = if self.width == 4 { value & u64::from(u32::MAX) } else { value };
        Some(if self.compare_op()?.holds(value, self.operand) { self.taken_block } else { self.not_taken_block })
    }
}

/// End the program.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct ReturnCommand {
    pub header: CommandHeader,
    pub reserved0: [u16; 3],
    pub reserved1: [u64; 7],
}
command_record!(ReturnCommand, Return);

impl ReturnCommand {
    pub fn new() -> Self {
        Self { header: CommandHeader::new(CommandKind::Return, CommandFlags::NONE), ..Self::zeroed() }
    }
}

impl Default for ReturnCommand {
    fn default() -> Self {
        Self::new()
    }
}

/// A command decoded by its kind tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodedCommand {
    Dispatch(DispatchCommand),
    Fill(FillCommand),
    Copy(CopyCommand),
    Update(UpdateCommand),
    Barrier(BarrierCommand),
    ProfileMarker(ProfileMarkerCommand),
    Branch(BranchCommand),
    CondBranch(CondBranchCommand),
    Return(ReturnCommand),
}

/// What one command may cost execution: AQL packets and kernarg bytes, worst case.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExecutionCost {
    pub packets: u64,
    pub kernarg_bytes: u64,
}

impl ExecutionCost {
    pub const fn saturating_add(self, other: Self) -> Self {
        Self {
            packets: self.packets.saturating_add(other.packets),
            kernarg_bytes: self.kernarg_bytes.saturating_add(other.kernarg_bytes),
        }
    }
}

impl DecodedCommand {
    pub const fn kind(&self) -> CommandKind {
        match self {
            Self::Dispatch(_) => CommandKind::Dispatch,
            Self::Fill(_) => CommandKind::Fill,
            Self::Copy(_) => CommandKind::Copy,
            Self::Update(_) => CommandKind::Update,
            Self::Barrier(_) => CommandKind::Barrier,
            Self::ProfileMarker(_) => CommandKind::ProfileMarker,
            Self::Branch(_) => CommandKind::Branch,
            Self::CondBranch(_) => CommandKind::CondBranch,
            Self::Return(_) => CommandKind::Return,
        }
    }

    pub fn to_command(&self) -> Command {
        match *self {
            Self::Dispatch(c) => c.into(),
            Self::Fill(c) => c.into(),
            Self::Copy(c) => c.into(),
            Self::Update(c) => c.into(),
            Self::Barrier(c) => c.into(),
            Self::ProfileMarker(c) => c.into(),
            Self::Branch(c) => c.into(),
            Self::CondBranch(c) => c.into(),
            Self::Return(c) => c.into(),
        }
    }

    /// The ABI's execution cost model; the block header's worst cases must cover the sum.
    ///
    /// Every command's kernargs are carved in [`KERNARG_BLOCK_BYTES`] units. A dispatch costs one
    /// packet and its rounded kernarg size (nothing for a prepublished one); an indirect dispatch
    /// adds the grid-patch packet and its kernargs. Fill, copy, update (a copy out of the published
    /// rodata) and profile markers are one builtin dispatch each; a barrier
    /// is one barrier-AND packet; control commands cost nothing.
    pub fn execution_cost(&self) -> ExecutionCost {
        let (packets, kernarg_bytes) = match self {
            Self::Dispatch(d) => return DispatchCommand::cost(d.strategy(), d.kernarg_size),
            Self::Fill(_) | Self::Copy(_) | Self::Update(_) | Self::ProfileMarker(_) => (1, BUILTIN_KERNARG_BYTES),
            Self::Barrier(_) => (1, 0),
            Self::Branch(_) | Self::CondBranch(_) | Self::Return(_) => (0, 0),
        };
        ExecutionCost { packets, kernarg_bytes }
    }
}
