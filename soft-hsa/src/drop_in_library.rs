//! The soft HSA runtime as a C library (the `drop-in-library` feature): `scripts/build-libhsa.sh`
//! builds this crate as a static library with the feature and links it into
//! `libhsa-runtime64.so.1`, a drop-in for ROCr on machines without an AMD GPU. Only that build
//! has these exports: linked into a Rust program, `hsa_*` symbols and a load-time constructor
//! would be the program's, whatever provider it meant to load.
//!
//! - Every entry point the soft runtime implements is exported under its `hsa.h` name, with
//!   ROCr's version node `ROCR_1` (`exports.map`). The list is `aqueduct_hsa::with_hsa_entry_points!`,
//!   the same one the engine's function table is built from, so the two cannot drift, and
//!   `crate::with_drop_in_entry_points!`, what ROCr exports beyond it that the engine
//!   never calls (the memory-order variants of the signal and queue-index operations). An entry
//!   point the soft runtime does not implement is absent: a client that needs it fails to link
//!   or load, rather than calling a stub.
//! - The device library's host builds are registered when the library is loaded (an ELF
//!   constructor). Every other kernel, HIP's own blit and fill kernels included, runs from its
//!   machine code through the interpreter (gfx11, and gfx10.3 as HIP 5.2.3 builds them).
//! - [`aqueduct_soft_register_kernel`] (version node `AQUEDUCT_SOFT_1`) registers any other CPU
//!   kernel, for clients that bring their own code objects (aqueduct's test kernels do).
//! - The soft runtime's test controls, under the same node: [`aqueduct_soft_inject_fault`],
//!   [`aqueduct_soft_release_stall`], [`aqueduct_soft_set_queue_mode`], and
//!   [`aqueduct_soft_queue_error_detail`], which says why a queue failed (ROCr's queue error
//!   callback carries only a status).
//! - Every export runs behind `crate::exports::guard`: a panic is logged and
//!   becomes an error status, never an abort of the client's process.
//! - Its configuration: [`aqueduct_soft_configure`] sets one (JSON) for the next `hsa_init`;
//!   without it, each `hsa_init` reads the environment (`AQUEDUCT_SOFT_AGENTS`,
//!   `ROCR_VISIBLE_DEVICES`), as ROCr reads its own at init. With neither, the drop-in's GPU is
//!   one gfx1030 (the embedded runtime's is a gfx1100): Debian's HIP 5.2.3 refuses gfx1100.

use core::ffi::{CStr, c_char, c_int, c_void};

use crate::exports::guard;
use crate::{ControlError, ExecutionMode};
use aqueduct_abi::{HostBuild, HostBuildFn};
use aqueduct_codeobject::CodeObjectId;
use aqueduct_hsa::sys::*;

/// One exported C function per entry point, forwarding to the soft runtime's.
macro_rules! export_entry_points {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {$(
        #[unsafe(no_mangle)]
        #[doc = concat!("`", stringify!($name), "` of `hsa.h` / `hsa_ext_amd.h`, implemented by the soft runtime.")]
        ///
        /// # Safety
        /// The caller keeps the C function's contract; the soft runtime validates what
        /// `hsa.h` lets it validate and returns the status the HSA specification gives.
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            // SAFETY: forwarded to the caller.
            unsafe { crate::exports::$name($($arg),*) }
        }
    )*};
}

aqueduct_hsa::with_hsa_entry_points!(export_entry_points);
crate::with_drop_in_entry_points!(export_entry_points);

// The constructor: registers the device library's host builds when the library is loaded.
#[used]
#[unsafe(link_section = ".init_array")]
static REGISTER_DEVICE_LIBRARY: extern "C" fn() = register_device_library;

extern "C" fn register_device_library() {
    // HIP 5.2.3, the drop-in's main client, runs on gfx1030 and refuses gfx1100.
    crate::set_default_agents(vec![crate::SoftAgentConfig::with_isa("amdgcn-amd-amdhsa--gfx1030", 32)]);
    for (code_object, kernels) in aqueduct_builtins::soft_registrations() {
        crate::register_kernels(code_object, kernels);
    }
}

fn control_status(result: Result<(), ControlError>) -> hsa_status_t {
    match result {
        Ok(()) => status::SUCCESS,
        Err(ControlError::NotInitialized) => status::ERROR_NOT_INITIALIZED,
        Err(ControlError::UnknownQueue) => status::ERROR_INVALID_QUEUE,
        Err(ControlError::Refused(status)) => status,
    }
}

/// Arms a fault for the packet with id `packet_id` on `queue`: `kind` 0 a kernel fault (the
/// argument is its status), 1 a stall until [`aqueduct_soft_release_stall`], 2 a slow packet
/// (the argument in nanoseconds), 3 a GPU memory fault at the argument's address. An unknown kind
/// is `HSA_STATUS_ERROR_INVALID_ARGUMENT`, a queue not of this runtime `..._INVALID_QUEUE`.
///
/// # Safety
/// None beyond the call: `queue` is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqueduct_soft_inject_fault(
    queue: *const hsa_queue_t,
    packet_id: u64,
    kind: u32,
    argument: u64,
) -> hsa_status_t {
    guard("aqueduct_soft_inject_fault", || {
        let Some(fault) = crate::Fault::decode(kind, argument) else {
            return status::ERROR_INVALID_ARGUMENT;
        };
        control_status(crate::inject_fault(queue, packet_id, fault))
    })
}

/// Lets every packet stalled on `queue` proceed.
///
/// # Safety
/// None beyond the call: `queue` is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqueduct_soft_release_stall(queue: *const hsa_queue_t) -> hsa_status_t {
    guard("aqueduct_soft_release_stall", || control_status(crate::release_stall(queue)))
}

/// Switches `queue` to `mode`: 0 strict, 1 relaxed, 2 retire-only, 3 concurrent (the default).
///
/// # Safety
/// None beyond the call: `queue` is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqueduct_soft_set_queue_mode(queue: *const hsa_queue_t, mode: u32) -> hsa_status_t {
    guard("aqueduct_soft_set_queue_mode", || {
        let Some(mode) = ExecutionMode::from_code(mode) else { return status::ERROR_INVALID_ARGUMENT };
        control_status(crate::set_queue_mode(queue, mode))
    })
}

/// Registers `function` as the CPU implementation of kernel `symbol` (its descriptor's name,
/// `name.kd`) in the code object of `size` bytes at `code_object`: a dispatch of that kernel
/// from any executable loaded from the same bytes runs it, once per workgroup, with the
/// `aq_workgroup` context of `builtins/device/aqueduct_kernel.h`. The bytes are only hashed
/// (the registry keys by content); the arguments are not checked against the metadata, as for
/// hand-written kernels. Registration is process-wide, survives `hsa_shut_down`, and replaces
/// an earlier one of the same kernel; each call keeps a copy of `symbol` for the process's life.
///
/// Returns `HSA_STATUS_ERROR_INVALID_ARGUMENT` for a null or empty code object, a null or
/// non-UTF-8 symbol, or a null function, and registers nothing.
///
/// # Safety
/// `code_object` points to `size` readable bytes; `symbol` is NUL-terminated; `function` is
/// safe to call from the runtime's threads with a valid context until the process exits.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqueduct_soft_register_kernel(
    code_object: *const c_void,
    size: usize,
    symbol: *const c_char,
    function: Option<HostBuildFn>,
) -> hsa_status_t {
    guard("aqueduct_soft_register_kernel", || {
        let fits = size > 0 && size <= isize::MAX as usize;
        let (Some(function), false, false, true) = (function, code_object.is_null(), symbol.is_null(), fits) else {
            return status::ERROR_INVALID_ARGUMENT;
        };
        // SAFETY: non-null, and the caller guarantees `size` readable bytes.
        let bytes = unsafe { core::slice::from_raw_parts(code_object.cast::<u8>(), size) };
        // SAFETY: non-null and NUL-terminated (the caller's contract).
        let Ok(symbol) = unsafe { CStr::from_ptr(symbol) }.to_str() else { return status::ERROR_INVALID_ARGUMENT };
        let symbol: &'static str = Box::leak(symbol.to_owned().into_boxed_str());
        crate::register_kernels(CodeObjectId::of(bytes), &[HostBuild { symbol, function, args: None }]);
        status::SUCCESS
    })
}

/// Sets the configuration the next `hsa_init` that starts the runtime (its count going from zero
/// to one) uses, in place of the environment: `config` is a NUL-terminated JSON object of
/// `SoftConfig`'s fields (`agents`, `default_mode`, `queue_min_packets`,
/// `intercepted_doorbells`, `code_object_versions`, ...); a field left out takes its default. A
/// running runtime keeps its configuration until it shuts down.
///
/// Returns `HSA_STATUS_ERROR_INVALID_ARGUMENT` for a null pointer, text that is not UTF-8, or
/// JSON that does not describe a configuration, and changes nothing.
///
/// # Safety
/// `config` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqueduct_soft_configure(config: *const c_char) -> hsa_status_t {
    guard("aqueduct_soft_configure", || {
        if config.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: non-null and NUL-terminated (the caller's contract).
        let Ok(text) = unsafe { CStr::from_ptr(config) }.to_str() else { return status::ERROR_INVALID_ARGUMENT };
        match crate::SoftConfig::from_json(text) {
            Ok(config) => {
                crate::configure(config);
                status::SUCCESS
            }
            Err(_) => status::ERROR_INVALID_ARGUMENT,
        }
    })
}

/// Why `queue` failed, as UTF-8 without a terminator: `*length` receives the detail's length in
/// bytes (0 while the queue has not failed) and the first `min(length, capacity)` bytes go to
/// `buffer`, so a call with capacity 0 (and a null buffer) asks for the length. The status the
/// queue failed with is what its error callback received.
///
/// Returns `HSA_STATUS_ERROR_INVALID_ARGUMENT` for a null `length`, or a null `buffer` with a
/// nonzero capacity; `..._INVALID_QUEUE` for a queue not of this runtime; `..._NOT_INITIALIZED`
/// before `hsa_init`.
///
/// # Safety
/// `buffer` is null or `capacity` writable bytes; `length` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqueduct_soft_queue_error_detail(
    queue: *const hsa_queue_t,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> hsa_status_t {
    guard("aqueduct_soft_queue_error_detail", || {
        if length.is_null() || (buffer.is_null() && capacity > 0) {
            return status::ERROR_INVALID_ARGUMENT;
        }
        let detail = match crate::queue_error_detail(queue) {
            Ok(detail) => detail.map(|(_, detail)| detail).unwrap_or_default(),
            Err(error) => return control_status(Err(error)),
        };
        let copied = detail.len().min(capacity);
        // SAFETY: `buffer` has `capacity` writable bytes when `copied` > 0 (checked non-null above);
        // `length` is non-null and writable (the caller's contract).
        unsafe {
            if copied > 0 {
                core::ptr::copy_nonoverlapping(detail.as_ptr(), buffer.cast::<u8>(), copied);
            }
            length.write(detail.len());
        }
        status::SUCCESS
    })
}
