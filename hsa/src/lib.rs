//! aqueduct-hsa: one HSA function table, two providers, thin `Result` wrappers.
//!
//! - [`sys`]: C types, constants and [`sys::HsaApi`], the table of every entry point the engine
//!   uses, with ROCr's exact names and signatures.
//! - [`rocr`]: ROCr (`libhsa-runtime64`) loaded at run time with libloading.
//! - The soft HSA runtime, the other provider, is its own crate (`aqueduct-soft-hsa`): it fills
//!   the same table and opens an [`Hsa`] through [`Hsa::from_static_table`].
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
pub mod sys;
mod wrappers;

use std::sync::Arc;

pub use error::{HsaError, HsaResult, LoadError};
pub use executable::{DispatchDescriptor, Executable, ExecutableError};
pub use rocr_facts::clip_cu_mask;
pub use sys::HsaApi;
pub use wrappers::{AgentInfo, KernelSymbol, PoolInfo, PoolKindInfo, PoolReach};

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
    /// Initializes the provider whose entry points are `api` (the soft runtime's table, which
    /// lives for the process) with one `hsa_init` reference, which the returned `Hsa` releases
    /// when dropped. A failed `hsa_init` leaves nothing to shut down.
    ///
    /// # Safety
    /// Every function in `api` keeps the C contract of the `hsa.h` entry point it is named for.
    pub unsafe fn from_static_table(api: &'static HsaApi, kind: ProviderKind) -> HsaResult<Self> {
        let hsa = Self { api, kind, library: None };
        // SAFETY: hsa_init has no preconditions; the table keeps its contract (the caller's).
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

    /// The vendor extension of the loaded library when it is the soft runtime's drop-in, not
    /// ROCr proper (`None` for ROCr and for an embedded provider).
    pub fn drop_in_extension(&self) -> Option<rocr::DropInExtension> {
        self.library.as_ref()?.drop_in
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
    /// ROCr when it loads, initializes and reports at least one GPU agent; otherwise `Err` with
    /// the reason, in words a user can act on, so the caller can open another provider (the
    /// soft runtime's `auto` does).
    pub fn rocr_with_gpu() -> Result<Selection, String> {
        match Self::rocr() {
            Ok(rocr) => match rocr.gpu_agents() {
                Ok(agents) if !agents.is_empty() => {
                    let reason = format!(
                        "ROCr loaded from {} reports {} GPU agent(s)",
                        rocr.library_path().unwrap_or("?"),
                        agents.len()
                    );
                    Ok(Selection { hsa: rocr, reason })
                }
                Ok(_) => {
                    Err(format!("ROCr loaded from {} but reports no GPU agents", rocr.library_path().unwrap_or("?")))
                }
                Err(error) => Err(format!("ROCr agent discovery failed: {error}")),
            },
            Err(error) => Err(rocr_unusable_reason(&error)),
        }
    }
}
