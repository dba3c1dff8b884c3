//! The soft runtime as a provider of `aqueduct-hsa`'s table: opening it ([`open`], or [`auto`]
//! when ROCr has no GPU), registering host builds with it, and its test controls
//! ([`SoftControls`]), for the embedded runtime or its drop-in loaded as ROCr.

use aqueduct_hsa::sys;
use aqueduct_hsa::{Hsa, HsaError, HsaResult, LoadError, ProviderKind, Selection};

use crate::exports::SOFT_API;

/// Initializes the embedded soft runtime with `config` (which applies if the runtime is not
/// already initialized by another `Hsa`). The `Hsa` holds one `hsa_init` reference.
pub fn open(config: crate::SoftConfig) -> HsaResult<Hsa> {
    crate::configure(config);
    open_current()
}

/// Initializes the embedded soft runtime with whatever configuration is pending (the default if
/// none).
pub fn open_current() -> HsaResult<Hsa> {
    // SAFETY: the soft table's functions keep `hsa.h`'s contracts and live for the process.
    unsafe { Hsa::from_static_table(&SOFT_API, ProviderKind::Soft) }
}

/// ROCr when it loads, initializes and reports at least one GPU agent; otherwise the embedded
/// soft runtime (with `soft_config`). The reason names what ruled ROCr out.
pub fn auto(soft_config: crate::SoftConfig) -> HsaResult<Selection> {
    match Hsa::rocr_with_gpu() {
        Ok(selection) => Ok(selection),
        Err(rocr_problem) => {
            let hsa = open(soft_config)?;
            Ok(Selection { hsa, reason: format!("{rocr_problem}; using the embedded soft HSA runtime") })
        }
    }
}

/// Registers the CPU implementations `kernels` of kernels of `code_object` with a provider
/// that runs kernels on the CPU: the embedded soft runtime, or a loaded library that is the
/// soft runtime's drop-in (it exports `aqueduct_soft_register_kernel`). Returns whether the
/// provider took them: ROCr on a GPU runs the code object itself and takes none.
pub fn register_host_builds(hsa: &Hsa, code_object: &[u8], kernels: &[aqueduct_abi::HostBuild]) -> HsaResult<bool> {
    match (hsa.kind(), hsa.drop_in_extension()) {
        (ProviderKind::Soft, _) => {
            crate::register_kernels(aqueduct_codeobject::CodeObjectId::of(code_object), kernels);
            Ok(true)
        }
        (ProviderKind::Rocr, Some(drop_in)) => {
            for kernel in kernels {
                let symbol = std::ffi::CString::new(kernel.symbol).map_err(|_| HsaError {
                    status: aqueduct_hsa::sys::status::ERROR_INVALID_ARGUMENT,
                    call: "aqueduct_soft_register_kernel",
                    message: format!("kernel symbol {:?} holds a NUL byte", kernel.symbol),
                })?;
                // SAFETY: `code_object` is `len` readable bytes and `symbol` NUL-terminated for
                // the call; the function is a host build that stays loaded with the process.
                let status = unsafe {
                    (drop_in.register_kernel)(
                        code_object.as_ptr().cast(),
                        code_object.len(),
                        symbol.as_ptr(),
                        Some(kernel.function),
                    )
                };
                hsa.check(status, "aqueduct_soft_register_kernel")?;
            }
            Ok(true)
        }
        (ProviderKind::Rocr, None) => Ok(false),
    }
}

/// The soft runtime's test controls (`crate::inject_fault` and its siblings), for the embedded
/// runtime or a drop-in loaded as ROCr, whose runtime is its own.
#[derive(Clone, Copy)]
pub enum SoftControls {
    Embedded,
    DropIn(aqueduct_hsa::rocr::DropInExtension),
}

// The queue pointer is a key: the drop-in looks it up among its queues (`runtime.queue(queue as
// usize)`) and never dereferences it, so these safe functions pass it on.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl SoftControls {
    /// The controls of `hsa`'s runtime when it is the soft runtime: embedded, or its drop-in
    /// loaded as ROCr. `None` for ROCr proper.
    pub fn of(hsa: &Hsa) -> Option<Self> {
        match hsa.kind() {
            ProviderKind::Soft => Some(Self::Embedded),
            ProviderKind::Rocr => hsa.drop_in_extension().map(Self::DropIn),
        }
    }

    /// The controls of the library the ROCr provider loads ([`aqueduct_hsa::rocr::library_candidates`]), opened
    /// without initializing it, so a configuration can be set before an engine's `hsa_init`.
    /// The library stays loaded for the process, as the provider's does. A library that is ROCr
    /// proper, not the drop-in, is [`LoadError::MissingSymbol`].
    pub fn drop_in() -> Result<Self, LoadError> {
        let library = aqueduct_hsa::rocr::RocrLibrary::load()?;
        let controls = library.drop_in.ok_or_else(|| LoadError::MissingSymbol {
            symbol: "aqueduct_soft_configure",
            reason: format!("{} is not the soft runtime's drop-in", library.path),
        })?;
        // Unloading could drop the configuration before the provider opens the library again.
        core::mem::forget(library);
        Ok(Self::DropIn(controls))
    }

    fn status(status: sys::hsa_status_t) -> Result<(), crate::ControlError> {
        match status {
            sys::status::SUCCESS => Ok(()),
            sys::status::ERROR_NOT_INITIALIZED => Err(crate::ControlError::NotInitialized),
            sys::status::ERROR_INVALID_QUEUE => Err(crate::ControlError::UnknownQueue),
            status => Err(crate::ControlError::Refused(status)),
        }
    }

    /// Sets the configuration the runtime starts with at its next initialization (a running
    /// one keeps its own until it shuts down).
    pub fn configure(self, config: &crate::SoftConfig) -> Result<(), crate::ControlError> {
        match self {
            Self::Embedded => {
                crate::configure(config.clone());
                Ok(())
            }
            Self::DropIn(controls) => {
                // JSON holds no NUL byte: strings escape control characters.
                let json = std::ffi::CString::new(config.to_json()).expect("JSON without NUL bytes");
                // SAFETY: `json` is NUL-terminated for the call.
                Self::status(unsafe { (controls.configure)(json.as_ptr()) })
            }
        }
    }

    /// Why `queue` failed, if it has: the runtime's own account, which ROCr's queue error
    /// callback does not carry.
    pub fn queue_error_detail(self, queue: *const sys::hsa_queue_t) -> Result<Option<String>, crate::ControlError> {
        match self {
            Self::Embedded => crate::queue_error_detail(queue).map(|detail| detail.map(|(_, detail)| detail)),
            Self::DropIn(controls) => {
                let mut length = 0usize;
                // SAFETY: a zero capacity with a null buffer asks for the length only; `length`
                // is writable; the drop-in only looks the queue up.
                Self::status(unsafe { (controls.queue_error_detail)(queue, core::ptr::null_mut(), 0, &mut length) })?;
                if length == 0 {
                    return Ok(None);
                }
                let mut bytes = vec![0u8; length];
                // SAFETY: `bytes` is `length` writable bytes. The detail is set once, when the
                // queue fails, so it does not grow between the two calls.
                Self::status(unsafe {
                    (controls.queue_error_detail)(queue, bytes.as_mut_ptr().cast(), bytes.len(), &mut length)
                })?;
                bytes.truncate(length);
                Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
            }
        }
    }

    /// Arms `fault` for the packet with id `packet_id` on `queue`.
    pub fn inject_fault(
        self,
        queue: *const sys::hsa_queue_t,
        packet_id: u64,
        fault: crate::Fault,
    ) -> Result<(), crate::ControlError> {
        match self {
            Self::Embedded => crate::inject_fault(queue, packet_id, fault),
            Self::DropIn(controls) => {
                let (kind, argument) = fault.encode();
                // SAFETY: the drop-in only looks the queue up.
                Self::status(unsafe { (controls.inject_fault)(queue, packet_id, kind, argument) })
            }
        }
    }

    /// Lets every packet stalled on `queue` proceed.
    pub fn release_stall(self, queue: *const sys::hsa_queue_t) -> Result<(), crate::ControlError> {
        match self {
            Self::Embedded => crate::release_stall(queue),
            // SAFETY: as above.
            Self::DropIn(controls) => Self::status(unsafe { (controls.release_stall)(queue) }),
        }
    }

    /// Switches `queue` between strict, relaxed and retire-only execution.
    pub fn set_queue_mode(
        self,
        queue: *const sys::hsa_queue_t,
        mode: crate::ExecutionMode,
    ) -> Result<(), crate::ControlError> {
        match self {
            Self::Embedded => crate::set_queue_mode(queue, mode),
            // SAFETY: as above.
            Self::DropIn(controls) => Self::status(unsafe { (controls.set_queue_mode)(queue, mode.code()) }),
        }
    }
}
