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

/// A loaded ROCr and its resolved table. The library stays open as long as this lives.
pub struct RocrLibrary {
    pub path: String,
    pub api: HsaApi,
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
                Ok(Self { path, api, _library: library })
            })
        }
    }
}
