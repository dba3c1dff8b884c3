//! The memory-level ABI that aqueduct shares with the GPU command processor.
//!
//! Every type here is `#[repr(C)]` plain data with compile-time size and offset assertions; the
//! `hsa` crate's conformance test compares them against ROCr's own C headers. Nothing here has
//! behaviour beyond bit packing: the hot path writes these structs straight into ring memory.

pub mod block_program;
pub mod device_program;
pub mod hal_kernargs;
pub mod host_build;
pub mod implicit_kernargs;
pub mod kernel_descriptor;
pub mod packet;
pub mod queue;
pub mod signal;
pub mod soft_kernel;

pub use hal_kernargs::{try_write_hal_kernargs, write_hal_kernargs};
pub use implicit_kernargs::{DISPATCH_DIMENSIONS, ImplicitKernargs};
pub use kernel_descriptor::KernelDescriptor;
pub use packet::{
    AQL_PACKET_SIZE, AgentDispatchPacket, AqlPacket, BarrierAndPacket, BarrierOrPacket, BarrierValuePacket,
    DispatchTemplate, FenceScope, KernelDispatchPacket, PacketHeader, PacketType, SignalCondition, VendorPacketHeader,
};
pub use queue::{AmdQueue, HsaQueue, QueueProperties, QueueType};
pub use signal::{AmdSignal, SignalKind};
pub use soft_kernel::{
    HostArg, HostKernelRecord, HostKernelTable, SoftKernel, SoftKernelFn, WorkgroupContext, record_host_panic,
    take_host_panic,
};

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
