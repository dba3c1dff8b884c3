//! Soft runtime configuration: which agents exist and how queues execute.
//!
//! Set it with [`configure`] before `hsa_init`; it takes effect at the next initialization (when
//! the init count goes from 0 to 1), exactly as ROCr reads its environment at init.

use std::ops::RangeInclusive;
use std::sync::Mutex;

/// How a queue's packet processor treats packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    /// Packets run one at a time, in order.
    #[default]
    Strict,
    /// Consecutive dispatches without the barrier bit overlap: they run in reverse order and
    /// retire out of order, so a missing barrier bit shows up as wrong results.
    Relaxed,
    /// Packets retire (signals, timestamps, barriers) without running kernels, so host cost can
    /// be measured alone.
    RetireOnly,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoftAgentConfig {
    /// Marketing-style agent name (`HSA_AGENT_INFO_NAME` is limited to 63 bytes).
    pub name: String,
    /// Full ISA name, e.g. `amdgcn-amd-amdhsa--gfx1100`.
    pub isa_name: String,
    pub wavefront_size: u32,
    pub compute_units: u32,
    /// Size of the device-local (coarse-grained) pool in bytes.
    pub device_memory_bytes: u64,
}

impl SoftAgentConfig {
    pub fn gfx1100() -> Self {
        Self::with_isa("amdgcn-amd-amdhsa--gfx1100", 32)
    }

    pub fn with_isa(isa_name: &str, wavefront_size: u32) -> Self {
        let processor = isa_name.rsplit("--").next().unwrap_or(isa_name);
        let processor = processor.split(':').next().unwrap_or(processor);
        Self {
            name: processor.to_string(),
            isa_name: isa_name.to_string(),
            wavefront_size,
            compute_units: 8,
            device_memory_bytes: 16 << 30,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoftConfig {
    pub agents: Vec<SoftAgentConfig>,
    /// The mode new queues start in; [`crate::soft::set_queue_mode`] changes one queue.
    pub default_mode: ExecutionMode,
    /// Largest queue, in packets (`HSA_AGENT_INFO_QUEUE_MAX_SIZE`).
    pub queue_max_packets: u32,
    /// Size of the host fine-grained and kernarg pools, in bytes.
    pub host_memory_bytes: u64,
    /// Code-object major versions the loader accepts; a load of another version fails with
    /// HSA_STATUS_ERROR_INVALID_CODE_OBJECT, as ROCr's does. Default 1..=6: ROCr's loader
    /// (`ExecutableImpl::LoadCodeObject` in loader/executable.cpp) refuses `majorVersion < 1 ||
    /// majorVersion > 6`; before early 2024 its bound was 5, so `4..=5` models an older ROCr.
    /// (This runtime's parser reads v4 to v6 only, so v1 to v3 fail earlier, at reader creation.)
    pub code_object_versions: RangeInclusive<u32>,
}

impl Default for SoftConfig {
    fn default() -> Self {
        Self {
            agents: vec![SoftAgentConfig::gfx1100()],
            default_mode: ExecutionMode::Strict,
            queue_max_packets: 1 << 17,
            host_memory_bytes: 16 << 30,
            code_object_versions: 1..=6,
        }
    }
}

pub(crate) static PENDING_CONFIG: Mutex<Option<SoftConfig>> = Mutex::new(None);

/// Sets the configuration used at the next initialization of the soft runtime.
pub fn configure(config: SoftConfig) {
    *PENDING_CONFIG.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(config);
}

pub(crate) fn current() -> SoftConfig {
    PENDING_CONFIG.lock().unwrap_or_else(|poison| poison.into_inner()).clone().unwrap_or_default()
}
