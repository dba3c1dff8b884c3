//! aqueduct-soft-hsa, the soft HSA runtime: a CPU implementation of the HSA subset aqueduct uses, with ROCr's
//! memory-level ABI (packets in real ring memory, `amd_queue_t`, `amd_signal_t`, a DOORBELL signal
//! whose hardware doorbell pointer the producer stores to directly).
//!
//! It is product code: the embedded default provider when no AMD GPU exists. Its parts, one file
//! each: [`config`] (agents and modes), `runtime` (init/shutdown, agents, handles),
//! `memory` (pools, allocations and access grants), [`clock`] (system and device clocks),
//! `signals`, `queue` (ring, doorbell, processor thread), `processor` (packet execution),
//! `executable` (code objects, symbols, host build registry), [`faults`] (injection), and
//! [`entry`] and [`exports`] (the entry points that fill the HSA table, each
//! `extern "C"` export behind a panic guard).

/// Caches, exception policies, ISA lookup and wavefronts.
pub mod agent_details;
pub(crate) mod async_handlers;
pub(crate) mod claims;
pub mod clock;
pub mod config;
/// The asynchronous copies, linear and rectangular.
pub mod copies;
/// `_amdgpu_r_debug`: the loaded code objects, for debuggers.
pub mod debugger;
/// The entry points only the drop-in exports (beyond the engine's table).
pub mod drop_in;
/// The C library's exports (`libhsa-runtime64.so.1`, built by `scripts/build-libhsa.sh`).
#[cfg(feature = "drop-in-library")]
pub mod drop_in_library;
/// The entry points' bodies, with the C signatures of `hsa.h`; [`exports`] wraps each as the
/// `extern "C"` function [`SOFT_API`] binds and the shared library (`drop_in_library.rs`) exports.
pub mod entry;
pub(crate) mod executable;
/// Executable and code-object entry points beyond the engine's.
pub mod executable_api;
pub mod exports;
/// Extension support, the AMD loader extension, and the absent image and finalizer extensions.
pub mod extensions;
pub mod faults;
/// Each GPU model's hardware facts, from its published `rocminfo` dump.
pub mod gpu_models;
/// Locking client memory for the agents, and the coherency type.
pub mod host_memory;
/// Queues the client processes itself (`hsa_soft_queue_create`).
pub mod host_queue;
/// Sharing allocations and signals with other processes.
pub mod ipc;
/// Dispatches run by the gfx1100 interpreter (`SoftConfig::kernel_execution`).
pub(crate) mod isa_exec;
pub(crate) mod memory;
/// The memory-order variants of the signal and queue-index operations that only the drop-in
/// exports.
pub mod orders;
pub(crate) mod processor;
/// Opening the soft runtime as a provider of `aqueduct-hsa`'s table, and its test controls.
pub mod provider;
pub(crate) mod queue;
pub(crate) mod queue_slots;
/// The deprecated region API over the memory pools.
pub mod regions;
pub(crate) mod runtime;
pub(crate) mod scheduling;
/// A `memfd` behind memory shared with other processes.
pub(crate) mod shared_file;
pub(crate) mod signals;
pub(crate) mod waiters;
/// What a dispatch's kernel needs of the processor, run either way: its workgroups, its checks.
pub(crate) mod workgroups;

pub use config::{
    DEFAULT_DISPATCH_TIMEOUT, ExecutionMode, KernelExecution, SoftAgentConfig, SoftConfig, configure,
    default_processor_spin, parse_agents, set_default_agents,
};
pub use executable::{check_host_build, register_kernels, registered_kernel};
pub use exports::SOFT_API;
pub use faults::{
    ControlError, fault_code, inject_fault, live_objects, queue_error_detail, release_stall, set_queue_mode,
};
pub use provider::{SoftControls, auto, open, open_current, register_host_builds};
pub use queue::Fault;
pub use signals::{EVENT_LIMIT, interrupt_events};
