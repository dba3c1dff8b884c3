//! The memory-level ABI that aqueduct shares with the GPU command processor.
//!
//! Every type here is `#[repr(C)]` plain data with compile-time size and offset assertions; the
//! `hsa` crate's conformance test compares them against ROCr's own C headers. Nothing here has
//! behaviour beyond bit packing: the hot path writes these structs straight into ring memory.

pub mod block_program;
pub mod device_program;
pub mod hal_kernargs;
pub mod host_build;
pub mod host_build_abi;
pub mod implicit_kernargs;
pub mod kernel_descriptor;
pub mod packet;
pub mod queue;
pub mod signal;

pub use hal_kernargs::{try_write_hal_kernargs, write_hal_kernargs};
pub use host_build_abi::{
    HostArg, HostBuild, HostBuildFn, HostBuildRecord, HostBuildTable, WorkgroupContext, record_host_panic,
    take_host_panic,
};
pub use implicit_kernargs::{DISPATCH_DIMENSIONS, ImplicitKernargs};
pub use kernel_descriptor::KernelDescriptor;
pub use packet::{
    AQL_PACKET_SIZE, AgentDispatchPacket, AqlPacket, BarrierAndPacket, BarrierOrPacket, BarrierValuePacket,
    DispatchTemplate, FenceScope, KernelDispatchPacket, PacketHeader, PacketType, SignalCondition, VendorPacketHeader,
};
pub use queue::{AmdQueue, HsaQueue, QueueProperties, QueueType};
pub use signal::{AmdSignal, SignalKind};

/// The module's name before issue 56's renames (one word per concept: *host build*).
#[doc(hidden)]
pub use host_build_abi as soft_kernel;
/// [`HostBuild`]'s name before issue 56's renames.
#[deprecated(since = "0.1.0", note = "renamed `HostBuild` (one word per concept: a host build)")]
pub type SoftKernel = HostBuild;
/// [`HostBuildFn`]'s name before issue 56's renames.
#[deprecated(since = "0.1.0", note = "renamed `HostBuildFn`")]
pub type SoftKernelFn = HostBuildFn;
/// [`HostBuildRecord`]'s name before issue 56's renames.
#[deprecated(since = "0.1.0", note = "renamed `HostBuildRecord`")]
pub type HostKernelRecord = HostBuildRecord;
/// [`HostBuildTable`]'s name before issue 56's renames.
#[deprecated(since = "0.1.0", note = "renamed `HostBuildTable`")]
pub type HostKernelTable = HostBuildTable;

/// Compile-time check of a field's byte offset, used next to every ABI struct.
#[macro_export]
macro_rules! assert_offset {
    ($ty:ty, $field:ident, $offset:expr) => {
        const _: () = assert!(core::mem::offset_of!($ty, $field) == $offset);
    };
}

/// Compile-time check of a type's size and alignment.
#[macro_export]
macro_rules! assert_layout {
    ($ty:ty, size = $size:expr, align = $align:expr) => {
        const _: () = assert!(core::mem::size_of::<$ty>() == $size);
        const _: () = assert!(core::mem::align_of::<$ty>() == $align);
    };
}
