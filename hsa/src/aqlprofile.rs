//! ROCm's aqlprofile (`libhsa-amd-aqlprofile64.so`), the library hardware counters and ATT/SQTT
//! traces go through, opened at run time like ROCr.
//!
//! The search order is `AQUEDUCT_LIBAQLPROFILE_PATH`, then `libhsa-amd-aqlprofile64.so`. The
//! entry points and their signatures are those of `hsa_ven_amd_aqlprofile.h` (ROCr 5.2.3); a
//! library that opens is checked for the version query, so the wrong library is reported as
//! such, not as missing.

use crate::error::LoadError;

pub const LIBAQLPROFILE_PATH_VARIABLE: &str = "AQUEDUCT_LIBAQLPROFILE_PATH";
pub const DEFAULT_LIBRARY_NAME: &str = "libhsa-amd-aqlprofile64.so";

/// The candidate paths, in the order they are tried.
pub fn library_candidates() -> Vec<String> {
    crate::library::candidates(LIBAQLPROFILE_PATH_VARIABLE, &[DEFAULT_LIBRARY_NAME])
}

/// An opened aqlprofile and the interface version it reports.
pub struct AqlProfileLibrary {
    pub path: String,
    /// `hsa_ven_amd_aqlprofile_version_major()`.
    pub version_major: u32,
    _library: libloading::Library,
}

impl AqlProfileLibrary {
    pub fn load() -> Result<Self, LoadError> {
        Self::load_from(library_candidates())
    }

    /// Opens the first candidate that loads; one that lacks the version query stops the search.
    pub fn load_from(candidates: impl IntoIterator<Item = String>) -> Result<Self, LoadError> {
        const SYMBOL: &str = "hsa_ven_amd_aqlprofile_version_major";
        // SAFETY: opening aqlprofile runs its ELF constructors, which only set up its own
        // globals; nothing of it is called before the version query below.
        unsafe {
            crate::library::open_first(candidates, |path, library| {
                // SAFETY: `uint32_t hsa_ven_amd_aqlprofile_version_major(void)` in
                // hsa_ven_amd_aqlprofile.h; it takes nothing and reads nothing of ours.
                let query = library.get::<unsafe extern "C" fn() -> u32>(SYMBOL.as_bytes()).map_err(|error| {
                    LoadError::MissingSymbol { symbol: SYMBOL, reason: crate::library::with_sources(&error) }
                })?;
                let version_major = query();
                Ok(Self { path, version_major, _library: library })
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_lists_every_path_tried() {
        let candidates =
            vec!["/nonexistent/libhsa-amd-aqlprofile64.so".to_string(), "libnot-aqlprofile.so".to_string()];
        let Err(LoadError::LibraryNotFound { attempts }) = AqlProfileLibrary::load_from(candidates.clone()) else {
            panic!("nothing can load");
        };
        let tried: Vec<&String> = attempts.iter().map(|(path, _)| path).collect();
        assert_eq!(tried, candidates.iter().collect::<Vec<_>>());
        // The loader's own text, not only libloading's `dlopen failed`.
        assert!(attempts[0].1.contains("/nonexistent/libhsa-amd-aqlprofile64.so"), "{attempts:?}");
        assert!(attempts[0].1.contains("No such file"), "{attempts:?}");
    }

    #[test]
    fn a_library_without_the_version_query_is_the_wrong_library() {
        // libc opens everywhere and exports nothing of aqlprofile's.
        let error = AqlProfileLibrary::load_from(["libc.so.6".to_string()]).err().expect("libc is not aqlprofile");
        assert!(
            matches!(error, LoadError::MissingSymbol { symbol: "hsa_ven_amd_aqlprofile_version_major", .. }),
            "{error}"
        );
    }
}
