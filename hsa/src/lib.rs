//! aqueduct-hsa: one HSA function table, two providers, thin `Result` wrappers.
//!
//! - [`sys`]: C types, constants and [`sys::HsaApi`], the table of every entry point the engine
//!   uses, with ROCr's exact names and signatures.
//! - [`rocr`]: ROCr (`libhsa-runtime64`) loaded at run time with libloading.
//! - [`soft`]: the soft HSA runtime, a CPU implementation with ROCr's memory-level ABI.
//! - [`Hsa`]: an initialized provider; its methods wrap table calls and turn statuses into
//!   [`HsaError`]s that carry the provider's status string.
//!
//! The engine's hot path does not go through these wrappers: it writes packets into ring memory
//! and stores the doorbell itself, identically on both providers.

pub mod aqlprofile;
pub mod error;
pub mod executable;
mod library;
pub mod ring;
pub mod rocr;
pub mod rocr_facts;
pub mod soft;
pub mod sys;
mod wrappers;

use std::sync::Arc;

pub use error::{HsaError, HsaResult, LoadError};
pub use executable::{DispatchDescriptor, Executable, ExecutableError};
pub use rocr_facts::clip_cu_mask;
pub use sys::HsaApi;
pub use wrappers::{AgentInfo, KernelSymbol, PoolInfo, PoolKindInfo, PoolReach};

static SOFT_API: HsaApi = HsaApi::soft();

/// Which implementation fills the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    Rocr,
    Soft,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Rocr => "rocr",
            Self::Soft => "soft",
        }
    }
}

/// An initialized HSA provider. Dropping it calls `hsa_shut_down` once.
pub struct Hsa {
    api: &'static HsaApi,
    kind: ProviderKind,
    /// For ROCr, the loaded library (its path, and the drop-in's extensions when it has them).
    library: Option<Arc<rocr::RocrLibrary>>,
}

impl Hsa {
    /// Initializes the soft runtime with `config` (which applies if the soft runtime is not
    /// already initialized by another `Hsa`).
    pub fn soft(config: soft::SoftConfig) -> HsaResult<Self> {
        soft::configure(config);
        Self::soft_current()
    }

    /// Initializes the soft runtime with whatever configuration is pending (the default if none).
    pub fn soft_current() -> HsaResult<Self> {
        let hsa = Self { api: &SOFT_API, kind: ProviderKind::Soft, library: None };
        // SAFETY: the soft table's functions have no preconditions for hsa_init.
        let status = unsafe { (hsa.api.hsa_init)() };
        if status != sys::status::SUCCESS {
            let error = hsa.error(status, "hsa_init");
            core::mem::forget(hsa); // init failed: there is nothing to shut down
            return Err(error);
        }
        Ok(hsa)
    }

    /// Loads ROCr and initializes it. Without `/dev/kfd`, ROCr's `hsa_init` fails with
    /// HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008); that comes back as [`LoadError::Hsa`].
    pub fn rocr() -> Result<Self, LoadError> {
        let library = rocr::RocrLibrary::load()?;
        // SAFETY: `hsa_init` has no preconditions.
        let status = unsafe { (library.api.hsa_init)() };
        if status != sys::status::SUCCESS {
            let error = HsaError { status, call: "hsa_init", message: status_string(&library.api, status) };
            // ROCr's destructors are not known to be safe to run after a failed init, so the
            // library stays mapped; dlopen reference-counts, so retries map nothing new.
            core::mem::forget(library);
            return Err(LoadError::Hsa(error));
        }
        // The table must outlive every `Hsa` handed out; ROCr cannot be unloaded safely anyway.
        let library = Arc::new(library);
        let api: &'static HsaApi = Box::leak(Box::new(library.api));
        Ok(Self { api, kind: ProviderKind::Rocr, library: Some(library) })
    }

    /// The raw table, for the engine's own calls.
    pub fn api(&self) -> &'static HsaApi {
        self.api
    }

    pub fn kind(&self) -> ProviderKind {
        self.kind
    }

    pub fn library_path(&self) -> Option<&str> {
        self.library.as_ref().map(|library| library.path.as_str())
    }

    /// The soft runtime's test controls, when the provider is the soft runtime: embedded, or its
    /// drop-in loaded as ROCr. `None` for ROCr proper.
    pub fn soft_controls(&self) -> Option<SoftControls> {
        match self.kind {
            ProviderKind::Soft => Some(SoftControls::Embedded),
            ProviderKind::Rocr => self.library.as_ref()?.drop_in.map(SoftControls::DropIn),
        }
    }

    /// Registers the CPU implementations `kernels` of kernels of `code_object` with a provider
    /// that runs kernels on the CPU: the embedded soft runtime, or a loaded library that is the
    /// soft runtime's drop-in (it exports `aqueduct_soft_register_kernel`). Returns whether the
    /// provider took them: ROCr on a GPU runs the code object itself and takes none.
    pub fn register_host_kernels(&self, code_object: &[u8], kernels: &[aqueduct_abi::SoftKernel]) -> HsaResult<bool> {
        match (self.kind, self.library.as_ref().and_then(|library| library.drop_in)) {
            (ProviderKind::Soft, _) => {
                soft::register_kernels(aqueduct_codeobject::CodeObjectId::of(code_object), kernels);
                Ok(true)
            }
            (ProviderKind::Rocr, Some(drop_in)) => {
                for kernel in kernels {
                    let symbol = std::ffi::CString::new(kernel.symbol).map_err(|_| HsaError {
                        status: sys::status::ERROR_INVALID_ARGUMENT,
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
                    self.check(status, "aqueduct_soft_register_kernel")?;
                }
                Ok(true)
            }
            (ProviderKind::Rocr, None) => Ok(false),
        }
    }

    /// The provider's text for `status`.
    pub fn status_string(&self, status: sys::hsa_status_t) -> String {
        status_string(self.api, status)
    }

    pub fn check(&self, status: sys::hsa_status_t, call: &'static str) -> HsaResult<()> {
        if status == sys::status::SUCCESS { Ok(()) } else { Err(self.error(status, call)) }
    }

    pub fn error(&self, status: sys::hsa_status_t, call: &'static str) -> HsaError {
        HsaError { status, call, message: self.status_string(status) }
    }
}

/// The soft runtime's test controls (`soft::inject_fault` and its siblings), for the embedded
/// runtime or a drop-in loaded as ROCr, whose runtime is its own.
#[derive(Clone, Copy)]
pub enum SoftControls {
    Embedded,
    DropIn(rocr::DropInExtension),
}

// The queue pointer is a key: the drop-in looks it up among its queues (`runtime.queue(queue as
// usize)`) and never dereferences it, so these safe functions pass it on.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl SoftControls {
    /// The controls of the library the ROCr provider loads ([`rocr::library_candidates`]), opened
    /// without initializing it, so a configuration can be set before an engine's `hsa_init`.
    /// The library stays loaded for the process, as the provider's does. A library that is ROCr
    /// proper, not the drop-in, is [`LoadError::MissingSymbol`].
    pub fn drop_in() -> Result<Self, LoadError> {
        let library = rocr::RocrLibrary::load()?;
        let controls = library.drop_in.ok_or_else(|| LoadError::MissingSymbol {
            symbol: "aqueduct_soft_configure",
            reason: format!("{} is not the soft runtime's drop-in", library.path),
        })?;
        // Unloading could drop the configuration before the provider opens the library again.
        core::mem::forget(library);
        Ok(Self::DropIn(controls))
    }

    fn status(status: sys::hsa_status_t) -> Result<(), soft::ControlError> {
        match status {
            sys::status::SUCCESS => Ok(()),
            sys::status::ERROR_NOT_INITIALIZED => Err(soft::ControlError::NotInitialized),
            sys::status::ERROR_INVALID_QUEUE => Err(soft::ControlError::UnknownQueue),
            status => Err(soft::ControlError::Refused(status)),
        }
    }

    /// Sets the configuration the runtime starts with at its next initialization (a running
    /// one keeps its own until it shuts down).
    pub fn configure(self, config: &soft::SoftConfig) -> Result<(), soft::ControlError> {
        match self {
            Self::Embedded => {
                soft::configure(config.clone());
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
    pub fn queue_error_detail(self, queue: *const sys::hsa_queue_t) -> Result<Option<String>, soft::ControlError> {
        match self {
            Self::Embedded => soft::queue_error_detail(queue).map(|detail| detail.map(|(_, detail)| detail)),
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
        fault: soft::Fault,
    ) -> Result<(), soft::ControlError> {
        match self {
            Self::Embedded => soft::inject_fault(queue, packet_id, fault),
            Self::DropIn(controls) => {
                let (kind, argument) = fault.encode();
                // SAFETY: the drop-in only looks the queue up.
                Self::status(unsafe { (controls.inject_fault)(queue, packet_id, kind, argument) })
            }
        }
    }

    /// Lets every packet stalled on `queue` proceed.
    pub fn release_stall(self, queue: *const sys::hsa_queue_t) -> Result<(), soft::ControlError> {
        match self {
            Self::Embedded => soft::release_stall(queue),
            // SAFETY: as above.
            Self::DropIn(controls) => Self::status(unsafe { (controls.release_stall)(queue) }),
        }
    }

    /// Switches `queue` between strict, relaxed and retire-only execution.
    pub fn set_queue_mode(
        self,
        queue: *const sys::hsa_queue_t,
        mode: soft::ExecutionMode,
    ) -> Result<(), soft::ControlError> {
        match self {
            Self::Embedded => soft::set_queue_mode(queue, mode),
            // SAFETY: as above.
            Self::DropIn(controls) => Self::status(unsafe { (controls.set_queue_mode)(queue, mode.code()) }),
        }
    }
}

/// `hsa_status_string` through a table, with a fallback for codes the provider does not know.
pub fn status_string(api: &HsaApi, status: sys::hsa_status_t) -> String {
    let mut text: *const core::ffi::c_char = core::ptr::null();
    // SAFETY: `text` is a valid out-pointer; hsa_status_string never needs hsa_init.
    let result = unsafe { (api.hsa_status_string)(status, &mut text) };
    if result == sys::status::SUCCESS && !text.is_null() {
        // SAFETY: providers return a NUL-terminated static string.
        unsafe { core::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned()
    } else {
        format!("unknown HSA status {status:#x}")
    }
}

impl Drop for Hsa {
    fn drop(&mut self) {
        // SAFETY: this Hsa holds one successful hsa_init reference.
        let status = unsafe { (self.api.hsa_shut_down)() };
        if status != sys::status::SUCCESS {
            tracing::warn!(status, "hsa_shut_down failed");
        }
    }
}

impl std::fmt::Debug for Hsa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hsa").field("kind", &self.kind).field("library_path", &self.library_path()).finish()
    }
}

/// The kernel driver's device node: without it no ROCr can open a GPU.
pub const KFD_PATH: &str = "/dev/kfd";

/// Why ROCr could not be brought up, in one line. Without /dev/kfd that is the whole story, and
/// ROCr's own answer (`hsa_init` fails with 0x1008 and a paragraph about resources) would only
/// hide it; otherwise ROCr's error as it is.
pub fn rocr_unusable_reason(error: &LoadError) -> String {
    if std::path::Path::new(KFD_PATH).exists() {
        format!("rocr: not usable: {error}")
    } else {
        format!("rocr: not usable: {KFD_PATH} is absent (no AMD GPU driver)")
    }
}

/// The provider `auto` chose, and why, in words a user can act on.
#[derive(Debug)]
pub struct Selection {
    pub hsa: Hsa,
    pub reason: String,
}

impl Hsa {
    /// ROCr when it loads, initializes and reports at least one GPU agent; otherwise the soft
    /// runtime (with `soft_config`). The reason names what ruled ROCr out.
    pub fn auto(soft_config: soft::SoftConfig) -> HsaResult<Selection> {
        let rocr_problem = match Self::rocr() {
            Ok(rocr) => match rocr.gpu_agents() {
                Ok(agents) if !agents.is_empty() => {
                    let reason = format!(
                        "ROCr loaded from {} reports {} GPU agent(s)",
                        rocr.library_path().unwrap_or("?"),
                        agents.len()
                    );
                    return Ok(Selection { hsa: rocr, reason });
                }
                Ok(_) => format!("ROCr loaded from {} but reports no GPU agents", rocr.library_path().unwrap_or("?")),
                Err(error) => format!("ROCr agent discovery failed: {error}"),
            },
            Err(error) => rocr_unusable_reason(&error),
        };
        let hsa = Self::soft(soft_config)?;
        Ok(Selection { hsa, reason: format!("{rocr_problem}; using the embedded soft HSA runtime") })
    }
}
