//! The bench kernels (`cli/kernels/bench.c`) and their host builds for the soft runtime.

use std::sync::OnceLock;

use aqueduct_abi::{HostBuild, HostBuildRecord};
use aqueduct_engine::{Device, EngineError};

/// Built from `cli/kernels/bench.c` by `kernels/regen.sh` for each of its targets
/// ([`crate::WORKLOAD_TARGETS`]); [`bench_code_object`] picks the device's.
pub const BENCH_CODE_OBJECTS: [&[u8]; crate::WORKLOAD_TARGETS] = workload_code_objects!("bench");

/// Binding counts with a `bindings_N` kernel (0 uses `noop`).
pub const BINDING_COUNTS: [usize; 5] = [0, 4, 16, 64, 256];

unsafe extern "C" {
    /// The host-build table of `cli/kernels/bench.c`, compiled for the host by build.rs.
    fn aq_bench_kernels(count: *mut u32) -> *const HostBuildRecord;
}

/// The host builds of the bench kernels (the same C as [`BENCH_CODE_OBJECTS`]).
pub fn bench_host_builds() -> &'static [HostBuild] {
    static KERNELS: OnceLock<Vec<HostBuild>> = OnceLock::new();
    // SAFETY: `aq_bench_kernels` is the AQ_HOST_TABLE accessor of cli/kernels/bench.c, linked into
    // this crate by build.rs; its records are static.
    KERNELS.get_or_init(|| unsafe { HostBuild::from_table(aq_bench_kernels) })
}

/// The bench code object the device's agents run, with the bench's host builds registered for
/// it (for a provider that runs kernels on the CPU). Load it as often as a rig needs.
pub fn bench_code_object(device: &Device) -> Result<&'static [u8], EngineError> {
    let code_object = device.select_code_object(&BENCH_CODE_OBJECTS)?;
    device.register_host_builds(code_object, bench_host_builds())?;
    Ok(code_object)
}
