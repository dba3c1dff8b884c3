//! The ROCr provider: `libhsa-runtime64` opened at run time with libloading.
//!
//! Nothing links ROCr at build time. The search order is `AQUEDUCT_LIBHSA_PATH`, then
//! `libhsa-runtime64.so.1`, then `libhsa-runtime64.so`.

use crate::error::LoadError;
use crate::sys::HsaApi;

pub const LIBHSA_PATH_VARIABLE: &str = "AQUEDUCT_LIBHSA_PATH";
pub const DEFAULT_LIBRARY_NAMES: [&str; 2] = ["libhsa-runtime64.so.1", "libhsa-runtime64.so"];

/// The candidate paths, in the order they are tried.
pub fn library_candidates() -> Vec<String> {
    crate::library::candidates(LIBHSA_PATH_VARIABLE, &DEFAULT_LIBRARY_NAMES)
}

/// The vendor extension of the soft runtime's drop-in (`soft-hsa/src/lib.rs`, declared for C in
/// `soft-hsa/include/aqueduct_soft.h`), resolved whole when the library has it; ROCr has none of
/// it.
#[derive(Clone, Copy)]
pub struct DropInExtension {
    /// The drop-in runs kernels on the CPU, so it needs their host builds.
    pub register_kernel: unsafe extern "C" fn(
        *const core::ffi::c_void,
        usize,
        *const core::ffi::c_char,
        Option<aqueduct_abi::HostBuildFn>,
    ) -> crate::sys::hsa_status_t,
    pub inject_fault: unsafe extern "C" fn(*const crate::sys::hsa_queue_t, u64, u32, u64) -> crate::sys::hsa_status_t,
    pub release_stall: unsafe extern "C" fn(*const crate::sys::hsa_queue_t) -> crate::sys::hsa_status_t,
    pub set_queue_mode: unsafe extern "C" fn(*const crate::sys::hsa_queue_t, u32) -> crate::sys::hsa_status_t,
    pub queue_error_detail: unsafe extern "C" fn(
        *const crate::sys::hsa_queue_t,
        *mut core::ffi::c_char,
        usize,
        *mut usize,
    ) -> crate::sys::hsa_status_t,
    pub configure: unsafe extern "C" fn(*const core::ffi::c_char) -> crate::sys::hsa_status_t,
}

/// A loaded ROCr and its resolved table. The library stays open as long as this lives.
pub struct RocrLibrary {
    pub path: String,
    pub api: HsaApi,
    /// Present when the library is the soft runtime's drop-in rather than ROCr.
    pub drop_in: Option<DropInExtension>,
    _library: libloading::Library,
}

impl RocrLibrary {
    /// Opens the first library that loads and resolves every entry point of [`HsaApi`], trying
    /// [`library_candidates`] in order.
    pub fn load() -> Result<Self, LoadError> {
        Self::load_from(library_candidates())
    }

    /// As [`Self::load`], over explicit candidates. A library that opens but lacks an entry point
    /// stops the search with [`LoadError::MissingSymbol`]: it is the wrong library, not a missing one.
    pub fn load_from(candidates: impl IntoIterator<Item = String>) -> Result<Self, LoadError> {
        // SAFETY: opening ROCr runs its ELF constructors, which only initialize its own
        // globals; no HSA call happens until `hsa_init`.
        unsafe {
            crate::library::open_first(candidates, |path, library| {
                // SAFETY: ROCr exports these functions with the signatures of hsa.h, which the
                // table copies exactly (checked by the conformance test).
                let api = HsaApi::from_library(&library)?;
                // SAFETY: the drop-in exports these with `DropInExtension`'s signatures
                // (soft-hsa/src/lib.rs); ROCr exports none of them.
                let drop_in = (|| {
                    Some(DropInExtension {
                        register_kernel: *library.get(b"aqueduct_soft_register_kernel\0").ok()?,
                        inject_fault: *library.get(b"aqueduct_soft_inject_fault\0").ok()?,
                        release_stall: *library.get(b"aqueduct_soft_release_stall\0").ok()?,
                        set_queue_mode: *library.get(b"aqueduct_soft_set_queue_mode\0").ok()?,
                        queue_error_detail: *library.get(b"aqueduct_soft_queue_error_detail\0").ok()?,
                        configure: *library.get(b"aqueduct_soft_configure\0").ok()?,
                    })
                })();
                Ok(Self { path, api, drop_in, _library: library })
            })
        }
    }
}

/// Fills the table from a loaded library: every entry point of the one list, a missing one named.
mod resolve {
    use core::ffi::{c_char, c_int, c_void};

    use crate::sys::*;

    macro_rules! resolve_entry_points {
        ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {
            impl HsaApi {
                /// Resolves every entry point from a loaded library; a missing one is named.
                ///
                /// # Safety
                /// `library` must be an HSA runtime whose exports have the C signatures above.
                pub(crate) unsafe fn from_library(
                    library: &libloading::Library,
                ) -> Result<Self, crate::error::LoadError> {
                    Ok(Self {
                        $( $name: {
                            // SAFETY: the caller guarantees the export has exactly this signature;
                            // the Library is kept alive for the table's lifetime by the provider.
                            let symbol = unsafe {
                                library.get::<unsafe extern "C" fn($($ty),*) -> $ret>(
                                    concat!(stringify!($name), "\0").as_bytes(),
                                )
                            };
                            *symbol.map_err(|source| crate::error::LoadError::MissingSymbol {
                                symbol: stringify!($name),
                                reason: crate::library::with_sources(&source),
                            })?
                        }, )*
                    })
                }
            }
        };
    }

    crate::with_hsa_entry_points!(resolve_entry_points);
}
