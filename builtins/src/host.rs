//! The device library built for the host: `device/blit.c` compiled by `build.rs` with the
//! work-item shim, so the soft HSA runtime runs the same kernel source as the GPU code objects.
//!
//! The soft runtime keys host builds by code object, so [`soft_registrations`] pairs these
//! kernels with every embedded code object's identity; each target's bytes hash differently.

use std::sync::OnceLock;

use aqueduct_abi::{HostBuild, HostBuildRecord};
use aqueduct_codeobject::CodeObjectId;

use crate::toc::EMBEDDED_CODE_OBJECTS;

unsafe extern "C" {
    /// The host-build table of `device/blit.c` (`AQ_HOST_TABLE(aq_blit_kernels, ...)`).
    fn aq_blit_kernels(count: *mut u32) -> *const HostBuildRecord;
}

/// Every builtin's host build, in `device/blit.c` table order.
pub fn host_kernels() -> &'static [HostBuild] {
    static KERNELS: OnceLock<Vec<HostBuild>> = OnceLock::new();
    // SAFETY: `aq_blit_kernels` is the AQ_HOST_TABLE accessor of blit.c, linked into this crate by
    // build.rs; its records are static.
    KERNELS.get_or_init(|| unsafe { HostBuild::from_table(aq_blit_kernels) })
}

/// What to register with the soft runtime: the host builds, once per embedded code object.
pub fn soft_registrations() -> impl Iterator<Item = (CodeObjectId, &'static [HostBuild])> {
    static IDS: OnceLock<Vec<CodeObjectId>> = OnceLock::new();
    let ids = IDS.get_or_init(|| EMBEDDED_CODE_OBJECTS.iter().map(|(_, bytes)| CodeObjectId::of(bytes)).collect());
    ids.iter().map(|id| (*id, host_kernels()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Builtin;

    #[test]
    fn every_builtin_has_exactly_one_host_kernel() {
        let symbols: Vec<&str> = host_kernels().iter().map(|kernel| kernel.symbol).collect();
        let expected: Vec<&str> = Builtin::ALL.iter().map(|builtin| builtin.symbol()).collect();
        assert_eq!(symbols, expected);
    }

    #[test]
    fn host_layouts_equal_the_rust_layouts() {
        for (kernel, builtin) in host_kernels().iter().zip(Builtin::ALL) {
            let host: Vec<(u32, u32, bool)> = kernel
                .args
                .expect("C kernels declare their layout")
                .iter()
                .map(|arg| (arg.offset, arg.size, arg.is_pointer()))
                .collect();
            let rust: Vec<(u32, u32, bool)> = builtin
                .fields()
                .iter()
                .map(|field| (field.offset as u32, field.size as u32, field.kind == crate::ArgKind::Pointer))
                .collect();
            assert_eq!(host, rust, "{builtin}");
        }
    }

    #[test]
    fn one_registration_per_embedded_code_object_with_distinct_identities() {
        let ids: Vec<CodeObjectId> = soft_registrations().map(|(id, _)| id).collect();
        assert_eq!(ids.len(), EMBEDDED_CODE_OBJECTS.len());
        let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }
}
