//! The bench kernels (`kernels/bench.c`) and their host builds for the soft runtime.

use std::sync::OnceLock;

use aqueduct_abi::{HostKernelRecord, SoftKernel};

/// Built from `kernels/bench.c` by `kernels/regen.sh`.
pub const BENCH_CODE_OBJECT: &[u8] = include_bytes!("../../kernels/bench_gfx11-generic.hsaco");

/// Binding counts with a `bindings_N` kernel (0 uses `noop`).
pub const BINDING_COUNTS: [usize; 5] = [0, 4, 16, 64, 256];

unsafe extern "C" {
    /// The host-kernel table of `kernels/bench.c`, compiled for the host by build.rs.
    fn aq_bench_kernels(count: *mut u32) -> *const HostKernelRecord;
}

/// The host builds of the bench kernels (the same C as [`BENCH_CODE_OBJECT`]).
pub fn bench_host_kernels() -> &'static [SoftKernel] {
    static KERNELS: OnceLock<Vec<SoftKernel>> = OnceLock::new();
    // SAFETY: `aq_bench_kernels` is the AQ_HOST_TABLE accessor of kernels/bench.c, linked into
    // this crate by build.rs; its records are static.
    KERNELS.get_or_init(|| unsafe { SoftKernel::from_table(aq_bench_kernels) })
}

/// Registers the bench's host kernels for [`BENCH_CODE_OBJECT`] with the device's provider, when
/// it runs kernels on the CPU.
pub fn register_bench_kernels(device: &aqueduct_engine::Device) -> Result<(), aqueduct_engine::EngineError> {
    device.register_host_kernels(BENCH_CODE_OBJECT, bench_host_kernels()).map(drop)
}
