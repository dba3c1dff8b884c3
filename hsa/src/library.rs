//! Opening a ROCm library at run time: candidates from an environment variable then default
//! names, and the first that opens wins. ROCr (`rocr.rs`) and aqlprofile (`aqlprofile.rs`) are
//! both found this way.

use crate::error::LoadError;

/// The candidate paths: `variable`'s value if set and not empty, then `defaults`, in order.
pub(crate) fn candidates(variable: &str, defaults: &[&str]) -> Vec<String> {
    let mut candidates = Vec::with_capacity(defaults.len() + 1);
    if let Some(path) = std::env::var_os(variable).filter(|path| !path.is_empty()) {
        candidates.push(path.to_string_lossy().into_owned());
    }
    candidates.extend(defaults.iter().map(|name| name.to_string()));
    candidates
}

/// An error and its sources, one after another: libloading's `dlopen failed` carries the
/// loader's own text (`cannot open shared object file: ...`) as its source.
pub(crate) fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Opens the first candidate that loads and hands it to `bind`, whose error (the wrong library:
/// a symbol is missing) stops the search. None loads: every attempt with its reason.
///
/// # Safety
/// Opening a library runs its ELF constructors: each candidate must be a library whose
/// constructors only set up its own globals (ROCm's do).
pub(crate) unsafe fn open_first<T>(
    candidates: impl IntoIterator<Item = String>,
    mut bind: impl FnMut(String, libloading::Library) -> Result<T, LoadError>,
) -> Result<T, LoadError> {
    let mut attempts = Vec::new();
    for path in candidates {
        // SAFETY: forwarded to the caller.
        match unsafe { libloading::Library::new(&path) } {
            Ok(library) => return bind(path, library),
            Err(error) => attempts.push((path, with_sources(&error))),
        }
    }
    Err(LoadError::LibraryNotFound { attempts })
}
