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
    let mut candidates = Vec::with_capacity(3);
    if let Some(path) = std::env::var_os(LIBHSA_PATH_VARIABLE).filter(|path| !path.is_empty()) {
        candidates.push(path.to_string_lossy().into_owned());
    }
    candidates.extend(DEFAULT_LIBRARY_NAMES.iter().map(|name| name.to_string()));
    candidates
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
        let mut attempts = Vec::new();
        for path in candidates {
            // SAFETY: opening ROCr runs its ELF constructors, which only initialize its own
            // globals; no HSA call happens until `hsa_init`.
            match unsafe { libloading::Library::new(&path) } {
                Ok(library) => {
                    // SAFETY: ROCr exports these functions with the signatures of hsa.h, which
                    // the table copies exactly (checked by the conformance test).
                    let api = unsafe { HsaApi::from_library(&library) }?;
                    return Ok(Self { path, api, _library: library });
                }
                Err(error) => attempts.push((path, error.to_string())),
            }
        }
        Err(LoadError::LibraryNotFound { attempts })
    }
}
