//! Errors: a failed HSA call carries its status and the provider's status string.

use core::fmt;

use crate::sys::hsa_status_t;

/// A non-success `hsa_status_t`, with the text the provider gives for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HsaError {
    pub status: hsa_status_t,
    /// The HSA function that returned the status.
    pub call: &'static str,
    pub message: String,
}

impl fmt::Display for HsaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed with HSA status {:#x}: {}", self.call, self.status, self.message)
    }
}

impl std::error::Error for HsaError {}

/// Why a provider could not be brought up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// No candidate library could be opened; each attempt is listed with its reason.
    LibraryNotFound { attempts: Vec<(String, String)> },
    /// The library opened but lacks an entry point the engine needs.
    MissingSymbol { symbol: &'static str, reason: String },
    /// `hsa_init` or a later bring-up call failed (e.g. 0x1008 when there is no /dev/kfd).
    Hsa(HsaError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LibraryNotFound { attempts } => {
                write!(f, "no candidate library could be loaded:")?;
                for (path, reason) in attempts {
                    write!(f, " [{path}: {reason}]")?;
                }
                Ok(())
            }
            Self::MissingSymbol { symbol, reason } => {
                write!(f, "the HSA runtime library does not export `{symbol}` ({reason})")
            }
            Self::Hsa(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for LoadError {}

impl From<HsaError> for LoadError {
    fn from(error: HsaError) -> Self {
        Self::Hsa(error)
    }
}

pub type HsaResult<T> = Result<T, HsaError>;
