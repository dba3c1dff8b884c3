//! AQL packets (HSA 1.2 system architecture, section 2.9) and AMD's vendor BARRIER_VALUE packet.
//!
//! Every packet is 64 bytes. Its first 16 bits are the header and, for kernel dispatches, the next 16
//! are `setup`: the producer writes the body first and publishes `header | setup << 16` last, with
//! one 32-bit release store, so the command processor never sees a half-written packet.

use bytemuck::{Pod, Zeroable};

use crate::{assert_layout, assert_offset};

pub const AQL_PACKET_SIZE: usize = 64;

/// `hsa_packet_type_t`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketType {
    VendorSpecific = 0,
    Invalid = 1,
    KernelDispatch = 2,
    BarrierAnd = 3,
    AgentDispatch = 4,
    BarrierOr = 5,
}

impl PacketType {
    pub const fn from_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            0 => Self::VendorSpecific,
            1 => Self::Invalid,
            2 => Self::KernelDispatch,
            3 => Self::BarrierAnd,
            4 => Self::AgentDispatch,
            5 => Self::BarrierOr,
            _ => return None,
        })
    }
}

/// `hsa_fence_scope_t`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum FenceScope {
    #[default]
    None = 0,
    Agent = 1,
    System = 2,
}

impl FenceScope {
    /// Scope 3 is reserved by the specification; it decodes to `None` here and callers that care
    /// reject it through [`PacketHeader::is_well_formed`].
    pub const fn from_bits(bits: u16) -> Self {
        match bits & 3 {
            1 => Self::Agent,
            2 => Self::System,
            _ => Self::None,
        }
    }
}

/// Bit positions of `hsa_packet_header_t`.
pub mod header_bits {
    pub const TYPE_SHIFT: u16 = 0;
    pub const TYPE_WIDTH: u16 = 8;
    pub const BARRIER_SHIFT: u16 = 8;
    pub const ACQUIRE_SHIFT: u16 = 9;
    pub const RELEASE_SHIFT: u16 = 11;
    pub const SCOPE_WIDTH: u16 = 2;
}

/// A packet header as the 16-bit word the command processor reads.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable, Default)]
pub struct PacketHeader(pub u16);

impl PacketHeader {
    pub const INVALID: Self = Self(PacketType::Invalid as u16);

    pub const fn new(kind: PacketType, barrier: bool, acquire: FenceScope, release: FenceScope) -> Self {
        Self(
            (kind as u16) << header_bits::TYPE_SHIFT
                | (barrier as u16) << header_bits::BARRIER_SHIFT
                | (acquire as u16) << header_bits::ACQUIRE_SHIFT
                | (release as u16) << header_bits::RELEASE_SHIFT,
        )
    }

    pub const fn packet_type_bits(self) -> u8 {
        (self.0 & 0xFF) as u8
    }

    pub const fn packet_type(self) -> Option<PacketType> {
        PacketType::from_bits(self.packet_type_bits())
    }

    pub const fn barrier(self) -> bool {
        self.0 >> header_bits::BARRIER_SHIFT & 1 == 1
    }

    pub const fn acquire(self) -> FenceScope {
        FenceScope::from_bits(self.0 >> header_bits::ACQUIRE_SHIFT)
    }

    pub const fn release(self) -> FenceScope {
        FenceScope::from_bits(self.0 >> header_bits::RELEASE_SHIFT)
    }

    /// False for reserved fence-scope encodings or bits above the release scope.
    pub const fn is_well_formed(self) -> bool {
        let acquire = self.0 >> header_bits::ACQUIRE_SHIFT & 3;
        let release = self.0 >> header_bits::RELEASE_SHIFT & 3;
        acquire != 3 && release != 3 && self.0 >> 13 == 0
    }

    /// The 32-bit word published with one release store: header in the low half, setup above.
    pub const fn with_setup(self, setup: u16) -> u32 {
        self.0 as u32 | (setup as u32) << 16
    }
}

/// `hsa_kernel_dispatch_packet_t`.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Pod, Zeroable, Default)]
pub struct KernelDispatchPacket {
    pub header: PacketHeader,
    /// Bits 0..2: number of grid dimensions (1..=3).
    pub setup: u16,
    pub workgroup_size_x: u16,
    pub workgroup_size_y: u16,
    pub workgroup_size_z: u16,
    pub reserved0: u16,
    pub grid_size_x: u32,
    pub grid_size_y: u32,
    pub grid_size_z: u32,
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: u64,
}
assert_layout!(KernelDispatchPacket, size = 64, align = 64);
assert_offset!(KernelDispatchPacket, setup, 2);
assert_offset!(KernelDispatchPacket, workgroup_size_x, 4);
assert_offset!(KernelDispatchPacket, workgroup_size_y, 6);
assert_offset!(KernelDispatchPacket, workgroup_size_z, 8);
assert_offset!(KernelDispatchPacket, reserved0, 10);
assert_offset!(KernelDispatchPacket, grid_size_x, 12);
assert_offset!(KernelDispatchPacket, grid_size_y, 16);
assert_offset!(KernelDispatchPacket, grid_size_z, 20);
assert_offset!(KernelDispatchPacket, private_segment_size, 24);
assert_offset!(KernelDispatchPacket, group_segment_size, 28);
assert_offset!(KernelDispatchPacket, kernel_object, 32);
assert_offset!(KernelDispatchPacket, kernarg_address, 40);
assert_offset!(KernelDispatchPacket, reserved2, 48);
assert_offset!(KernelDispatchPacket, completion_signal, 56);

/// `hsa_kernel_dispatch_packet_setup_t`: the dimensions field.
pub const DISPATCH_SETUP_DIMENSIONS_SHIFT: u16 = 0;
pub const DISPATCH_SETUP_DIMENSIONS_WIDTH: u16 = 2;

impl KernelDispatchPacket {
    pub const fn dimensions(&self) -> u16 {
        self.setup & 3
    }
    pub const fn grid(&self) -> [u32; 3] {
        [self.grid_size_x, self.grid_size_y, self.grid_size_z]
    }
    pub const fn workgroup(&self) -> [u16; 3] {
        [self.workgroup_size_x, self.workgroup_size_y, self.workgroup_size_z]
    }
}

/// A kernel launch without its kernarg address: everything a dispatch packet's body holds but
/// the per-submission fields. [`Self::packet`] is the one place dispatch packets are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DispatchTemplate {
    pub kernel_object: u64,
    pub grid: [u32; 3],
    pub workgroup: [u16; 3],
    /// The packet's setup field; every template the engine builds says [`crate::DISPATCH_DIMENSIONS`].
    pub dimensions: u16,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
}

impl DispatchTemplate {
    /// A one-dimensional launch (y and z are 1) whose packet says [`crate::DISPATCH_DIMENSIONS`],
    /// as every dispatch packet the engine publishes does: the builtins' launches.
    pub const fn linear(
        kernel_object: u64,
        grid_size: u32,
        workgroup_size: u16,
        group_segment_size: u32,
        private_segment_size: u32,
    ) -> Self {
        Self {
            kernel_object,
            grid: [grid_size, 1, 1],
            workgroup: [workgroup_size, 1, 1],
            dimensions: crate::DISPATCH_DIMENSIONS,
            group_segment_size,
            private_segment_size,
        }
    }

    /// The packet body (header left INVALID for the publisher) with its kernargs at
    /// `kernarg_address`, decrementing `completion_signal` (0 for none) when done.
    pub fn packet(&self, kernarg_address: u64, completion_signal: u64) -> KernelDispatchPacket {
        KernelDispatchPacket {
            setup: self.dimensions,
            workgroup_size_x: self.workgroup[0],
            workgroup_size_y: self.workgroup[1],
            workgroup_size_z: self.workgroup[2],
            grid_size_x: self.grid[0],
            grid_size_y: self.grid[1],
            grid_size_z: self.grid[2],
            group_segment_size: self.group_segment_size,
            private_segment_size: self.private_segment_size,
            kernel_object: self.kernel_object,
            kernarg_address,
            completion_signal,
            ..Default::default()
        }
    }
}

/// `hsa_agent_dispatch_packet_t`.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Pod, Zeroable, Default)]
pub struct AgentDispatchPacket {
    pub header: PacketHeader,
    pub type_: u16,
    pub reserved0: u32,
    pub return_address: u64,
    pub arg: [u64; 4],
    pub reserved2: u64,
    pub completion_signal: u64,
}
assert_layout!(AgentDispatchPacket, size = 64, align = 64);
assert_offset!(AgentDispatchPacket, type_, 2);
assert_offset!(AgentDispatchPacket, return_address, 8);
assert_offset!(AgentDispatchPacket, arg, 16);
assert_offset!(AgentDispatchPacket, reserved2, 48);
assert_offset!(AgentDispatchPacket, completion_signal, 56);

/// `hsa_barrier_and_packet_t`: waits until every non-null dependency signal reaches 0.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Pod, Zeroable, Default)]
pub struct BarrierAndPacket {
    pub header: PacketHeader,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [u64; 5],
    pub reserved2: u64,
    pub completion_signal: u64,
}
assert_layout!(BarrierAndPacket, size = 64, align = 64);
assert_offset!(BarrierAndPacket, dep_signal, 8);
assert_offset!(BarrierAndPacket, reserved2, 48);
assert_offset!(BarrierAndPacket, completion_signal, 56);

/// `hsa_barrier_or_packet_t`: waits until any non-null dependency signal reaches 0.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Pod, Zeroable, Default)]
pub struct BarrierOrPacket {
    pub header: PacketHeader,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [u64; 5],
    pub reserved2: u64,
    pub completion_signal: u64,
}
assert_layout!(BarrierOrPacket, size = 64, align = 64);
assert_offset!(BarrierOrPacket, dep_signal, 8);
assert_offset!(BarrierOrPacket, completion_signal, 56);

/// `hsa_amd_vendor_packet_header_t`: the generic header followed by AMD's packet format byte.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, Default, PartialEq, Eq)]
pub struct VendorPacketHeader {
    pub header: PacketHeader,
    pub amd_format: u8,
    pub reserved: u8,
}
assert_layout!(VendorPacketHeader, size = 4, align = 2);
assert_offset!(VendorPacketHeader, amd_format, 2);

/// `hsa_amd_packet_type_t` values carried in [`VendorPacketHeader::amd_format`].
pub mod amd_format {
    pub const PM4_IB: u8 = 1;
    pub const BARRIER_VALUE: u8 = 2;
}

/// `hsa_signal_condition_t`, as used by BARRIER_VALUE and signal waits.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalCondition {
    Eq = 0,
    Ne = 1,
    Lt = 2,
    Gte = 3,
}

impl SignalCondition {
    pub const fn from_bits(bits: u32) -> Option<Self> {
        Some(match bits {
            0 => Self::Eq,
            1 => Self::Ne,
            2 => Self::Lt,
            3 => Self::Gte,
            _ => return None,
        })
    }

    pub const fn holds(self, observed: i64, compare: i64) -> bool {
        match self {
            Self::Eq => observed == compare,
            Self::Ne => observed != compare,
            Self::Lt => observed < compare,
            Self::Gte => observed >= compare,
        }
    }
}

/// `hsa_amd_barrier_value_packet_t`: waits until `(signal & mask) cond value`.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Pod, Zeroable, Default)]
pub struct BarrierValuePacket {
    pub header: VendorPacketHeader,
    pub reserved0: u32,
    pub signal: u64,
    pub value: i64,
    pub mask: i64,
    pub cond: u32,
    pub reserved1: u32,
    pub reserved2: u64,
    pub reserved3: u64,
    pub completion_signal: u64,
}
assert_layout!(BarrierValuePacket, size = 64, align = 64);
assert_offset!(BarrierValuePacket, reserved0, 4);
assert_offset!(BarrierValuePacket, signal, 8);
assert_offset!(BarrierValuePacket, value, 16);
assert_offset!(BarrierValuePacket, mask, 24);
assert_offset!(BarrierValuePacket, cond, 32);
assert_offset!(BarrierValuePacket, reserved1, 36);
assert_offset!(BarrierValuePacket, reserved2, 40);
assert_offset!(BarrierValuePacket, reserved3, 48);
assert_offset!(BarrierValuePacket, completion_signal, 56);

/// One ring slot viewed as raw words; the processor reads the header to pick the real type.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Pod, Zeroable, Default)]
pub struct AqlPacket {
    pub words: [u64; 8],
}
assert_layout!(AqlPacket, size = 64, align = 64);

impl AqlPacket {
    pub fn header(&self) -> PacketHeader {
        PacketHeader(self.words[0] as u16)
    }
    /// The completion signal sits at byte 56 in every packet format.
    pub fn completion_signal(&self) -> u64 {
        self.words[7]
    }
    pub fn as_dispatch(&self) -> &KernelDispatchPacket {
        bytemuck::cast_ref(self)
    }
    pub fn as_barrier_and(&self) -> &BarrierAndPacket {
        bytemuck::cast_ref(self)
    }
    pub fn as_barrier_or(&self) -> &BarrierOrPacket {
        bytemuck::cast_ref(self)
    }
    pub fn as_barrier_value(&self) -> &BarrierValuePacket {
        bytemuck::cast_ref(self)
    }
    pub fn as_agent_dispatch(&self) -> &AgentDispatchPacket {
        bytemuck::cast_ref(self)
    }
    pub fn from_packet<T: Pod>(packet: &T) -> Self {
        bytemuck::pod_read_unaligned(bytemuck::bytes_of(packet))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_every_field() {
        for kind in [PacketType::KernelDispatch, PacketType::BarrierAnd, PacketType::BarrierOr] {
            for barrier in [false, true] {
                for acquire in [FenceScope::None, FenceScope::Agent, FenceScope::System] {
                    for release in [FenceScope::None, FenceScope::Agent, FenceScope::System] {
                        let header = PacketHeader::new(kind, barrier, acquire, release);
                        assert_eq!(header.packet_type(), Some(kind));
                        assert_eq!(header.barrier(), barrier);
                        assert_eq!(header.acquire(), acquire);
                        assert_eq!(header.release(), release);
                        assert!(header.is_well_formed());
                    }
                }
            }
        }
    }

    #[test]
    fn reserved_scope_is_malformed() {
        assert!(!PacketHeader(2 | 3 << 9).is_well_formed());
        assert!(!PacketHeader(2 | 3 << 11).is_well_formed());
        assert!(!PacketHeader(2 | 1 << 13).is_well_formed());
    }

    #[test]
    fn setup_goes_to_the_high_half() {
        let word =
            PacketHeader::new(PacketType::KernelDispatch, true, FenceScope::Agent, FenceScope::System).with_setup(3);
        assert_eq!(word & 0xFF, 2);
        assert_eq!(word >> 16, 3);
        assert_eq!(word >> 8 & 1, 1);
    }

    #[test]
    fn conditions_compare_as_specified() {
        assert!(SignalCondition::Eq.holds(4, 4));
        assert!(!SignalCondition::Ne.holds(4, 4));
        assert!(SignalCondition::Lt.holds(-1, 0));
        assert!(SignalCondition::Gte.holds(0, 0));
        assert!(SignalCondition::from_bits(4).is_none());
    }
}
