//! The ROCr provider against a real `libhsa-runtime64.so.1` (Debian's ROCm 5.2.3 in CI).
//!
//! Without the library every test prints `SKIPPED: ...` (outside libtest's capture) unless
//! `AQUEDUCT_REQUIRE_ROCR=1`, in which case it fails.
//!
//! `RocrLibrary::load` reads `AQUEDUCT_LIBHSA_PATH`, and ROCr's `hsa_init` reads `HSA_*` variables,
//! so every test holds `ENV_LOCK`: no test reads the environment while another one changes it.

use std::ffi::{CStr, c_char, c_void};
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use aqueduct_hsa::error::{HsaError, LoadError};
use aqueduct_hsa::rocr::{DEFAULT_LIBRARY_NAMES, LIBHSA_PATH_VARIABLE, RocrLibrary, library_candidates};
use aqueduct_hsa::sys::{HsaApi, status};
use aqueduct_hsa::{Hsa, ProviderKind};

const ROCR_SONAME: &str = "libhsa-runtime64.so.1";
const REQUIRE_VARIABLE: &str = "AQUEDUCT_REQUIRE_ROCR";

static ENV_LOCK: Mutex<()> = Mutex::new(());

fn env_lock() -> MutexGuard<'static, ()> {
    // A failed test poisons the lock; the environment is still consistent (each test restores it
    // before asserting), so later tests may proceed.
    ENV_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Opens ROCr directly, or reports the skip (failing when the library is required).
fn open_rocr() -> Option<libloading::Library> {
    // SAFETY: loading ROCr runs only its own ELF constructors.
    match unsafe { libloading::Library::new(ROCR_SONAME) } {
        Ok(library) => Some(library),
        Err(error) => {
            let reason = format!("{ROCR_SONAME} could not be loaded ({error}); install libhsa-runtime64-1");
            assert!(
                !std::env::var(REQUIRE_VARIABLE).is_ok_and(|value| value == "1"),
                "{REQUIRE_VARIABLE}=1 but {reason}"
            );
            writeln!(std::io::stdout().lock(), "SKIPPED: {reason}").expect("stdout is writable");
            None
        }
    }
}

/// Runs `body` with `AQUEDUCT_LIBHSA_PATH` set to `value` (or removed), restoring the old value
/// before returning so a failed assertion inside cannot leak into other tests.
fn with_path_variable<R>(value: Option<&str>, body: impl FnOnce() -> R) -> R {
    let previous = std::env::var_os(LIBHSA_PATH_VARIABLE);
    // SAFETY (both blocks): every test that reads or writes the environment holds ENV_LOCK, and
    // these tests start no other threads that could read it concurrently.
    unsafe {
        match value {
            Some(value) => std::env::set_var(LIBHSA_PATH_VARIABLE, value),
            None => std::env::remove_var(LIBHSA_PATH_VARIABLE),
        }
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    unsafe {
        match previous {
            Some(previous) => std::env::set_var(LIBHSA_PATH_VARIABLE, previous),
            None => std::env::remove_var(LIBHSA_PATH_VARIABLE),
        }
    }
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

fn status_string(api: &HsaApi, code: u32) -> String {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: ROCr writes a pointer to a static NUL-terminated string; it needs no hsa_init.
    let result = unsafe { (api.hsa_status_string)(code, &mut text) };
    assert_eq!(result, status::SUCCESS, "hsa_status_string({code:#x}) failed with {result:#x}");
    assert!(!text.is_null(), "hsa_status_string({code:#x}) returned a null string");
    // SAFETY: non-null and NUL-terminated per the HSA spec; the string is static in ROCr.
    unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

/// Each table entry, looked up on its own so a failure names every missing symbol.
#[test]
fn every_table_symbol_is_exported_by_rocr() {
    let _guard = env_lock();
    let Some(library) = open_rocr() else { return };
    assert!(HsaApi::SYMBOLS.len() >= 30, "the table shrank to {} entries", HsaApi::SYMBOLS.len());
    let mut seen = std::collections::BTreeSet::new();
    let duplicates: Vec<&str> = HsaApi::SYMBOLS.iter().copied().filter(|name| !seen.insert(*name)).collect();
    assert!(duplicates.is_empty(), "duplicate table entries: {duplicates:?}");

    let missing: Vec<String> = HsaApi::SYMBOLS
        .iter()
        .filter_map(|name| {
            // SAFETY: the symbol is only looked up, never called or dereferenced.
            let found = unsafe { library.get::<*const c_void>(name.as_bytes()) };
            found.err().map(|error| format!("{name}: {error}"))
        })
        .collect();
    assert!(missing.is_empty(), "{ROCR_SONAME} lacks table entries:\n  {}", missing.join("\n  "));
}

#[test]
fn load_resolves_the_whole_table_from_the_default_soname() {
    let _guard = env_lock();
    if open_rocr().is_none() {
        return;
    }
    let library = with_path_variable(None, RocrLibrary::load)
        .unwrap_or_else(|error| panic!("RocrLibrary::load failed with ROCr installed: {error}"));
    assert_eq!(library.path, ROCR_SONAME, "the .so.1 name is the first default candidate");
}

/// Without /dev/kfd, `hsa_init` fails with OUT_OF_RESOURCES and the status has a readable string;
/// with a GPU it must succeed instead.
#[test]
fn hsa_init_reports_a_clear_status() {
    let _guard = env_lock();
    if open_rocr().is_none() {
        return;
    }
    let library = with_path_variable(None, RocrLibrary::load).expect("load ROCr");
    let api = &library.api;
    // SAFETY: hsa_init takes no arguments; ROCr reference-counts init/shut_down pairs.
    let result = unsafe { (api.hsa_init)() };
    if Path::new("/dev/kfd").exists() {
        assert_eq!(result, status::SUCCESS, "hsa_init failed with /dev/kfd present: {}", status_string(api, result));
        // SAFETY: balances the successful hsa_init above.
        assert_eq!(unsafe { (api.hsa_shut_down)() }, status::SUCCESS);
    } else {
        assert_eq!(
            result,
            status::ERROR_OUT_OF_RESOURCES,
            "hsa_init without /dev/kfd: got {result:#x} ({})",
            status_string(api, result)
        );
        let text = status_string(api, result);
        assert!(text.contains("OUT_OF_RESOURCES"), "status string for {result:#x} does not name it: {text:?}");
    }
    // Any status, known or not, must map to text rather than crash (the engine formats errors
    // with it unconditionally).
    assert!(!status_string(api, status::ERROR_INVALID_ARGUMENT).is_empty());
}

/// The safe wrapper turns a failed ROCr `hsa_init` into `LoadError::Hsa` carrying the call, the
/// status and ROCr's own text for it, which is what the engine shows users on GPU-less machines.
#[test]
fn safe_wrapper_reports_hsa_init_failure_with_the_status_string() {
    let _guard = env_lock();
    if open_rocr().is_none() {
        return;
    }
    let expected_message = {
        let library = with_path_variable(None, RocrLibrary::load).expect("load ROCr");
        status_string(&library.api, status::ERROR_OUT_OF_RESOURCES)
    };
    let result = with_path_variable(None, Hsa::rocr);
    if Path::new("/dev/kfd").exists() {
        let hsa = result.unwrap_or_else(|error| panic!("Hsa::rocr failed with /dev/kfd present: {error}"));
        assert_eq!(hsa.kind(), ProviderKind::Rocr);
        assert_eq!(hsa.library_path(), Some(ROCR_SONAME));
        return;
    }
    match result {
        Err(LoadError::Hsa(error)) => {
            assert_eq!(
                error,
                HsaError { status: 0x1008, call: "hsa_init", message: expected_message },
                "the error must carry ROCr's status string verbatim"
            );
            let shown = LoadError::Hsa(error).to_string();
            assert!(shown.contains("hsa_init") && shown.contains("0x1008"), "unclear error text: {shown}");
            assert!(shown.contains("OUT_OF_RESOURCES"), "status string missing from: {shown}");
        }
        Err(other) => panic!("expected LoadError::Hsa(0x1008 from hsa_init), got {other:?}"),
        Ok(hsa) => panic!("Hsa::rocr succeeded without /dev/kfd: {hsa:?}"),
    }
}

/// The override variable comes first, empty means unset, a missing file falls through to the
/// defaults, and a library without HSA exports is rejected naming the first missing entry point.
#[test]
fn path_variable_is_tried_first_and_checked() {
    let _guard = env_lock();
    let defaults: Vec<String> = DEFAULT_LIBRARY_NAMES.iter().map(|name| name.to_string()).collect();

    let candidates = with_path_variable(Some("/nonexistent/lib.so"), library_candidates);
    assert_eq!(candidates.first().map(String::as_str), Some("/nonexistent/lib.so"));
    assert_eq!(candidates[1..], defaults[..], "defaults follow the override, in order");
    assert_eq!(with_path_variable(Some(""), library_candidates), defaults, "empty override is ignored");
    assert_eq!(with_path_variable(None, library_candidates), defaults);
    assert_eq!(defaults, [ROCR_SONAME, "libhsa-runtime64.so"]);

    // libc opens fine but exports no HSA symbol: the loader must stop and name what is missing
    // rather than fall through to a different library silently.
    let libc_result = with_path_variable(Some("libc.so.6"), RocrLibrary::load);
    match libc_result {
        Err(LoadError::MissingSymbol { symbol, reason }) => {
            assert_eq!(symbol, HsaApi::SYMBOLS[0], "the first table entry is reported");
            assert_eq!(symbol, "hsa_init");
            assert!(!reason.is_empty(), "the dlsym reason is kept");
        }
        Err(other) => panic!("libc.so.6 as ROCr: expected MissingSymbol(hsa_init), got {other}"),
        Ok(library) => panic!("libc.so.6 loaded as an HSA runtime from {}", library.path),
    }
    // The safe wrapper passes the same error through untouched.
    match with_path_variable(Some("libc.so.6"), Hsa::rocr) {
        Err(LoadError::MissingSymbol { symbol, .. }) => assert_eq!(symbol, "hsa_init"),
        other => {
            panic!("Hsa::rocr with libc.so.6: expected MissingSymbol(hsa_init), got {other:?}")
        }
    }

    if open_rocr().is_none() {
        return;
    }
    let fallback = with_path_variable(Some("/nonexistent/lib.so"), RocrLibrary::load)
        .unwrap_or_else(|error| panic!("a bad override must fall through to the defaults: {error}"));
    assert_eq!(fallback.path, ROCR_SONAME);
}

/// ROCr proper has none of the soft runtime's vendor extension, so asking for the drop-in's
/// controls is refused with the library named, and nothing is configured.
#[test]
fn rocr_proper_is_not_taken_for_the_drop_in() {
    let _guard = env_lock();
    if open_rocr().is_none() {
        return;
    }
    let library = with_path_variable(None, RocrLibrary::load).expect("ROCr loads");
    assert!(library.drop_in.is_none(), "{} exports the drop-in's extension", library.path);
    match with_path_variable(None, aqueduct_soft_hsa::SoftControls::drop_in) {
        Err(LoadError::MissingSymbol { symbol, reason }) => {
            assert_eq!(symbol, "aqueduct_soft_configure");
            assert!(reason.contains(ROCR_SONAME) && reason.contains("not the soft runtime's drop-in"), "{reason}");
        }
        Err(other) => panic!("expected MissingSymbol, got {other}"),
        Ok(_) => panic!("ROCr taken for the drop-in"),
    }
}
